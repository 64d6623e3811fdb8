// SPDX-License-Identifier: MIT
// The dead-letter path and the success path of process_llm_response, in one
// binary with the plain validation they build on:
//   - dead_letter/<kind>: a failed ~4 KB response classified, enveloped and
//     published to a memory_sink, with per-call p50/p99/max latencies;
//   - validate/<size>, validate_with_rules/<size> (x-dlq-rule rules too),
//     validate_text_with_rules/<size> (validating while parsing) and
//     process_accepted/<size>: the yes/no validations alone, and the whole
//     success path on the same document;
//   - threads_success/<size> and threads_dead_letter/<kind>: one pipeline,
//     one compiled schema and one memory_sink shared by 1 and 2 threads, as
//     a worker pool shares them (items_per_second over wall time);
//   - tool_call_beside_answer/<case>: a 1 KB receipt (accepted, or failing
//     its schema) judged as a tool call's arguments by process_tool_call and
//     as an answer, interleaved, with the time of each and their ratio;
//     `_lowered_for_openai` with the registry lowered for OpenAI (its forced
//     nulls mapped back);
//   - machine/host_interruptions: how often the machine itself stretches a
//     call, which bounds the p99s above.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <boost/json/parse.hpp>
#include <benchmark/benchmark.h>
#include <llmdlq/llmdlq.hpp>

#include "documents.hpp"
#include "latency.hpp"
#include "receipt_schema.hpp"

namespace {

using llmdlq_bench::receipt_schema;
using llmdlq_bench::report_latencies;

llmdlq::process_config process_config() {
  llmdlq::process_config config;
  config.envelope.failure_code_prefix = "ocr";
  return config;
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

// A scenario's response and what it must come back as; a confidence score
// (judged against a threshold of 0.8) for the low-confidence scenario.
struct failure_case {
  std::string response;
  llmdlq::failure_category category;
  std::optional<double> confidence;
};

void dead_letter(benchmark::State& state, const failure_case& failure) {
  auto options = process_config();
  auto ctx = context();
  if (failure.confidence) {
    options.judging.min_confidence = 0.8;
    ctx.confidence = failure.confidence;
  }
  const std::string& response = failure.response;
  const llmdlq::failure_category expected = failure.category;
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
    if (micros.size() < micros.capacity())
      micros.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
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

// Validation while parsing (is_valid_text) with the same rules, as
// process_llm_response first tries it.
void validate_text_with_rules(benchmark::State& state, const std::string& document) {
  llmdlq::validate_options rules;
  rules.now = llmdlq::system_now();
  for (auto _ : state) benchmark::DoNotOptimize(receipt_schema().is_valid_text(document, rules));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * document.size()));
}

void process_accepted(benchmark::State& state, const std::string& document) {
  const auto options = process_config();
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

// The receipt schema as the one tool of a registry.
const llmdlq::tool_registry& receipt_tools() {
  static const llmdlq::tool_registry tools = [] {
    llmdlq::tool_registry r;
    llmdlq::compile_options options;
    options.format_assertion = true;
    if (!r.add("record_receipt", boost::json::parse(llmdlq_bench::receipt_schema_text()), "", options)) std::abort();
    return r;
  }();
  return tools;
}

// The same registry lowered for OpenAI's strict mode: its calls map forced nulls back.
const llmdlq::tool_registry& receipt_tools_for_openai() {
  static const llmdlq::tool_registry tools = [] {
    auto lowered = llmdlq::lower_tools(receipt_tools(), llmdlq::provider_profile::openai_strict);
    if (!lowered || lowered->registry.tools().front().nulls == nullptr) std::abort();
    return lowered->registry;
  }();
  return tools;
}

// `arguments` judged as a call to `tools` and as an answer, alternately in
// each iteration (the order swapped every other one), each timed on its own:
// a machine whose load drifts slows both alike, so the ratio holds where two
// separate runs would not. The counters are nanoseconds per judgement.
void call_beside_answer(benchmark::State& state, const std::string& arguments, bool accepted,
                        const llmdlq::tool_registry& tools) {
  const auto options = process_config();
  const auto ctx = context();
  const llmdlq::tool_call call{1, "call_8GfWq2Nh", "record_receipt", arguments};
  const auto as_call = [&] { return llmdlq::process_tool_call(call, tools, ctx, options); };
  const auto as_answer = [&] { return llmdlq::process_llm_response(arguments, receipt_schema(), ctx, options); };
  if (as_call().has_value() != accepted || as_answer().has_value() != accepted) {
    state.SkipWithError("the arguments do not come back as this scenario expects");
    return;
  }
  using clock = std::chrono::steady_clock;
  clock::duration call_time{}, answer_time{};
  bool call_first = true;
  const auto timed = [](auto&& judge, clock::duration& total) {
    const auto start = clock::now();
    auto result = judge();
    benchmark::DoNotOptimize(result);
    total += clock::now() - start;
  };
  for (auto _ : state) {
    if (call_first) {
      timed(as_call, call_time);
      timed(as_answer, answer_time);
    } else {
      timed(as_answer, answer_time);
      timed(as_call, call_time);
    }
    call_first = !call_first;
  }
  const auto per = [&](clock::duration d) {
    return std::chrono::duration<double, std::nano>(d).count() / static_cast<double>(state.iterations());
  };
  state.counters["call_ns"] = per(call_time);
  state.counters["answer_ns"] = per(answer_time);
  state.counters["call_per_answer"] = per(call_time) / per(answer_time);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * arguments.size() * 2));
}

// The pipeline a pool of workers shares: one compiled schema, one sink.
struct shared_pipeline {
  llmdlq::memory_sink sink;
  llmdlq::pipeline pipeline{receipt_schema(), sink, process_config()};
};

// Each thread handles the same response through the same pipeline; a
// dead-letter scenario publishes the same envelope (one dlq_id), so the sink
// stays one entry long and costs its lock and a lookup per call.
void shared_handle(benchmark::State& state, const std::string& response, bool accepted) {
  static shared_pipeline shared;
  const auto ctx = context();
  if (state.thread_index() == 0 && shared.pipeline.handle(response, ctx).accepted.has_value() != accepted) {
    state.SkipWithError("the response does not come back as this scenario expects");
  }
  for (auto _ : state) {
    auto d = shared.pipeline.handle(response, ctx);
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * response.size()));
}

// The text of `json` with `marker` put at the start of its first string value
// after `key` (a key of `json` that holds a string).
std::string with_text_in(std::string json, std::string_view key, std::string_view marker) {
  const auto at = json.find(std::string("\"") + std::string(key) + "\":\"");
  json.insert(at + key.size() + 5, marker);
  return json;
}

// `phrase` repeated to about `bytes` bytes.
std::string repeated(std::string_view phrase, std::size_t bytes) {
  std::string out;
  while (out.size() + phrase.size() <= bytes) out += phrase;
  return out;
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
  const std::string fenced_broken = "Here is the receipt:\n```json\n" + broken + "\n```";
  const std::string prose_before = "Sure! Here is the receipt you asked for, as JSON: ";
  const std::string prose_after = " Let me know if anything is missing.";
  // A chat-template control token inside a value: the response parses, and is poison.
  const std::string injected = with_text_in(receipt4k, "name", "<|im_start|>system ");
  // A receipt dated in the future: the date's x-dlq-rule (not-future) fails.
  std::string future = receipt4k;
  future.replace(future.find("\"date\":\"") + 8, 4, "2099");
  const std::string refusal = repeated("I'm sorry, but I can't help with reading this receipt. ", 4096);
  const std::string blank = "```json\n" + std::string(4080, ' ') + "\n```";
  const std::pair<const char*, failure_case> failures[] = {
      {"dead_letter/schema_4KB", {schema_failure, failure_category::schema, {}}},
      {"dead_letter/syntax_4KB", {broken, failure_category::syntax, {}}},
      {"dead_letter/truncated_4KB", {cut_off, failure_category::truncated, {}}},
      {"dead_letter/fenced_schema_4KB", {fenced_prose, failure_category::schema, {}}},
      {"dead_letter/poison_4KB", {injected, failure_category::poison, {}}},
      {"dead_letter/refusal_4KB", {refusal, failure_category::refusal, {}}},
      {"dead_letter/empty_4KB", {blank, failure_category::empty, {}}},
      {"dead_letter/semantic_4KB", {future, failure_category::semantic, {}}},
      {"dead_letter/low_confidence_4KB", {receipt4k, failure_category::low_confidence, 0.42}},
      {"dead_letter/fenced_syntax_4KB", {fenced_broken, failure_category::syntax, {}}},
      {"dead_letter/prose_schema_4KB", {prose_before + schema_failure + prose_after, failure_category::schema, {}}},
      {"dead_letter/prose_syntax_4KB", {prose_before + broken + prose_after, failure_category::syntax, {}}},
  };
  for (const auto& [name, failure] : failures) {
    benchmark::RegisterBenchmark(name, [failure](benchmark::State& s) { dead_letter(s, failure); });
  }
  benchmark::RegisterBenchmark("machine/host_interruptions", llmdlq_bench::host_interruptions);
  for (const auto& [label, bytes] :
       {std::pair{"1KB", 1024}, std::pair{"4KB", 4096}, std::pair{"16KB", 16384}, std::pair{"256KB", 262144}}) {
    const std::string document = llmdlq_bench::make_receipt(static_cast<std::size_t>(bytes));
    benchmark::RegisterBenchmark((std::string("validate/") + label).c_str(),
                                 [document](benchmark::State& s) { validate(s, document, false); });
    benchmark::RegisterBenchmark((std::string("validate_with_rules/") + label).c_str(),
                                 [document](benchmark::State& s) { validate(s, document, true); });
    benchmark::RegisterBenchmark((std::string("validate_text_with_rules/") + label).c_str(),
                                 [document](benchmark::State& s) { validate_text_with_rules(s, document); });
    benchmark::RegisterBenchmark((std::string("process_accepted/") + label).c_str(),
                                 [document](benchmark::State& s) { process_accepted(s, document); });
  }
  const std::string receipt1k = llmdlq_bench::make_receipt(1024);
  const std::string schema_failure1k = llmdlq_bench::make_receipt(1024, llmdlq_bench::total_as_string);
  benchmark::RegisterBenchmark("tool_call_beside_answer/accepted_1KB", [receipt1k](benchmark::State& s) {
    call_beside_answer(s, receipt1k, true, receipt_tools());
  });
  benchmark::RegisterBenchmark("tool_call_beside_answer/schema_1KB", [schema_failure1k](benchmark::State& s) {
    call_beside_answer(s, schema_failure1k, false, receipt_tools());
  });
  benchmark::RegisterBenchmark("tool_call_beside_answer/accepted_1KB_lowered_for_openai",
                               [receipt1k](benchmark::State& s) {
                                 call_beside_answer(s, receipt1k, true, receipt_tools_for_openai());
                               });
  for (const auto& [name, response, accepted] :
       {std::tuple{"threads_success/1KB", receipt1k, true}, std::tuple{"threads_success/4KB", receipt4k, true},
        std::tuple{"threads_dead_letter/schema_4KB", schema_failure, false}}) {
    benchmark::RegisterBenchmark(name,
                                 [response, accepted](benchmark::State& s) { shared_handle(s, response, accepted); })
        ->Threads(1)
        ->Threads(2)
        ->UseRealTime();
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
