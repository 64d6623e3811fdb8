#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// JSON.parse + Ajv (npm; draft 2020-12, formats from ajv-formats asserted),
// the JavaScript validation stack, on the documents and schemas
// validation_benchmark writes with --write-inputs=DIR (DIR/manifest.json).
// Each document is timed as node_timing.mjs does: JSON.parse of the text and
// the compiled validator on the result, as a service receiving bytes does;
// MB/s are of the UTF-8 document, MB = 10^6 bytes, as Google Benchmark
// reports llmdlq's. Before timing, every document must be valid to Ajv.
//
// usage: node benchmarks/ajv_bench.mjs --inputs=DIR --node-prefix=DIR
//          [--repetitions=N] [--min-time=SECONDS] [--out=FILE.json] [--filter=REGEX]
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';

import { measure, peerOptions } from './node_timing.mjs';

const options = peerOptions(process.argv.slice(2), 'build/bench/validation_inputs');
const { repetitions, minTime, filter } = options;

const require = createRequire(path.resolve(options['node-prefix'], 'node_modules', '.package'));
const Ajv2020 = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default;
const versionOf = (name) => require(`${name}/package.json`).version;

// Formats ajv-formats does not define are declared to pass (Ajv refuses an
// unknown format otherwise); they are listed in the report, as the C++
// peers' unchecked formats are. llmdlq's `x-` annotations are declared as
// keywords without a check: content rules are not schema validation.
// `multipleOfPrecision` is Ajv's documented remedy for its floating-point
// `multipleOf` (12.34 / 0.01 is not an integer in binary): without it Ajv
// rejects ordinary amounts.
const ajvFormats = new Set(['date', 'time', 'date-time', 'duration', 'uri', 'uri-reference', 'uri-template',
  'url', 'email', 'hostname', 'ipv4', 'ipv6', 'regex', 'uuid', 'json-pointer', 'relative-json-pointer',
  'byte', 'int32', 'int64', 'float', 'double', 'password', 'binary']);

function schemaWords(schema, formats, annotations) {
  if (Array.isArray(schema)) {
    for (const s of schema) schemaWords(s, formats, annotations);
  } else if (schema && typeof schema === 'object') {
    for (const [k, v] of Object.entries(schema)) {
      if (k === 'format' && typeof v === 'string') formats.add(v);
      if (k.startsWith('x-')) annotations.add(k);
      if (k !== 'enum' && k !== 'const') schemaWords(v, formats, annotations);
    }
  }
}

function compile(schema) {
  const formats = new Set();
  const annotations = new Set();
  schemaWords(schema, formats, annotations);
  const unchecked = [...formats].filter((f) => !ajvFormats.has(f));
  const ajv = new Ajv2020({ allErrors: false, multipleOfPrecision: 9, formats: Object.fromEntries(unchecked.map((f) => [f, true])) });
  addFormats(ajv);
  for (const a of annotations) ajv.addKeyword({ keyword: a });
  return { validate: ajv.compile(schema), unchecked };
}

const manifest = JSON.parse(fs.readFileSync(path.join(options.inputs, 'manifest.json'), 'utf8'));
const validators = new Map();
const results = [];
for (const entry of manifest) {
  if (filter && !filter.test(entry.name)) continue;
  if (!validators.has(entry.schema)) {
    const compiled = compile(JSON.parse(fs.readFileSync(path.join(options.inputs, entry.schema), 'utf8')));
    validators.set(entry.schema, compiled);
    const note = compiled.unchecked.length ? `ignores: ${compiled.unchecked.map((f) => 'format:' + f).join(' ')}` : 'checks every format';
    console.log(`Ajv on ${entry.schema}: ${note}`);
  }
  const { validate, unchecked } = validators.get(entry.schema);
  const text = fs.readFileSync(path.join(options.inputs, entry.document), 'utf8');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (!validate(JSON.parse(text))) {
    console.error(`Ajv rejects ${entry.name}: ${JSON.stringify(validate.errors)}`);
    console.error('Not timing: Ajv does not agree on the inputs.');
    process.exit(1);
  }
  let sink = 0;
  const run = () => {
    sink += validate(JSON.parse(text)) ? 1 : 0;
  };
  const m = measure(run, { repetitions, minTime });
  const result = { name: `ajv/${entry.name}`, bytes, ...m, mbps: (bytes / m.cpu_ns) * 1e3, unchecked_formats: unchecked };
  results.push(result);
  console.log(`${result.name.padEnd(32)} ${String(bytes).padStart(7)} B ${result.mbps.toFixed(1).padStart(8)} MB/s ` +
              `${(result.cpu_ns / 1e3).toFixed(2).padStart(10)} us  (${m.iterations} x ${repetitions})`);
  if (sink === 0) throw new Error('unreachable: every timed call validated');
}

const report = {
  context: {
    date: new Date().toISOString(),
    node: process.version,
    v8: process.versions.v8,
    ajv: versionOf('ajv'),
    'ajv-formats': versionOf('ajv-formats'),
    repetitions,
    min_time_s: minTime,
    time: 'CPU time per document (process.cpuUsage, user + system), median of the repetitions',
  },
  benchmarks: results,
};
if (options.out) fs.writeFileSync(options.out, JSON.stringify(report, null, 2) + '\n');
