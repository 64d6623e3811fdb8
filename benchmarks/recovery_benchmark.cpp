// SPDX-License-Identifier: MIT
// The recovery ladder's own cost, without any model: deciding the next step
// of a failed ~4 KB receipt and building its repair prompt (target: < 20 us
// p99), per failure kind, with per-call p50/p99/max latencies.
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <boost/json/parse.hpp>
#include <llmdlq/llm/recovery_ladder.hpp>
#include <llmdlq/llm/testing.hpp>
#include <llmdlq/llmdlq.hpp>

#include "documents.hpp"
#include "latency.hpp"
#include "receipt_schema.hpp"

namespace {

std::string receipt_schema_text() {
  std::ifstream in(LLMDLQ_BENCH_DATA_DIR "/receipt.schema.json");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

llmdlq::envelope failure_of(const std::string& response) {
  llmdlq::request_context c;
  c.idempotency_key = "receipts:3:100042";
  c.model = {"ollama", "llama3.2-vision", "11b", 0.0, 2048, std::nullopt};
  c.versions = {"receipt-v1", "v3", "11b", "tesseract-5.3", "worker-2.4.0"};
  c.finish_reason = "stop";
  auto judged = llmdlq::process_llm_response(response, llmdlq_bench::receipt_schema(), c);
  if (judged) std::abort();
  return judged.error();
}

void next_step_and_prompt(benchmark::State& state, const std::string& response) {
  llmdlq::testing::scripted_llm_client model;
  llmdlq::recovery_ladder_options options;
  options.current_versions.schema = "receipt-v1";
  options.current_versions.prompt = "v3";
  auto ladder = llmdlq::recovery_ladder::create(receipt_schema_text(), model, options);
  if (!ladder) {
    state.SkipWithError("the receipt schema does not compile");
    return;
  }
  const llmdlq::envelope e = failure_of(response);
  std::vector<double> micros;
  micros.reserve(1 << 20);
  std::size_t prompt_bytes = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto step = ladder->next_step(e);
    auto prompt = ladder->prompt_for(e);
    const auto stop = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(step);
    prompt_bytes = prompt.size();
    benchmark::DoNotOptimize(prompt);
    if (micros.size() < micros.capacity()) micros.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
  }
  state.counters["response_bytes"] = static_cast<double>(response.size());
  state.counters["prompt_bytes"] = static_cast<double>(prompt_bytes);
  llmdlq_bench::report_latencies(state, micros);
}

const int registered = [] {
  const std::string receipt4k = llmdlq_bench::make_receipt(4096);
  std::string broken = receipt4k;
  broken[broken.find(',')] = ';';
  const std::pair<const char*, std::string> failures[] = {
      {"ladder/schema_4KB", llmdlq_bench::make_receipt(4096, llmdlq_bench::total_as_string)},
      {"ladder/syntax_4KB", broken},
      {"ladder/truncated_4KB", receipt4k.substr(0, receipt4k.size() - 40)},
  };
  for (const auto& [name, response] : failures) {
    benchmark::RegisterBenchmark(name, [response](benchmark::State& s) { next_step_and_prompt(s, response); });
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
