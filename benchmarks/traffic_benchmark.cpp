// SPDX-License-Identifier: MIT
// What recording traffic costs the success path: pipeline::handle accepting
// a receipt into a pipeline whose sink is a sqlite_store, with
// traffic_recording off (as before the pipeline recorded traffic) and on, in
// one binary and one run (target: within 1 %). traffic_paired_ratio
// alternates the two in batches on one thread and reports the median ratio.
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include <benchmark/benchmark.h>
#include <llmdlq/llmdlq.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "documents.hpp"
#include "receipt_schema.hpp"
#include "private_folder.hpp"

namespace {

using llmdlq_bench::receipt_schema;

std::optional<llmdlq::pipeline> store_pipeline(const std::filesystem::path& db, llmdlq::traffic_recording traffic) {
  auto store = llmdlq::sqlite_store::open(db);
  if (!store) return std::nullopt;
  llmdlq::process_config config;
  config.envelope.failure_code_prefix = "ocr";
  return std::optional<llmdlq::pipeline>(std::in_place, receipt_schema(), std::move(*store), config, std::nullopt,
                                         traffic);
}

llmdlq::request_context receipt_context() {
  llmdlq::request_context context;
  context.idempotency_key = "receipts:3:100042";
  context.finish_reason = "stop";
  return context;
}

void pipeline_accepted(benchmark::State& state, const std::string& document, llmdlq::traffic_recording traffic) {
  bench::private_folder dir;
  const auto pipeline = store_pipeline(dir.path() / "dlq.db", traffic);
  if (!pipeline || pipeline->records_traffic() != (traffic == llmdlq::traffic_recording::on)) {
    state.SkipWithError("cannot make the pipeline");
    return;
  }
  const auto context = receipt_context();
  if (!pipeline->handle(document, context).accepted) {
    state.SkipWithError("the document is not accepted");
    return;
  }
  for (auto _ : state) {
    auto d = pipeline->handle(document, context);
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * document.size()));
}

// The two variants in alternating batches on the same thread, timed in the
// thread's CPU time: a slower stretch of a shared machine slows both halves
// of a pair, and the median of the per-pair ratios is what stays reliable.
// Counters: ratio (on / off) and overhead_percent.
void paired_ratio(benchmark::State& state, const std::string& document) {
  bench::private_folder dir;
  const auto off = store_pipeline(dir.path() / "off.db", llmdlq::traffic_recording::off);
  const auto on = store_pipeline(dir.path() / "on.db", llmdlq::traffic_recording::on);
  if (!off || !on || !on->records_traffic()) {
    state.SkipWithError("cannot make the pipelines");
    return;
  }
  const auto context = receipt_context();
  constexpr int batch = 200;
  auto cpu_now = [] {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
  };
  auto time_batch = [&](const llmdlq::pipeline& pipeline) {
    const double start = cpu_now();
    for (int i = 0; i < batch; ++i) {
      auto d = pipeline.handle(document, context);
      benchmark::DoNotOptimize(d);
    }
    return cpu_now() - start;
  };
  std::vector<double> ratios;
  bool on_first = false;
  for (auto _ : state) {
    double with = 0;
    double without = 0;
    if (on_first) {
      with = time_batch(*on);
      without = time_batch(*off);
    } else {
      without = time_batch(*off);
      with = time_batch(*on);
    }
    on_first = !on_first;
    ratios.push_back(with / without);
  }
  std::sort(ratios.begin(), ratios.end());
  const double median = ratios.empty() ? 0.0 : ratios[ratios.size() / 2];
  state.counters["ratio"] = median;
  state.counters["overhead_percent"] = (median - 1.0) * 100.0;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * batch * document.size()));
}

const int registered = [] {
  for (const std::size_t size : {std::size_t{300}, std::size_t{1024}}) {
    const std::string document = llmdlq_bench::make_receipt(size);
    const std::string suffix = size == 300 ? "/300B" : "/1KB";
    benchmark::RegisterBenchmark(("pipeline_accepted" + suffix).c_str(), [document](benchmark::State& s) {
      pipeline_accepted(s, document, llmdlq::traffic_recording::off);
    });
    benchmark::RegisterBenchmark(("pipeline_accepted_with_traffic" + suffix).c_str(), [document](benchmark::State& s) {
      pipeline_accepted(s, document, llmdlq::traffic_recording::on);
    });
    benchmark::RegisterBenchmark(("traffic_paired_ratio" + suffix).c_str(),
                                 [document](benchmark::State& s) { paired_ratio(s, document); });
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
