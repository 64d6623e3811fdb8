// SPDX-License-Identifier: MIT
// CPU-time measurement for the JavaScript peers (jsonrepair, Ajv), the same
// way for each: a warm-up so that V8 has optimised the code, then timed
// repetitions of at least `minTime` seconds; the median repetition's CPU
// time per call (process.cpuUsage: user + system of all of node's threads,
// so garbage collection counts), as Google Benchmark reports llmdlq's.
import process from 'node:process';

import { parseOptions } from './repair_common.mjs';

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

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Times `fn`: a warm-up of at least max(minTime, 0.2) s, then `repetitions`
 * repetitions. Returns {iterations, cpu_ns, wall_ns (medians per call),
 * cpu_ns_repetitions}.
 */
export function measure(fn, { repetitions, minTime }) {
  const warmUntil = process.hrtime.bigint() + BigInt(Math.round(Math.max(minTime, 0.2) * 1e9));
  do fn(); while (process.hrtime.bigint() < warmUntil);
  const n = iterationsFor(fn, minTime);
  const cpu = [];
  const wall = [];
  for (let r = 0; r < repetitions; ++r) {
    const [c, w] = timed(fn, n);
    cpu.push(c / n);
    wall.push(w / n);
  }
  return { iterations: n, cpu_ns: median(cpu), wall_ns: median(wall), cpu_ns_repetitions: cpu };
}

/**
 * The options every peer script takes: --inputs, --node-prefix,
 * --repetitions, --min-time, --out and --filter (a regex on input names).
 */
export function peerOptions(argv, defaultInputs) {
  const options = parseOptions(argv, {
    inputs: defaultInputs,
    'node-prefix': 'build/bench/node',
    repetitions: '5',
    'min-time': '0.5',
    out: '',
    filter: '',
  });
  return {
    ...options,
    repetitions: Math.max(1, Number(options.repetitions)),
    minTime: Number(options['min-time']),
    filter: options.filter ? new RegExp(options.filter) : null,
  };
}
