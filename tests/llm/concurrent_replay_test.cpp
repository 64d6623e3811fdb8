// SPDX-License-Identifier: MIT
// Replays with calls in flight together: sixteen workers of one replay, and
// two replays in threads on one SQLite file, keep the caps (two model calls
// per payload), the ledger (one delivery per payload) and the window budget
// as one call at a time does.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <llmdlq/llm/moderation_replay_source.hpp>
#include <llmdlq/llm/recovery_ladder.hpp>
#include <llmdlq/llm/replayer.hpp>
#include <llmdlq/llm/testing.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/replay_letters.hpp"
#include "support/temp_dir.hpp"

namespace concurrent_replay_test {

namespace {

using namespace std::chrono_literals;
using llmdlq::moderation_status;
using llmdlq::test::failing_answer;
using llmdlq::test::letter_of;
using llmdlq::test::recovered_answer;

// A model that takes `latency` per call and fixes letter n at once, at its
// second call (every third), or never (every seventh); it counts the calls
// of each letter and the most it had in flight at once.
class letter_model {
 public:
  explicit letter_model(std::chrono::milliseconds latency) : latency_(latency) {}

  llmdlq::expected<llmdlq::completion, llmdlq::call_error> answer(const llmdlq::llm_request& request) {
    const int now = ++in_flight_;
    int seen = most_in_flight_.load();
    while (now > seen && !most_in_flight_.compare_exchange_weak(seen, now)) {
    }
    int n = -1;
    for (const auto& message : request.messages) n = std::max(n, letter_of(message.content));
    std::size_t call = 0;
    {
      const std::lock_guard lock(mutex_);
      call = ++calls_[n];
    }
    std::this_thread::sleep_for(latency_);
    --in_flight_;
    llmdlq::completion c;
    c.text = n % 7 != 0 && (n % 3 != 0 || call >= 2) ? recovered_answer(n) : failing_answer(n);
    c.finish_reason = "stop";
    c.usage = {10, 10};
    c.model = request.model;
    return c;
  }
  [[nodiscard]] std::map<int, std::size_t> calls() const {
    const std::lock_guard lock(mutex_);
    return calls_;
  }
  [[nodiscard]] int most_in_flight() const { return most_in_flight_; }
  /// Calls made on a client while it was making another.
  [[nodiscard]] int overlaps() const { return overlaps_; }
  void note_overlap() { ++overlaps_; }

 private:
  std::chrono::milliseconds latency_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> most_in_flight_{0};
  std::atomic<int> overlaps_{0};
  mutable std::mutex mutex_;
  std::map<int, std::size_t> calls_;
};

// One connection to the shared model, making one call at a time.
class model_client final : public llmdlq::llm_client {
 public:
  explicit model_client(letter_model& model) : model_(model) {}
  llmdlq::expected<llmdlq::completion, llmdlq::call_error> complete(const llmdlq::llm_request& request) override {
    const std::unique_lock lock(busy_, std::try_to_lock);
    if (!lock.owns_lock()) model_.note_overlap();  // a client makes one call at a time
    return model_.answer(request);
  }
  [[nodiscard]] std::string endpoint() const override { return "test://model"; }

 private:
  letter_model& model_;
  std::mutex busy_;
};

// Deliveries from any thread, one line per payload.
class counting_target final : public llmdlq::replay_target {
 public:
  llmdlq::expected<void, llmdlq::replay_error> deliver(const llmdlq::ledger_entry& entry) override {
    const std::lock_guard lock(mutex_);
    ++delivered_[entry.idempotency_key];
    return {};
  }
  [[nodiscard]] std::map<std::string, std::size_t> delivered() const {
    const std::lock_guard lock(mutex_);
    return delivered_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::size_t> delivered_;
};

struct dlq {
  llmdlq::test::temp_dir dir;
  std::filesystem::path db = dir.path() / "dlq.db";
  std::size_t n;

  explicit dlq(std::size_t letters) : n(letters) {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    for (const auto& letter : llmdlq::test::cut_off_letters(n)) REQUIRE(store->publish(letter).has_value());
  }
  std::map<std::string, moderation_status> statuses() const {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    return llmdlq::test::statuses_by_key(*store, n);
  }
};

// One replayer with its own connections to the DLQ, `concurrency` calls in flight.
struct replay_run {
  llmdlq::sqlite_store store;
  llmdlq::sqlite_replay_state state;
  model_client first;
  llmdlq::recovery_ladder ladder;
  llmdlq::moderation_replay_source source{store};
  llmdlq::replayer_options options;

  replay_run(const dlq& q, letter_model& model, std::size_t concurrency,
             const llmdlq::recovery_ladder_options& ladder_options = {})
      : store(*llmdlq::sqlite_store::open(q.db)),
        state(*llmdlq::sqlite_replay_state::open(q.db)),
        first(model),
        ladder(*llmdlq::recovery_ladder::create(llmdlq::test::replay_schema, first, ladder_options)) {
    options.dry_run = false;
    options.rate = 0;
    options.concurrency = concurrency;
    options.new_client = [&model] { return std::make_unique<model_client>(model); };
  }
  llmdlq::expected<llmdlq::replay_summary, llmdlq::replay_error> try_run(llmdlq::replay_target& target) {
    llmdlq::replayer replayer(ladder, source, state, options);
    replayer.deliver_to(target);
    return replayer.run();
  }
  llmdlq::replay_summary run(llmdlq::replay_target& target) {
    auto summary = try_run(target);
    INFO((summary ? "" : summary.error().message));
    REQUIRE(summary.has_value());
    return std::move(*summary);
  }
};

// What every letter came to, checked against what the model does to it.
void check_outcomes(const dlq& q, const letter_model& model, const counting_target& target) {
  const auto statuses = q.statuses();
  const auto calls = model.calls();
  const auto delivered = target.delivered();
  REQUIRE(statuses.size() == q.n);
  CHECK(model.overlaps() == 0);
  for (std::size_t i = 0; i < q.n; ++i) {
    const auto n = static_cast<int>(i);
    const std::string key = "key-" + std::to_string(i);
    INFO(key);
    const auto asked = calls.find(n);
    CHECK((asked != calls.end() && asked->second >= 1 && asked->second <= 2));
    CHECK(statuses.at(key) == (n % 7 == 0 ? moderation_status::exhausted : moderation_status::recovered));
    const auto copies = delivered.find(key);
    CHECK((copies == delivered.end() ? 0 : copies->second) == (n % 7 == 0 ? 0U : 1U));
  }
}

}  // namespace

TEST_CASE("Sixteen calls in flight: two calls per payload at most, one delivery each, as one at a time",
          "[replay][concurrency]") {
  dlq q(160);
  letter_model model(5ms);
  counting_target target;
  replay_run replay(q, model, 16);
  const auto summary = replay.run(target);
  CHECK(summary.finished);
  CHECK(summary.selected == q.n);
  CHECK(summary.recovered + summary.exhausted == q.n);
  CHECK(summary.delivered == summary.recovered);
  CHECK(model.most_in_flight() > 1);
  CHECK(model.most_in_flight() <= 16);
  check_outcomes(q, model, target);

  // The same letters one call at a time come to the same.
  dlq alone(160);
  letter_model one_model(0ms);
  counting_target one_target;
  replay_run one(alone, one_model, 1);
  const auto sequential = one.run(one_target);
  CHECK(one_model.most_in_flight() == 1);
  CHECK(sequential.recovered == summary.recovered);
  CHECK(sequential.exhausted == summary.exhausted);
  CHECK(sequential.calls == summary.calls);
  CHECK(sequential.by_outcome == summary.by_outcome);
}

TEST_CASE("Calls in flight hold the window budget as one call at a time does", "[replay][concurrency][budget]") {
  dlq q(64);
  letter_model model(5ms);
  counting_target target;
  llmdlq::recovery_ladder_options budget;
  budget.window_token_budget = 100;  // five calls of 20 tokens
  replay_run replay(q, model, 16, budget);
  const auto summary = replay.run(target);
  CHECK_FALSE(summary.finished);
  CHECK(summary.stopped_because.find("window_budget_spent") == 0);
  // Each call was admitted while the window, less what the calls in flight
  // might spend, was not spent: sixteen at once would have spent 320.
  CHECK(summary.usage.total() <= 100 + 20);
  CHECK(summary.calls >= 1);
}

TEST_CASE("Two replays in threads share one SQLite DLQ through their claims", "[replay][concurrency][claims]") {
  dlq q(120);
  letter_model model(2ms);
  counting_target target;
  replay_run a(q, model, 4);
  replay_run b(q, model, 4);
  std::optional<llmdlq::expected<llmdlq::replay_summary, llmdlq::replay_error>> second;
  std::thread other([&] { second = b.try_run(target); });
  const auto first = a.run(target);
  other.join();
  REQUIRE(second.has_value());
  INFO((*second ? "" : second->error().message));
  REQUIRE(second->has_value());
  CHECK(first.finished);
  CHECK((*second)->finished);
  // Each payload was one replay's: between them they recovered each once.
  CHECK(first.recovered + (*second)->recovered == 120 - 120 / 7 - 1);
  check_outcomes(q, model, target);
}

}  // namespace concurrent_replay_test
