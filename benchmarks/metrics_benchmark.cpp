// SPDX-License-Identifier: MIT
// What counting costs the success path: process_llm_response accepting a
// 1 KB receipt without metrics, with a metrics registry, and with a registry
// that also feeds a DLQ-rate alarm, in one binary and one run (target: the
// registry within 2 % of no metrics). Run with repetitions and random
// interleaving (scripts/bench --binary=metrics does) so that the variants
// share the machine's noise. metrics_count_accepted times the registry's
// part alone.
#include <algorithm>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <llmdlq/llmdlq.hpp>

#include "documents.hpp"
#include "receipt_schema.hpp"

namespace {

using llmdlq_bench::receipt_schema;

enum class counting { none, registry, registry_and_alarm };

void process_accepted(benchmark::State& state, const std::string& document, counting how) {
  llmdlq::process_config options;
  options.envelope.failure_code_prefix = "ocr";
  if (how != counting::none) {
    llmdlq::metrics_options m;
    if (how == counting::registry_and_alarm) m.alarm = std::make_shared<llmdlq::dlq_rate_alarm>();
    options.metrics = std::make_shared<llmdlq::metrics>(m);
  }
  llmdlq::request_context context;
  context.idempotency_key = "receipts:3:100042";
  context.finish_reason = "stop";
  if (!llmdlq::process_llm_response(document, receipt_schema(), context, options)) {
    state.SkipWithError("the document is not accepted");
    return;
  }
  for (auto _ : state) {
    auto result = llmdlq::process_llm_response(document, receipt_schema(), context, options);
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * document.size()));
  if (options.metrics && options.metrics->snapshot().accepted < static_cast<std::uint64_t>(state.iterations())) {
    state.SkipWithError("the registry did not count every response");
  }
}

// The same two variants in alternating batches on the same thread, timed in
// the thread's CPU time: the median of the per-pair ratios is what a
// shared, noisy machine still measures reliably (a slower stretch slows
// both halves of a pair). Counters: ratio (with / without) and overhead_percent.
void paired_ratio(benchmark::State& state, const std::string& document) {
  llmdlq::process_config plain;
  plain.envelope.failure_code_prefix = "ocr";
  llmdlq::process_config counted = plain;
  counted.metrics = std::make_shared<llmdlq::metrics>();
  llmdlq::request_context context;
  context.idempotency_key = "receipts:3:100042";
  context.finish_reason = "stop";
  constexpr int batch = 200;
  auto cpu_now = [] {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
  };
  auto time_batch = [&](const llmdlq::process_config& options) {
    const double start = cpu_now();
    for (int i = 0; i < batch; ++i) {
      auto result = llmdlq::process_llm_response(document, receipt_schema(), context, options);
      benchmark::DoNotOptimize(result);
    }
    return cpu_now() - start;
  };
  std::vector<double> ratios;
  bool counted_first = false;
  for (auto _ : state) {
    double with = 0;
    double without = 0;
    if (counted_first) {
      with = time_batch(counted);
      without = time_batch(plain);
    } else {
      without = time_batch(plain);
      with = time_batch(counted);
    }
    counted_first = !counted_first;
    ratios.push_back(with / without);
  }
  std::sort(ratios.begin(), ratios.end());
  const double median = ratios.empty() ? 0.0 : ratios[ratios.size() / 2];
  state.counters["ratio"] = median;
  state.counters["overhead_percent"] = (median - 1.0) * 100.0;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * batch * document.size()));
}

// The registry's own share of an accepted response, without the response:
// what count_accepted costs on one thread (no contention).
void count_accepted(benchmark::State& state) {
  llmdlq::metrics metrics;
  for (auto _ : state) {
    metrics.count_accepted({});
    benchmark::ClobberMemory();
  }
}

const int registered = [] {
  const std::string document = llmdlq_bench::make_receipt(1024);
  benchmark::RegisterBenchmark("process_accepted/1KB",
                               [document](benchmark::State& s) { process_accepted(s, document, counting::none); });
  benchmark::RegisterBenchmark("process_accepted_with_metrics/1KB",
                               [document](benchmark::State& s) { process_accepted(s, document, counting::registry); });
  benchmark::RegisterBenchmark("process_accepted_with_metrics_and_alarm/1KB", [document](benchmark::State& s) {
    process_accepted(s, document, counting::registry_and_alarm);
  });
  benchmark::RegisterBenchmark("metrics_count_accepted", count_accepted);
  benchmark::RegisterBenchmark("metrics_paired_ratio", [document](benchmark::State& s) { paired_ratio(s, document); });
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
