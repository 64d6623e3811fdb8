#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// jsonrepair (npm) on the inputs repair_benchmark writes with
// --write-inputs=DIR: per input, a warm-up (so that V8 has optimised the
// repair), then timed repetitions of at least --min-time seconds each; the
// median repetition's CPU time per document (process.cpuUsage: user +
// system, all of node's threads, so GC work counts) gives MB/s, MB = 10^6
// bytes of the UTF-8 input, as Google Benchmark reports llmdlq's.
//
// usage: node benchmarks/jsonrepair_bench.mjs --inputs=DIR --node-prefix=DIR
//          [--repetitions=N] [--min-time=SECONDS] [--out=FILE.json] [--filter=REGEX]
import fs from 'node:fs';
import process from 'node:process';

import { generatedInputs, jsonEqual, loadJsonrepair, parseOptions } from './repair_common.mjs';

const options = parseOptions(process.argv.slice(2), {
  inputs: 'build/bench/repair_inputs',
  'node-prefix': 'build/bench/node',
  repetitions: '5',
  'min-time': '0.5',
  out: '',
  filter: '',
});
const repetitions = Math.max(1, Number(options.repetitions));
const minTime = Number(options['min-time']);
const filter = options.filter ? new RegExp(options.filter) : null;

const { jsonrepair, version } = await loadJsonrepair(options['node-prefix']);

function cpuNs() {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1e3;
}

/** Runs `fn` `n` times; returns [CPU ns, wall ns]. */
function timed(fn, n) {
  const wall0 = process.hrtime.bigint();
  const cpu0 = cpuNs();
  for (let i = 0; i < n; ++i) fn();
  return [cpuNs() - cpu0, Number(process.hrtime.bigint() - wall0)];
}

/** Iterations per repetition: enough for `seconds` of wall time, judged on a trial run. */
function iterationsFor(fn, seconds) {
  let n = 1;
  for (;;) {
    const [, wall] = timed(fn, n);
    if (wall >= 0.05e9 || n >= 1 << 24) return Math.max(1, Math.ceil((n * seconds * 1e9) / Math.max(wall, 1)));
    n *= 4;
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

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
  const warmUntil = process.hrtime.bigint() + BigInt(Math.round(Math.max(minTime, 0.2) * 1e9));
  do run(); while (process.hrtime.bigint() < warmUntil);
  const n = iterationsFor(run, minTime);
  const cpu = [];
  const wall = [];
  for (let r = 0; r < repetitions; ++r) {
    const [c, w] = timed(run, n);
    cpu.push(c / n);
    wall.push(w / n);
  }
  result.iterations = n;
  result.cpu_ns = median(cpu);
  result.wall_ns = median(wall);
  result.mbps = (bytes / result.cpu_ns) * 1e3;
  result.cpu_ns_repetitions = cpu;
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
