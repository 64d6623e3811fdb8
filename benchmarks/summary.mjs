#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// One table from one run: reads the results scripts/bench --summary leaves in
// DIR (Google Benchmark's JSON per binary, ajv_bench.json,
// jsonrepair_bench.json, blaze_bench.json, run.json) and prints, as
// Markdown, llmdlq against the parse floor and every peer per size, llmdlq
// against Blaze on the catalogue-shaped cases, the dead-letter and success
// paths, thread scaling and repair, each with its target and whether the run
// met it. With --readme=FILE the text replaces what stands between the
// `<!-- summary:begin -->` and `<!-- summary:end -->` lines of FILE.
//
// usage: node benchmarks/summary.mjs --results=DIR [--readme=FILE]
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';

import { parseOptions } from './repair_common.mjs';

const options = parseOptions(process.argv.slice(2), { results: 'build/bench/results', readme: '' });
const dir = options.results;

function load(name) {
  const file = path.join(dir, name);
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null;
}

// ---------------------------------------------------------------------------
// Reading Google Benchmark's reports: medians by run name.

/** Median rows of a Google Benchmark report by run name (thread runs keep their `/threads:N`). */
function medians(report) {
  const rows = new Map();
  // One repetition leaves no aggregates: its iterations are the medians.
  const single = !(report?.benchmarks ?? []).some((b) => b.run_type === 'aggregate');
  for (const b of report?.benchmarks ?? []) {
    if (b.error_occurred) {
      rows.set(b.run_name ?? b.name, { error: b.error_message ?? 'error' });
      continue;
    }
    if (single ? b.run_type !== 'iteration' : b.run_type !== 'aggregate' || b.aggregate_name !== 'median') continue;
    const scale = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 }[b.time_unit] ?? 1;
    rows.set(b.run_name, {
      ...b,
      cpu_ns: b.cpu_time * scale,
      real_ns: b.real_time * scale,
      mbps: (b.bytes_per_second ?? 0) / 1e6,
    });
  }
  return rows;
}

/** `users_16KB` -> ['users', '16KB']; `16KB` -> ['receipt', '16KB']. */
function familyAndSize(label) {
  const m = /^(?:(.*)_)?(\d+(?:B|KB|MB))$/.exec(label);
  return m ? [m[1] ?? 'receipt', m[2]] : [null, label];
}

const SIZE_ORDER = ['288B', '300B', '1KB', '4KB', '16KB', '256KB', '258KB'];
const bySize = (a, b) => {
  const ia = SIZE_ORDER.indexOf(a);
  const ib = SIZE_ORDER.indexOf(b);
  return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
};
const unique = (xs) => [...new Set(xs)];

// ---------------------------------------------------------------------------
// Formatting.

const fixed = (x, d) => (x == null || !Number.isFinite(x) ? '-' : x.toFixed(d));
const thousands = (x) => Math.round(x).toLocaleString('en-US');
const mbps = (x) => (x == null ? '-' : x >= 100 ? thousands(x) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const ratio = (x) => (x == null || !Number.isFinite(x) ? '-' : x >= 100 ? `${thousands(x)}×` : `${x.toFixed(x >= 10 ? 1 : 2)}×`);
const yes = (ok) => (ok == null ? '-' : ok ? 'met' : '**not met**');

function table(header, rows) {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`,
          ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

const out = [];
const targets = [];  // [target, measured, met]
const say = (...lines) => out.push(...lines);

// ---------------------------------------------------------------------------
// The run.

const run = load('run.json') ?? {};
say(`One run of \`scripts/bench --summary\`${run.repetitions ? ` (${run.repetitions} repetitions, medians)` : ''}` +
    `, ${run.started ?? '?'} to ${run.finished ?? '?'}, at commit \`${run.commit ?? '?'}\`` +
    `${run.dirty ? ' with uncommitted changes' : ''}, on:`, '');
say(`- ${run.cpu ?? '?'}, ${run.cpus ?? '?'} CPUs; ${run.os ?? '?'}, ${run.compiler ?? '?'}, Release (\`-O3\`); ` +
    `load average ${run.load_start ?? '?'} at the start, ${run.load_end ?? '?'} at the end.`);
const ajvReport = load('ajv_bench.json');
const jrReport = load('jsonrepair_bench.json');
const blazeReport = load('blaze_bench.json');
const peers = [run.simdjson && `simdjson ${run.simdjson}`, run.rapidjson && `RapidJSON ${run.rapidjson}`,
  run.valijson && `valijson ${run.valijson}`,
  ajvReport && `Ajv ${ajvReport.context.ajv} with ajv-formats ${ajvReport.context['ajv-formats']}`,
  jrReport && `jsonrepair ${jrReport.context.jsonrepair}`,
  blazeReport?.context && `Blaze ${blazeReport.context.blaze.slice(0, 12)} (${blazeReport.context.compiler.replace(/ \(.*$/, '')}, libc++, \`${blazeReport.context.mode}\`)`,
  (ajvReport ?? jrReport) && `node ${(ajvReport ?? jrReport).context.node}`].filter(Boolean);
if (peers.length) say(`- Peers: ${peers.join(', ')}.`);
say('- Times are CPU time per document (per call for latencies: wall time, p50/p99 within a repetition, ' +
    'median over repetitions). MB = 10^6 bytes. Ratios are of throughputs measured in the same run.', '');
const headerEnd = out.length;

// ---------------------------------------------------------------------------
// Validation: llmdlq against the parse floor and every peer.

const validation = medians(load('validation_benchmark.json'));
if (validation.size) {
  const cell = new Map();  // `${scenario}|${family}|${size}` -> row
  for (const [name, row] of validation) {
    const slash = name.indexOf('/');
    if (slash < 0) continue;
    const [family, size] = familyAndSize(name.slice(slash + 1));
    if (family) cell.set(`${name.slice(0, slash)}|${family}|${size}`, row);
  }
  const ajv = new Map();
  for (const b of ajvReport?.benchmarks ?? []) {
    const [, family, size] = b.name.split('/');
    ajv.set(`${family}|${size}`, b);
  }
  const families = unique([...cell.keys()].map((k) => k.split('|')[1]));
  say('## Validation: bytes in, verdict out', '');
  for (const family of families) {
    const sizes = unique([...cell.keys()].filter((k) => k.split('|')[1] === family).map((k) => k.split('|')[2])).sort(bySize);
    const get = (scenario, size) => cell.get(`${scenario}|${family}|${size}`);
    const mb = (scenario) => sizes.map((s) => {
      const r = get(scenario, s);
      return r?.error ? 'error' : r ? `${mbps(r.mbps)} MB/s · ${thousands(r.cpu_ns)} ns` : '-';
    });
    const over = (scenario, peer) => sizes.map((s) => {
      const a = get(scenario, s);
      const b = peer(s);
      return a?.mbps && b?.mbps ? a.mbps / b.mbps : null;
    });
    const rows = [];
    const scenarios = unique([...cell.keys()].filter((k) => k.split('|')[1] === family).map((k) => k.split('|')[0]));
    for (const scenario of scenarios) {
      const bold = scenario === 'llmdlq_validate' || scenario === 'llmdlq_is_valid_text';
      rows.push([bold ? `**\`${scenario}\`**` : `\`${scenario}\``, ...mb(scenario).map((c) => (bold ? `**${c}**` : c))]);
    }
    if (sizes.some((s) => ajv.has(`${family}|${s}`))) {
      rows.push(['JSON.parse + Ajv (node)', ...sizes.map((s) => {
        const b = ajv.get(`${family}|${s}`);
        return b ? `${mbps(b.mbps)} MB/s · ${thousands(b.cpu_ns)} ns` : '-';
      })]);
    }
    const bytes = sizes.map((s) => get('llmdlq_validate', s)?.doc_bytes ?? get('simdjson_parse_only', s)?.doc_bytes);
    say(`### \`${family}\` documents`, '');
    say(table(['scenario', ...sizes.map((s, i) => (bytes[i] ? `${s} (${thousands(bytes[i])} B)` : s))], rows), '');

    // llmdlq's two yes/no paths: parse then walk the tape (is_valid), and
    // validate while parsing (is_valid_text); a target is met by either.
    const floor = over('llmdlq_validate', (s) => get('simdjson_parse_only', s));
    const forward = over('llmdlq_is_valid_text', (s) => get('simdjson_parse_only', s));
    const ratioRows = [['llmdlq parse + is_valid / simdjson parse (floor; target ≥ 0.6)', ...floor.map((x) => fixed(x, 2))]];
    if (forward.some((x) => x != null)) {
      ratioRows.push(['llmdlq is_valid_text / simdjson parse (floor; target ≥ 0.6)', ...forward.map((x) => fixed(x, 2))]);
    }
    const best = sizes.map((s, i) => {
      const [a, b] = [floor[i], forward[i]];
      if (a == null && b == null) return null;
      return b != null && (a == null || b > a) ? {ratio: b, path: 'is_valid_text', row: get('llmdlq_is_valid_text', s)}
                                               : {ratio: a, path: 'parse + is_valid', row: get('llmdlq_validate', s)};
    });
    const peerRows = [
      ['llmdlq / JSON.parse + Ajv', (s) => ajv.get(`${family}|${s}`)],
      ['llmdlq / RapidJSON SAX', (s) => get('rapidjson_sax_validate', s)],
      ['llmdlq / valijson', (s) => get('valijson_validate', s)],
    ];
    for (const [title, peer] of peerRows) {
      const r = over('llmdlq_validate', peer);
      if (r.some((x) => x != null)) ratioRows.push([title, ...r.map(ratio)]);
    }
    const nf = over('llmdlq_validate_no_format', (s) => get('valijson_validate_no_format', s));
    if (nf.some((x) => x != null)) ratioRows.push(['llmdlq / valijson, both without format', ...nf.map(ratio)]);
    say(table(['throughput ratio', ...sizes], ratioRows), '');

    const measured = sizes.map((s, i) => [s, best[i]]).filter(([, b]) => b != null);
    if (measured.length) {
      targets.push([`validation ≥ 0.6 of the parse floor, \`${family}\`, every size (the faster yes/no path)`,
        measured.map(([s, b]) => `${s} ${fixed(b.ratio, 2)} (${b.path})`).join(', '), measured.every(([, b]) => b.ratio >= 0.6)]);
      const rates = measured.filter(([, b]) => b.row?.mbps);
      targets.push([`validation ≥ 1 GB/s, \`${family}\`, every size (the faster yes/no path)`,
        rates.map(([s, b]) => `${s} ${mbps(b.row.mbps)} MB/s`).join(', '), rates.every(([, b]) => b.row.mbps >= 1000)]);
    }
  }
  const compile = [...validation].filter(([name]) => name.endsWith('compile_receipt_schema'));
  if (compile.length) {
    say(table(['schema compile (receipt schema, text to validator)', 'time'],
      compile.map(([name, r]) => [`\`${name}\``, `${fixed(r.cpu_ns / 1e3, 1)} µs`])), '');
  }
}

// ---------------------------------------------------------------------------
// Catalogue-shaped cases: llmdlq against Blaze, from text and pre-parsed.

// Blaze's compile time / llmdlq's, geometric mean over the catalogue cases,
// in the first run of this comparison (at commit cce22c5, on the 2-core
// machine of benchmarks/README.md): the compile target is to stay at or
// above it, less 20 % for that machine's noise (two runs gave 22.5× and 25.6×).
const COMPILE_LEAD_BEFORE = 22.5;

const catalogReport = load('catalog_benchmark.json');
const catalog = medians(catalogReport);
if (catalog.size) {
  const blaze = blazeReport?.benchmarks ? medians(blazeReport) : new Map();
  const skipped = blazeReport?.skipped ?? (blazeReport ? null : 'not run');
  // In the corpus' order (the runs are interleaved, so the report's order is the shuffle's).
  const order = (catalogReport.context?.cases ?? '').split(',');
  const rank = (name) => (order.includes(name) ? order.indexOf(name) : order.length);
  const cases = [...catalog.keys()].filter((n) => n.startsWith('llmdlq_compile/')).map((n) => n.slice(15))
    .sort((a, b) => rank(a) - rank(b));
  const geomean = (xs) => (xs.length && xs.every((x) => x > 0) ? Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length) : null);
  const ok = (r) => (r && !r.error ? r : null);
  const rows = [];
  const errors = [];
  const measured = [];  // per case: the ratios
  for (const name of cases) {
    const get = (scenario) => ok(catalog.get(`${scenario}/${name}`));
    const tape = get('llmdlq_parse_is_valid');
    const forward = get('llmdlq_is_valid_text');
    const parsed = get('llmdlq_pre_parsed');
    const compile = get('llmdlq_compile');
    const b = (scenario) => blaze.get(`${scenario}/${name}`);
    for (const scenario of ['blaze_compile', 'blaze_from_text', 'blaze_pre_parsed']) {
      if (b(scenario)?.error && !errors.some((e) => e[0] === name)) errors.push([name, b(scenario).error]);
    }
    for (const scenario of ['llmdlq_compile', 'llmdlq_parse_is_valid', 'llmdlq_is_valid_text', 'llmdlq_pre_parsed']) {
      const r = catalog.get(`${scenario}/${name}`);
      if (r?.error) errors.push([name, `${scenario}: ${r.error}`]);
    }
    const bText = ok(b('blaze_from_text'));
    const bParsed = ok(b('blaze_pre_parsed'));
    const bCompile = ok(b('blaze_compile'));
    const bestText = [tape, forward].filter(Boolean).reduce((x, y) => (!x || y.mbps > x.mbps ? y : x), null);
    const m = {
      name,
      parsed: parsed && bParsed ? parsed.mbps / bParsed.mbps : null,
      text: bestText && bText ? bestText.mbps / bText.mbps : null,
      textPath: bestText === forward ? 'is_valid_text' : 'parse + is_valid',
      forwardOverTape: tape && forward ? forward.mbps / tape.mbps : null,
      compile: compile && bCompile ? bCompile.cpu_ns / compile.cpu_ns : null,
    };
    measured.push(m);
    const instances = tape?.instances ?? parsed?.instances;
    const bytes = tape?.instance_bytes ?? parsed?.instance_bytes;
    const cell = (r, scenario) => (b(scenario)?.error ? '**error**' : r ? mbps(r.mbps) : '-');
    rows.push([`\`${name}\``, instances ? `${thousands(instances)} · ${fixed(bytes / instances, 0)} B` : '-',
      tape ? mbps(tape.mbps) : '-', forward ? mbps(forward.mbps) : '-', parsed ? mbps(parsed.mbps) : '-',
      cell(bText, 'blaze_from_text'), cell(bParsed, 'blaze_pre_parsed'),
      `${compile ? fixed(compile.cpu_ns / 1e3, 0) : '-'} · ${b('blaze_compile')?.error ? '**error**' : bCompile ? fixed(bCompile.cpu_ns / 1e3, 0) : '-'}`,
      ratio(m.parsed), ratio(m.text), fixed(m.forwardOverTape, 2)]);
  }
  const mean = (key) => geomean(measured.map((m) => m[key]).filter((x) => x != null));
  rows.push(['**geometric mean**', '', '', '', '', '', '', mean('compile') == null ? '' : `Blaze / llmdlq ${ratio(mean('compile'))}`,
    `**${ratio(mean('parsed'))}**`, `**${ratio(mean('text'))}**`, fixed(mean('forwardOverTape'), 2)]);
  say('## Catalogue-shaped cases: llmdlq against Blaze', '');
  say('Each case is one schema and its instances (`benchmarks/catalog_cases.hpp`), every instance given the same ' +
      'verdict by both (checked before timing); MB/s over all of a case\'s instances, CPU time, `format` an annotation ' +
      'on both sides. llmdlq from text: `json_parser` + `is_valid`, and `is_valid_text`; Blaze from text: ' +
      '`parse_json` + `Evaluator::validate` (`FastValidation`); pre-parsed: each side\'s own document, parsed ' +
      'beforehand. Ratios are llmdlq / Blaze of throughputs (from text: the faster of llmdlq\'s two paths).', '');
  if (skipped) say(`Blaze: skipped: ${skipped}${blazeReport?.source ? ` (\`${blazeReport.source}\`)` : ''}.`, '');
  say(table(['case', 'instances · mean size', 'parse + is_valid MB/s', 'is_valid_text MB/s', 'pre-parsed MB/s',
    'Blaze from text MB/s', 'Blaze pre-parsed MB/s', 'compile µs, llmdlq · Blaze', 'pre-parsed llmdlq/Blaze',
    'from text llmdlq/Blaze', 'is_valid_text / parse + is_valid'], rows), '');
  for (const [name, message] of errors) say(`**ERROR** \`${name}\`: ${message}`, '');

  const lowest = (key) => measured.filter((m) => m[key] != null).reduce((w, m) => (!w || m[key] < w[key] ? m : w), null);
  const judged = (key) => measured.filter((m) => m[key] != null).length;
  if (!skipped) {
    targets.push(['Blaze and llmdlq give every catalogue instance the same verdict',
      errors.length ? `${errors.length} case(s) differ or failed: ${errors.map(([n]) => `\`${n}\``).join(', ')}` : `all ${cases.length} cases agree`,
      errors.length === 0]);
    const p = lowest('parsed');
    targets.push(['pre-parsed ≥ 1.0× Blaze on the geometric mean of the catalogue cases, and no case below 0.8×',
      p ? `${ratio(mean('parsed'))}; lowest ${ratio(p.parsed)} (\`${p.name}\`)` : '-',
      p ? mean('parsed') >= 1.0 && p.parsed >= 0.8 && judged('parsed') === cases.length : null]);
    const t = lowest('text');
    targets.push(['from text ≥ 5× Blaze on the geometric mean and ≥ 1.5× on every case (the faster of llmdlq\'s two text paths)',
      t ? `${ratio(mean('text'))}; lowest ${ratio(t.text)} (\`${t.name}\`, ${t.textPath})` : '-',
      t ? mean('text') >= 5 && t.text >= 1.5 && judged('text') === cases.length : null]);
    const c = lowest('compile');
    targets.push(['schema compile not slower than before (Blaze compile time / llmdlq\'s, geometric mean' +
      (COMPILE_LEAD_BEFORE ? `; ${ratio(COMPILE_LEAD_BEFORE)} in the first run)` : ')'),
      c ? `${ratio(mean('compile'))}; lowest ${ratio(c.compile)} (\`${c.name}\`)` : '-',
      c && COMPILE_LEAD_BEFORE ? mean('compile') >= 0.8 * COMPILE_LEAD_BEFORE : null]);
  }
  const f = lowest('forwardOverTape');
  targets.push(['`is_valid_text` never slower than parse + `is_valid` (catalogue cases)',
    f ? `lowest ${fixed(f.forwardOverTape, 2)} (\`${f.name}\`); geometric mean ${fixed(mean('forwardOverTape'), 2)}` : '-',
    f ? f.forwardOverTape >= 1.0 : null]);
}

// ---------------------------------------------------------------------------
// The pipeline: the dead-letter path, the success path, threads.

const pipeline = medians(load('pipeline_benchmark.json'));
if (pipeline.size) {
  say('## The pipeline', '');
  const dead = [...pipeline].filter(([name]) => name.startsWith('dead_letter/'));
  // The machine's own interruptions: a call of p50 us meets one with a
  // probability of p50 * rate; past 1 %, its p99 is the machine's.
  const host = pipeline.get('machine/host_interruptions');
  const rate = host && !host.error ? host.interruptions_per_s : null;
  const stretched = (r) => (rate == null ? null : (r.p50_us * rate) / 1e6);
  const hostBound = (r) => r.p99_us >= 20 && stretched(r) != null && stretched(r) >= 0.01;
  if (dead.length) {
    const header = ['failed 4 KB response (memory sink)', 'p50', 'p99', 'mean (CPU)'];
    if (rate != null) header.push('calls the machine stretches');
    header.push('p50 < 10 µs');
    say(table(header, dead.map(([name, r]) => {
      if (r.error) return [`\`${name.slice(12)}\``, 'error', ...header.slice(3).map(() => '-')];
      const row = [`\`${name.slice(12)}\``, `${fixed(r.p50_us, 1)} µs`, `${fixed(r.p99_us, 1)} µs`, `${fixed(r.cpu_ns / 1e3, 1)} µs`];
      if (rate != null) row.push(`${fixed(stretched(r) * 100, 1)} %`);
      row.push(r.p50_us < 10 ? 'yes' : '**no**');
      return row;
    })), '');
    if (rate != null) {
      say(`This machine took the CPU from a thread that only reads the clock ${thousands(rate)} times a second, ` +
          `for ${fixed(host.mean_interruption_us, 1)} µs on average (\`machine/host_interruptions\`, same run): a call ` +
          `longer than ${fixed(1e4 / rate, 1)} µs meets one more often than once in a hundred, and its p99 is then ` +
          'its p50 plus that gap, whatever the code does: the target is on the p50, the code\'s latency.', '');
    }
    const ran = dead.filter(([, r]) => !r.error);
    const worst = ran.reduce((w, x) => (!w || x[1].p50_us > w[1].p50_us ? x : w), null);
    const under = ran.filter(([, r]) => r.p50_us < 10).length;
    const bound = ran.filter(([, r]) => hostBound(r)).length;
    targets.push(['every failure category at 4 KB enveloped in < 10 µs p50',
      worst ? `${under} of ${dead.length} under; worst ${fixed(worst[1].p50_us, 1)} µs (\`${worst[0].slice(12)}\`)` +
              (bound ? `; ${bound} p99s bounded by the machine's interruptions` : '')
            : 'error',
      dead.length > 0 && dead.every(([, r]) => !r.error && r.p50_us < 10)]);
  }
  const sizes = unique([...pipeline.keys()].filter((n) => n.startsWith('process_accepted/')).map((n) => n.split('/')[1])).sort(bySize);
  if (sizes.length) {
    const rows = ['validate', 'validate_with_rules', 'validate_text_with_rules', 'process_accepted'].map((sc) =>
      [`\`${sc}\``, ...sizes.map((s) => { const r = pipeline.get(`${sc}/${s}`); return r ? `${thousands(r.cpu_ns)} ns` : '-'; })]);
    // The yes/no validation with the rules process_llm_response applies: the
    // faster of its two paths, parse + is_valid and is_valid_text.
    const yesNo = (s) => [pipeline.get(`validate_with_rules/${s}`), pipeline.get(`validate_text_with_rules/${s}`)]
      .filter((r) => r && !r.error).reduce((a, b) => (!a || b.cpu_ns < a.cpu_ns ? b : a), null);
    const overhead = sizes.map((s) => {
      const a = pipeline.get(`process_accepted/${s}`);
      const b = yesNo(s);
      return a && b ? a.cpu_ns / b.cpu_ns - 1 : null;
    });
    rows.push(['`process_accepted` over the faster validation with rules', ...overhead.map((x) => (x == null ? '-' : `${x >= 0 ? '+' : ''}${fixed(x * 100, 1)} %`))]);
    say(table(['success path', ...sizes], rows), '');
    const from1k = sizes.map((s, i) => [s, overhead[i]]).filter(([s, x]) => s !== '288B' && s !== '300B' && x != null);
    targets.push(['success path ≤ 10 % over the yes/no validation with the same rules, from 1 KB up',
      from1k.map(([s, x]) => `${s} ${x >= 0 ? '+' : ''}${fixed(x * 100, 1)} %`).join(', ') || '-',
      from1k.length ? from1k.every(([, x]) => x <= 0.10) : null]);
  }
  // Thread scaling: `<name>/threads:N` rows, items per second of wall time.
  const threaded = new Map();
  for (const [name, r] of pipeline) {
    const m = /^(.*?)(?:\/real_time)?\/threads:(\d+)$/.exec(name);
    if (!m) continue;
    if (!threaded.has(m[1])) threaded.set(m[1], new Map());
    threaded.get(m[1]).set(Number(m[2]), r);
  }
  if (threaded.size) {
    const rows = [];
    for (const [name, runs] of threaded) {
      const one = runs.get(1)?.items_per_second;
      const two = runs.get(2)?.items_per_second;
      const s = one && two ? two / one : null;
      rows.push([`\`${name}\``, one ? thousands(one) : '-', two ? thousands(two) : '-', s == null ? '-' : `${fixed(s, 2)}×`]);
      targets.push([`2 threads ≥ 1.8× one thread, \`${name}\``, s == null ? '-' : `${fixed(s, 2)}×`, s == null ? null : s >= 1.8]);
    }
    say(table(['one shared schema and pipeline', '1 thread, responses/s', '2 threads, responses/s', 'scaling'], rows), '');
  }
  // Tool calls: the same 1 KB receipt judged as a call's arguments and as an answer, interleaved.
  const beside = [...pipeline].filter(([name, r]) => name.startsWith('tool_call_beside_answer/') && !r.error);
  if (beside.length) {
    say(table(['1 KB receipt', 'as a tool call', 'as an answer', 'call / answer'], beside.map(([name, r]) =>
      [`\`${name.slice(24)}\``, `${thousands(r.call_ns)} ns`, `${thousands(r.answer_ns)} ns`, `${fixed(r.call_per_answer, 2)}×`])), '');
    targets.push(['a 1 KB tool call judged in ≤ 1.1× the time of the same 1 KB answer',
      beside.map(([name, r]) => `${name.slice(24)} ${fixed(r.call_per_answer, 2)}×`).join(', '),
      beside.every(([, r]) => r.call_per_answer <= 1.1)]);
  }
}

// ---------------------------------------------------------------------------
// Repair against jsonrepair.

const repair = medians(load('repair_benchmark.json'));
if (repair.size) {
  const jr = new Map((jrReport?.benchmarks ?? []).map((b) => [b.name.replace(/^jsonrepair\//, ''), b]));
  const names = [...repair.keys()].filter((n) => n.startsWith('llmdlq_repair/')).map((n) => n.slice(14));
  const kinds = unique(names.map((n) => n.split('/')[0]));
  const sizes = unique(names.map((n) => n.split('/')[1])).sort(bySize);
  say('## Repair: llmdlq against jsonrepair', '');
  say('MB/s of input, llmdlq · jsonrepair · **ratio** (¹: jsonrepair does not return the intended document)', '');
  const cells = [];
  const rows = kinds.map((k) => [`\`${k}\``, ...sizes.map((s) => {
    const a = repair.get(`llmdlq_repair/${k}/${s}`);
    const b = jr.get(`${k}/${s}`);
    if (!a || a.error) return a?.error ? 'error' : '-';
    if (!b) return `${mbps(a.mbps)} · -`;
    const wrong = b.error || !b.correct;
    const r = a.mbps / b.mbps;
    cells.push({ kind: k, size: s, llmdlq: a.mbps, ratio: r, comparable: !wrong });
    return `${mbps(a.mbps)} · ${mbps(b.mbps)} · ${wrong ? `(${ratio(r)})¹` : `**${ratio(r)}**`}`;
  })]);
  say(table(['kind', ...sizes], rows), '');
  const comparable = cells.filter((c) => c.comparable);
  if (comparable.length) {
    const low = comparable.reduce((w, c) => (!w || c.ratio < w.ratio ? c : w), null);
    targets.push(['repair ≥ 10× jsonrepair in every cell',
      `${comparable.filter((c) => c.ratio >= 10).length} of ${comparable.length} cells; lowest ${ratio(low.ratio)} (\`${low.kind}/${low.size}\`)`,
      comparable.every((c) => c.ratio >= 10)]);
  }
  const large = kinds.flatMap((k) => sizes.filter((s) => ['16KB', '256KB'].includes(s))
    .map((s) => ({ kind: k, size: s, r: repair.get(`llmdlq_repair/${k}/${s}`) }))).filter((c) => c.r?.mbps);
  if (large.length) {
    const low = large.reduce((w, c) => (!w || c.r.mbps < w.r.mbps ? c : w), null);
    targets.push(['repair ≥ 300 MB/s for every kind from 16 KB up',
      `${large.filter((c) => c.r.mbps >= 300).length} of ${large.length}; lowest ${mbps(low.r.mbps)} MB/s (\`${low.kind}/${low.size}\`)`,
      large.every((c) => c.r.mbps >= 300)]);
  }
}

// Whether each tool's repair is the document the model meant, as
// judge_repairs.mjs printed it in this run.
const judgement = path.join(dir, 'repair_judgement.md');
if (fs.existsSync(judgement)) {
  say('### Repair success', '', 'Judged by `benchmarks/judge_repairs.mjs` (see "Repair success" below for the rules).', '');
  say(fs.readFileSync(judgement, 'utf8').trimEnd(), '');
}

// ---------------------------------------------------------------------------
// The other suites, as their medians.

for (const [file, title] of [['recovery_benchmark.json', 'The recovery ladder (no model)'],
  ['redaction_benchmark.json', 'Redaction'], ['metrics_benchmark.json', 'Metrics on the success path']]) {
  const rows = medians(load(file));
  if (!rows.size) continue;
  say(`## ${title}`, '');
  say(table(['scenario', 'CPU time', 'MB/s', 'p99 or ratio'], [...rows].map(([name, r]) => r.error ? [`\`${name}\``, 'error', '-', '-']
    : [`\`${name}\``, r.cpu_ns >= 1e4 ? `${fixed(r.cpu_ns / 1e3, 1)} µs` : `${thousands(r.cpu_ns)} ns`,
       r.mbps ? mbps(r.mbps) : '-', r.p99_us != null ? `${fixed(r.p99_us, 1)} µs` : (r.overhead_percent != null ? `overhead ${fixed(r.overhead_percent, 2)} %` : '-')])), '');
}

// Sinks: durable envelopes per second (wall time), and the worker.
const sinks = medians(load('sink_benchmark.json'));
if (sinks.size) {
  const rate = (r) => (r == null ? '-' : r.error ? 'error' : thousands(r.items_per_second ?? 0));
  const get = (name) => sinks.get(name) ?? sinks.get(`${name}/real_time`);
  const names = unique([...sinks.keys()].filter((n) => n.startsWith('sink/')).map((n) => n.split('/')[1]));
  say('## Sinks and the worker', '');
  if (names.length) {
    say(table(['sink', 'single publishes/s', 'batches of 100, envelopes/s', 'fdatasync ms'], names.map((n) => {
      const a = get(`sink/${n}/single`);
      const b = get(`sink/${n}/batch100`);
      return [`\`${n}\``, rate(a), rate(b), a?.flush_ms != null ? fixed(a.flush_ms, 2) : '-'];
    })), '');
  }
  const workers = [...sinks].filter(([n]) => n.startsWith('worker/'));
  if (workers.length) {
    say(table(['worker (1,000 responses, 2 % failing)', 'responses/s'],
      workers.map(([n, r]) => [`\`${n.replace(/^worker\/end_to_end\//, '').replace(/\/real_time$/, '')}\``, rate(r)])), '');
  }
}

// ---------------------------------------------------------------------------
// The targets, first.

const summary = [];
if (targets.length) {
  summary.push('## Targets', '');
  summary.push(table(['target', 'this run', ''], targets.map(([t, m, ok]) => [t, m, yes(ok)])), '');
}
const text = [...out.slice(0, headerEnd), ...summary, ...out.slice(headerEnd)].join('\n').trimEnd() + '\n';
process.stdout.write(text);

if (options.readme) {
  const readme = fs.readFileSync(options.readme, 'utf8');
  const begin = '<!-- summary:begin -->';
  const end = '<!-- summary:end -->';
  const a = readme.indexOf(begin);
  const b = readme.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${options.readme} has no ${begin} ... ${end} block`);
  fs.writeFileSync(options.readme, `${readme.slice(0, a + begin.length)}\n${text}${readme.slice(b)}`);
}
