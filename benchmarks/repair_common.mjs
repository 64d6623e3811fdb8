// SPDX-License-Identifier: MIT
// Shared by jsonrepair_bench.mjs and judge_repairs.mjs: loading jsonrepair
// from the npm prefix scripts/bench installs it in, command-line options,
// and equality of parsed JSON values.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** `--name=value` options into an object; `--flag` alone is true. */
export function parseOptions(argv, defaults) {
  const options = { ...defaults };
  for (const arg of argv) {
    const m = /^--([^=]+)(?:=(.*))?$/s.exec(arg);
    if (!m || !(m[1] in defaults)) {
      throw new Error(`unknown argument '${arg}' (options: ${Object.keys(defaults).map((k) => '--' + k).join(' ')})`);
    }
    options[m[1]] = m[2] ?? true;
  }
  return options;
}

/** jsonrepair's ESM build from an `npm install --prefix PREFIX jsonrepair`, and its version. */
export async function loadJsonrepair(prefix) {
  const dir = path.resolve(prefix, 'node_modules', 'jsonrepair');
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const entry = manifest.exports?.['.']?.import ?? manifest.module;
  const module = await import(pathToFileURL(path.join(dir, entry)).href);
  return { jsonrepair: module.jsonrepair, version: manifest.version };
}

/**
 * Equality of parsed JSON values: objects as unordered maps, arrays in
 * order, numbers as doubles (so 0.00 equals 0, as JSON.parse reads them).
 */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

/** The failure kinds and sizes of repair_inputs.hpp, in its order. */
export const KINDS = [
  'valid', 'trailing_commas', 'missing_commas', 'single_quotes', 'unquoted_keys', 'python_literals',
  'comments', 'control_characters', 'markdown_fence_prose', 'truncated',
];
export const SIZES = ['300B', '1KB', '16KB', '256KB'];

/** The generated inputs in DIR (`<kind>.<size>.input.txt` + `.expected.json`), kinds and sizes in order. */
export function generatedInputs(dir) {
  const inputs = [];
  for (const size of SIZES) {
    for (const kind of KINDS) {
      const stem = path.join(dir, `${kind}.${size}`);
      if (!fs.existsSync(`${stem}.input.txt`)) continue;
      inputs.push({
        kind, size, name: `${kind}/${size}`,
        inputPath: `${stem}.input.txt`,
        input: fs.readFileSync(`${stem}.input.txt`, 'utf8'),
        expected: fs.readFileSync(`${stem}.expected.json`, 'utf8'),
      });
    }
  }
  if (inputs.length === 0) throw new Error(`no <kind>.<size>.input.txt in ${dir}`);
  return inputs;
}
