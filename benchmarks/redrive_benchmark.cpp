// SPDX-License-Identifier: MIT
// How fast `llmdlq redrive` sends inputs back: redriver over a SQLite DLQ of
// 100 letters whose inputs were read from a topic on librdkafka's mock
// cluster in this process, at no rate limit, each letter's attempt counted,
// its input sent and acknowledged, and the letter marked redriven:
//   - redrive/original_record: each input read back by its origin (topic,
//     partition, offset) before it is produced again;
//   - redrive/stored_input: the origin's record is gone, and the input the
//     letter stores stands in for it (no read).
// Items are letters. A fresh DLQ is made for each iteration, off the clock.

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <llmdlq/kafka/producer.hpp>
#include <llmdlq/kafka/redrive_source.hpp>
#include <llmdlq/llm/redriver.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "mock_cluster.hpp"
#include "private_folder.hpp"

namespace {

constexpr std::size_t letters = 100;

// A ~1 KB OCR text, numbered.
std::string ocr_text(std::size_t n) {
  std::string text = "ALBERT HEIJN 1423\nBTW NL003028112B01\n01-11-2026\n";
  for (int i = 0; i < 30; ++i) text += "1 x HALFVOLLE MELK 1L       1,19\n";
  return text + "TOTAAL EUR " + std::to_string(n) + ",83\n";
}

// One letter per input, failed on the answer the worker got for it.
std::vector<llmdlq::envelope> dead_letters(const std::vector<llmdlq::kafka_delivery>& inputs, bool record_gone) {
  const auto schema = llmdlq::schema::compile(
      R"({"type": "object", "required": ["total"], "properties": {"total": {"type": "number"}}})");
  if (!schema) std::abort();
  std::vector<llmdlq::envelope> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    llmdlq::request_context ctx;
    ctx.idempotency_key = "inputs/" + std::to_string(inputs[i].partition) + "@" + std::to_string(inputs[i].offset);
    ctx.origin = {"receipt-processor", "bench", "inputs", inputs[i].partition,
                  record_gone ? inputs[i].offset + 1'000'000 : inputs[i].offset};
    ctx.original_input = ocr_text(i);
    auto judged = llmdlq::process_llm_response(R"({"total": "32,83"})", *schema, ctx);
    if (judged) std::abort();
    out.push_back(std::move(judged.error()));
  }
  return out;
}

void redrive(benchmark::State& state, bool record_gone) {
  const bench::mock_cluster cluster;
  cluster.create("inputs");
  std::vector<llmdlq::kafka_delivery> inputs;
  {
    auto producer = llmdlq::kafka_producer::open({cluster.properties(), std::chrono::seconds(10), {}});
    if (!producer) std::abort();
    std::vector<llmdlq::kafka_record> records;
    for (std::size_t i = 0; i < letters; ++i)
      records.push_back({"inputs", -1, "scan-" + std::to_string(i), ocr_text(i), {}});
    auto sent = producer->send_batch(records);
    if (!sent) std::abort();
    inputs = std::move(*sent);
  }
  const auto dead = dead_letters(inputs, record_gone);
  llmdlq::kafka_redrive_options redrive_options;
  redrive_options.properties = cluster.properties();
  auto source = llmdlq::kafka_redrive_source::open(std::move(redrive_options));
  if (!source) {
    state.SkipWithError(source.error().message.c_str());
    return;
  }
  std::size_t sent = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const bench::private_folder folder;
    auto store = llmdlq::sqlite_store::open(folder.path() / "dlq.db");
    auto ledger = llmdlq::sqlite_replay_state::open(folder.path() / "dlq.db");
    if (!store || !ledger || !store->publish_batch(dead)) std::abort();
    llmdlq::redrive_options options;
    options.dry_run = false;
    options.rate = 0;
    llmdlq::redriver redriver(*store, *ledger, *source, options);
    state.ResumeTiming();
    auto summary = redriver.run();
    if (!summary) {
      state.SkipWithError(summary.error().message.c_str());
      return;
    }
    sent += summary->by_outcome["sent"];
  }
  if (sent != letters * static_cast<std::size_t>(state.iterations())) {
    state.SkipWithError("not every letter was sent");
    return;
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(letters));
}

}  // namespace

BENCHMARK_CAPTURE(redrive, original_record, false)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();
BENCHMARK_CAPTURE(redrive, stored_input, true)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();

BENCHMARK_MAIN();
