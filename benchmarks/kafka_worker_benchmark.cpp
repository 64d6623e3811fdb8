// SPDX-License-Identifier: MIT
// kafka_worker's throughput, exactly once against at least once, on
// librdkafka's mock cluster in this process (one broker, topics of 3
// partitions): each iteration reads 1,000 ~1 KB responses, accepts 98 % to
// the output topic and dead-letters 2 % (a ~2 KB envelope) to the DLQ topic,
// and commits them, in batches of 100 (max_batch's default):
//   - worker/at_least_once: kafka_producer sends a batch and waits for its
//     acknowledgements, then the offsets are committed;
//   - worker/exactly_once: a batch is one transaction (begin, produce, send
//     the offsets, commit).
// Items are input records. The group join and the first batch are done before
// the clock starts. The mock accepts transactions without writing markers, so
// a real broker's transaction costs (markers, the coordinator's log) come on
// top of the exactly-once figures; the round trips are all counted.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <llmdlq/kafka/worker.hpp>
#include <llmdlq/process.hpp>

#include "mock_cluster.hpp"

namespace {

constexpr std::size_t per_iteration = 1000;
constexpr std::size_t warm_up = 100;
constexpr std::int64_t iterations = 5;

// A ~1 KB receipt, numbered.
std::string response(std::size_t n) {
  std::string items;
  for (int i = 0; i < 12; ++i) {
    items += R"({"name": "ITEM )" + std::to_string(i) + R"( HALFVOLLE MELK 1L", "quantity": 1, "price": 1.19},)";
  }
  items.pop_back();
  return R"({"merchant": "Albert Heijn 1423", "receipt": )" + std::to_string(n) + R"(, "items": [)" + items +
         R"(], "total": 23.47})";
}

llmdlq::expected<llmdlq::kafka_outcome, std::string> judge(const llmdlq::kafka_input& in) {
  if (in.offset % 50 != 7) return llmdlq::kafka_outcome::accept(std::string(in.value));
  llmdlq::request_context context;
  context.idempotency_key = in.position();
  context.origin = {"receipt-processor", "bench", std::string(in.topic), in.partition, in.offset};
  return llmdlq::kafka_outcome::reject(llmdlq::make_envelope(
      {.category = llmdlq::failure_category::schema, .message = "/total: expected a number"}, in.value, context));
}

void worker(benchmark::State& state, bool exactly_once) {
  const bench::mock_cluster c;
  for (const auto* topic : {"in", "out", "dlq"}) c.create(topic);
  {
    auto producer = llmdlq::kafka_producer::open({c.properties(), std::chrono::seconds(10), {}});
    if (!producer) std::abort();
    std::vector<llmdlq::kafka_record> records;
    for (std::size_t i = 0; i < warm_up + per_iteration * iterations; ++i) {
      records.push_back({"in", static_cast<std::int32_t>(i % 3), {}, response(i), {}});
    }
    if (!producer->send_batch(records)) std::abort();
  }
  llmdlq::kafka_worker_options options;
  options.properties = c.properties();
  options.input_topic = "in";
  options.output_topic = "out";
  options.dlq_topic = "dlq";
  options.group = "bench";
  if (exactly_once) options.transactional_id = "bench-worker";
  auto w = llmdlq::kafka_worker::open(options, judge);
  if (!w) {
    state.SkipWithError(w.error().message.c_str());
    return;
  }
  // A worker that cannot go on (fenced) would fail every poll, and one that
  // commits nothing would poll for ever: both end the run with an error.
  std::size_t failures = 0;
  std::size_t idle = 0;  // polls in a row that committed nothing
  const auto poll = [&]() -> std::optional<std::size_t> {
    auto done = w->poll_once(std::chrono::seconds(1));
    if (done && done->committed() > 0) {
      idle = 0;
      return done->committed();
    }
    if (!done) ++failures;
    if ((!done && llmdlq::is_permanent(done.error().code)) || ++idle > 60) {
      state.SkipWithError(done ? "nothing committed for 60 polls" : done.error().message.c_str());
      return std::nullopt;
    }
    return 0;
  };
  for (std::size_t committed = 0; committed < warm_up;) {  // joins the group
    const auto n = poll();
    if (!n) return;
    committed += *n;
  }
  for (auto _ : state) {
    for (std::size_t committed = 0; committed < per_iteration;) {
      const auto n = poll();
      if (!n) return;
      committed += *n;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(per_iteration));
  state.counters["failed_batches"] = static_cast<double>(failures);
}

BENCHMARK_CAPTURE(worker, at_least_once, false)
    ->Iterations(iterations)
    ->Repetitions(3)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(worker, exactly_once, true)
    ->Iterations(iterations)
    ->Repetitions(3)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
