#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// jsonrepair (npm) on the inputs repair_benchmark writes with
// --write-inputs=DIR, timed as node_timing.mjs does; the median CPU time per
// document gives MB/s, MB = 10^6 bytes of the UTF-8 input, as Google
// Benchmark reports llmdlq's.
//
// usage: node benchmarks/jsonrepair_bench.mjs --inputs=DIR --node-prefix=DIR
//          [--repetitions=N] [--min-time=SECONDS] [--out=FILE.json] [--filter=REGEX]
import fs from 'node:fs';
import process from 'node:process';

import { measure, peerOptions } from './node_timing.mjs';
import { generatedInputs, jsonEqual, loadJsonrepair } from './repair_common.mjs';

const options = peerOptions(process.argv.slice(2), 'build/bench/repair_inputs');
const { repetitions, minTime, filter } = options;

const { jsonrepair, version } = await loadJsonrepair(options['node-prefix']);

const results = [];
for (const input of generatedInputs(options.inputs)) {
  if (filter && !filter.test(input.name)) continue;
  const bytes = Buffer.byteLength(input.input, 'utf8');
  const result = { name: `jsonrepair/${input.name}`, bytes };
  let output;
  try {
    output = jsonrepair(input.input);
  } catch (e) {
    result.error = e.message;
  }
  if (output !== undefined) {
    let parsed;
    try {
      parsed = JSON.parse(output);
    } catch {
      parsed = undefined;
    }
    result.correct = parsed !== undefined && jsonEqual(parsed, JSON.parse(input.expected));
    result.unchanged = output === input.input;
  }
  // Time whatever jsonrepair does with the input, throwing included: the
  // table marks results that are not the intended document.
  let sink = 0;
  const run = () => {
    try {
      sink += jsonrepair(input.input).length;
    } catch {
      sink += 1;
    }
  };
  const m = measure(run, { repetitions, minTime });
  Object.assign(result, m);
  result.mbps = (bytes / m.cpu_ns) * 1e3;
  const n = m.iterations;
  results.push(result);
  const mark = result.error ? `throws: ${result.error}` : result.correct ? 'ok' : 'not the intended document';
  console.log(`${result.name.padEnd(40)} ${String(bytes).padStart(7)} B ${result.mbps.toFixed(2).padStart(9)} MB/s ` +
              `${(result.cpu_ns / 1e3).toFixed(1).padStart(11)} us  (${n} x ${repetitions}; ${mark})`);
}

const report = {
  context: {
    date: new Date().toISOString(),
    node: process.version,
    v8: process.versions.v8,
    jsonrepair: version,
    repetitions,
    min_time_s: minTime,
    time: 'CPU time per document (process.cpuUsage, user + system), median of the repetitions',
  },
  benchmarks: results,
};
if (options.out) fs.writeFileSync(options.out, JSON.stringify(report, null, 2) + '\n');
