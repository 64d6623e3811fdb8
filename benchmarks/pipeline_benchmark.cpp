// SPDX-License-Identifier: MIT
// The dead-letter path and the success path of process_llm_response, in one
// binary with the plain validation they build on:
//   - dead_letter/<kind>: a failed ~4 KB response classified, enveloped and
//     published to a memory_sink, with per-call p50/p99/max latencies;
//   - validate/<size> and process_accepted/<size>: parse + validate alone,
//     and the whole success path on the same document.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <llmdlq/llmdlq.hpp>

#include "documents.hpp"
#include "latency.hpp"
#include "receipt_schema.hpp"

namespace {

using llmdlq_bench::receipt_schema;
using llmdlq_bench::report_latencies;

llmdlq::process_options process_options() {
  llmdlq::process_options options;
  options.failure_code_prefix = "ocr";
  return options;
}

llmdlq::request_context context() {
  llmdlq::request_context c;
  c.idempotency_key = "receipts:3:100042";
  c.record_id = "scan-100042";
  c.model = {"ollama", "llama3.2-vision", "11b", 0.0, 2048, std::nullopt};
  c.versions = {"receipt-v1", "v3", "11b", "tesseract-5.3", "worker-2.4.0"};
  c.origin = {"receipt-processor", "ocr-worker-1", "receipts", 3, 100042};
  c.finish_reason = "stop";
  return c;
}

void dead_letter(benchmark::State& state, const std::string& response, llmdlq::failure_category expected) {
  const auto options = process_options();
  const auto ctx = context();
  const auto first = llmdlq::process_llm_response(response, receipt_schema(), ctx, options);
  if (first || first.error().failure.category != expected) {
    state.SkipWithError("the response does not fail as this scenario expects");
    return;
  }
  llmdlq::memory_sink sink;
  const llmdlq::pipeline pipeline{receipt_schema(), sink, options};
  std::vector<double> micros;
  micros.reserve(1 << 20);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto d = pipeline.handle(response, ctx);
    const auto stop = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(d);
    if (micros.size() < micros.capacity()) micros.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
    if (sink.size() > 10000) {
      state.PauseTiming();
      sink.clear();
      state.ResumeTiming();
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * response.size()));
  state.counters["response_bytes"] = static_cast<double>(response.size());
  report_latencies(state, micros);
}

// Parse + validate, as the validation benchmark does; with `content_rules`,
// x-dlq-rule rules (not-future) are judged too, as process_llm_response does.
void validate(benchmark::State& state, const std::string& document, bool content_rules) {
  llmdlq::json_parser parser;
  llmdlq::validate_options rules;
  if (content_rules) rules.now = llmdlq::system_now();
  for (auto _ : state) {
    auto doc = parser.parse(document);
    benchmark::DoNotOptimize(doc && receipt_schema().is_valid(*doc, rules));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * document.size()));
}

void process_accepted(benchmark::State& state, const std::string& document) {
  const auto options = process_options();
  const auto ctx = context();
  if (!llmdlq::process_llm_response(document, receipt_schema(), ctx, options)) {
    state.SkipWithError("the document is not accepted");
    return;
  }
  for (auto _ : state) {
    auto result = llmdlq::process_llm_response(document, receipt_schema(), ctx, options);
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * document.size()));
}

const int registered = [] {
  using llmdlq::failure_category;
  const std::string receipt4k = llmdlq_bench::make_receipt(4096);
  const std::string schema_failure = llmdlq_bench::make_receipt(4096, llmdlq_bench::total_as_string);
  // A semicolon for a comma: beyond what local repair fixes.
  std::string broken = receipt4k;
  broken[broken.find(',')] = ';';
  const std::string cut_off = receipt4k.substr(0, receipt4k.size() - 40);
  const std::string fenced_prose = "Here is the receipt:\n```json\n" + schema_failure + "\n```";
  const std::pair<const char*, std::pair<std::string, failure_category>> failures[] = {
      {"dead_letter/schema_4KB", {schema_failure, failure_category::schema}},
      {"dead_letter/syntax_4KB", {broken, failure_category::syntax}},
      {"dead_letter/truncated_4KB", {cut_off, failure_category::truncated}},
      {"dead_letter/fenced_schema_4KB", {fenced_prose, failure_category::schema}},
  };
  for (const auto& [name, failure] : failures) {
    benchmark::RegisterBenchmark(name, [response = failure.first, category = failure.second](benchmark::State& s) {
      dead_letter(s, response, category);
    });
  }
  for (const auto& [label, bytes] : {std::pair{"1KB", 1024}, std::pair{"4KB", 4096}, std::pair{"16KB", 16384},
                                     std::pair{"256KB", 262144}}) {
    const std::string document = llmdlq_bench::make_receipt(static_cast<std::size_t>(bytes));
    benchmark::RegisterBenchmark((std::string("validate/") + label).c_str(),
                                 [document](benchmark::State& s) { validate(s, document, false); });
    benchmark::RegisterBenchmark((std::string("validate_with_rules/") + label).c_str(),
                                 [document](benchmark::State& s) { validate(s, document, true); });
    benchmark::RegisterBenchmark((std::string("process_accepted/") + label).c_str(),
                                 [document](benchmark::State& s) { process_accepted(s, document); });
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
