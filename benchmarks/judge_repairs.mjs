#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Judges jsonrepair and llmdlq on the same broken inputs: each repair is
// right when it parses to the document the model meant (equal as JSON
// values, repair_common.mjs), or, for text that holds no JSON, when the tool
// refuses. Also notes which tool rewrites input that was already valid JSON
// and which turns prose into a JSON string.
//
// Inputs: the generated failure kinds (repair_benchmark --write-inputs=DIR:
// a kind is right when all its sizes are) and the hand-written cases in
// benchmarks/repair_cases (NAME.input.txt beside NAME.expected.json, or
// NAME.expected-error.txt when the right outcome is an error).
// llmdlq runs as `llmdlq repair --json --allow lossless,syntactic,lossy`.
//
// usage: node benchmarks/judge_repairs.mjs --llmdlq=PATH --node-prefix=DIR
//          [--inputs=DIR] [--cases=DIR] [--out=FILE.json]
// Prints a markdown table; exit status 0 whatever the verdicts.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';

import { generatedInputs, jsonEqual, loadJsonrepair, parseOptions } from './repair_common.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const options = parseOptions(process.argv.slice(2), {
  llmdlq: 'build/bench/tools/llmdlq',
  'node-prefix': 'build/bench/node',
  inputs: '',
  cases: path.join(here, 'repair_cases'),
  out: '',
});
const { jsonrepair, version } = await loadJsonrepair(options['node-prefix']);

/** What a tool made of a text: {json} or {error}. */
function runJsonrepair(text) {
  try {
    return { json: jsonrepair(text) };
  } catch (e) {
    return { error: e.message };
  }
}

function runLlmdlq(file) {
  const run = spawnSync(options.llmdlq, ['repair', '--json', '--allow', 'lossless,syntactic,lossy', file], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (run.error) throw run.error;
  let report;
  try {
    report = JSON.parse(run.stdout);
  } catch {
    throw new Error(`${options.llmdlq} printed no JSON for ${file} (status ${run.status}): ${run.stderr}`);
  }
  const codes = [...new Set(report.actions.map((a) => a.code))];
  if (report.ok) return { json: report.json, codes };
  return { error: `${report.error.code}: ${report.error.message} (offset ${report.error.offset})`, codes };
}

function parseOrUndefined(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `text` on one line (newlines and tabs as \\n and \\t), cut to `limit` characters. */
const excerpt = (text, limit = 70) => {
  const flat = text.replaceAll('\n', '\\n').replaceAll('\r', '\\r').replaceAll('\t', '\\t');
  const chars = [...flat];
  return chars.length <= limit ? flat : chars.slice(0, limit).join('') + '…';
};

/**
 * One verdict: ok, and when not ok a one-line note; `changed` when the
 * input was valid JSON and the output differs from it byte for byte;
 * `proseToString` when the output is a lone JSON string.
 */
function judge(result, input, expected) {
  const inputValid = parseOrUndefined(input) !== undefined;
  const verdict = { ok: false, note: '' };
  if (result.error !== undefined) {
    verdict.ok = expected === undefined;
    verdict.note = verdict.ok ? '' : `fails: ${result.error}`;
  } else {
    const got = parseOrUndefined(result.json);
    if (got === undefined) {
      verdict.note = `returns invalid JSON: ${excerpt(result.json)}`;
    } else if (expected === undefined) {
      verdict.note = `returns ${excerpt(result.json)} instead of an error`;
    } else if (jsonEqual(got, expected)) {
      verdict.ok = true;
    } else {
      verdict.note = `returns ${excerpt(result.json)}`;
    }
    verdict.proseToString = typeof got === 'string' && !inputValid;
    verdict.changed = inputValid && result.json !== input;
  }
  if (result.codes) verdict.codes = result.codes;
  return verdict;
}

const rows = [];

// The generated kinds: one row per kind, right when every size is.
if (options.inputs) {
  const byKind = new Map();
  for (const g of generatedInputs(options.inputs)) {
    const expected = JSON.parse(g.expected);
    const verdicts = {
      jsonrepair: judge(runJsonrepair(g.input), g.input, expected),
      llmdlq: judge(runLlmdlq(g.inputPath), g.input, expected),
    };
    if (!byKind.has(g.kind)) byKind.set(g.kind, { name: g.kind, generated: true, sizes: [], tools: {} });
    const row = byKind.get(g.kind);
    row.sizes.push(g.size);
    row.input = row.input ?? g.input;
    for (const [tool, v] of Object.entries(verdicts)) {
      const t = (row.tools[tool] ??= { ok: true, note: '', changed: false, proseToString: false, codes: [] });
      if (!v.ok && t.ok) t.note = `${g.size}: ${v.note}`;
      t.ok &&= v.ok;
      t.changed ||= !!v.changed;
      t.proseToString ||= !!v.proseToString;
      t.codes = [...new Set([...t.codes, ...(v.codes ?? [])])];
    }
  }
  rows.push(...byKind.values());
}

// The hand-written cases, in name order.
const caseNames = fs.readdirSync(options.cases)
  .filter((f) => f.endsWith('.input.txt'))
  .map((f) => f.slice(0, -'.input.txt'.length))
  .sort();
for (const name of caseNames) {
  const inputPath = path.join(options.cases, `${name}.input.txt`);
  const input = fs.readFileSync(inputPath, 'utf8');
  const expectedPath = path.join(options.cases, `${name}.expected.json`);
  const expected = fs.existsSync(expectedPath) ? JSON.parse(fs.readFileSync(expectedPath, 'utf8')) : undefined;
  if (expected === undefined && !fs.existsSync(path.join(options.cases, `${name}.expected-error.txt`))) {
    throw new Error(`${name}: neither ${name}.expected.json nor ${name}.expected-error.txt`);
  }
  rows.push({
    name,
    generated: false,
    input,
    tools: {
      jsonrepair: judge(runJsonrepair(input), input, expected),
      llmdlq: judge(runLlmdlq(inputPath), input, expected),
    },
  });
}

// The table.
const mark = (v) => (v.ok ? '✓' : '✗');
// Inline code that may hold backticks, in a table cell.
const code = (text) => (text ? `\`\` ${text.replaceAll('|', '\\|')} \`\`` : '');
console.log(`| case | input | jsonrepair ${version} | llmdlq | llmdlq's actions | note on each ✗ |`);
console.log('|---|---|---|---|---|---|');
for (const row of rows) {
  const notes = Object.entries(row.tools)
    .filter(([, v]) => !v.ok)
    .map(([tool, v]) => `${tool} ${v.note}`);
  const label = row.generated ? `**${row.name}** (generated, ${row.sizes.join(', ')})` : row.name;
  const input = row.generated ? '' : code(excerpt(row.input, 60));
  const codes = row.tools.llmdlq.codes?.join(', ') ?? '';
  console.log(`| ${label} | ${input} | ${mark(row.tools.jsonrepair)} | ${mark(row.tools.llmdlq)} | ${codes} | ` +
              `${notes.map(code).join('; ')} |`);
}
const totals = Object.fromEntries(['jsonrepair', 'llmdlq'].map((t) => [t, rows.filter((r) => r.tools[t].ok).length]));
console.log(`\nRight: jsonrepair ${totals.jsonrepair}/${rows.length}, llmdlq ${totals.llmdlq}/${rows.length}.`);
for (const tool of ['jsonrepair', 'llmdlq']) {
  const changed = rows.filter((r) => r.tools[tool].changed).map((r) => r.name);
  const prose = rows.filter((r) => r.tools[tool].proseToString).map((r) => r.name);
  console.log(`${tool}: rewrites valid JSON in ${changed.length ? changed.join(', ') : 'no case'}; ` +
              `turns prose into a JSON string in ${prose.length ? prose.join(', ') : 'no case'}.`);
}

if (options.out) {
  fs.writeFileSync(options.out, JSON.stringify({ jsonrepair: version, rows: rows.map(({ input, ...r }) => r) }, null, 2) + '\n');
}
