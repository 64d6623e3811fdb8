// SPDX-License-Identifier: MIT
// redriver over a SQLite DLQ with a redrive_source of the host's own (inputs
// that do not come from Kafka): what a run sends, counts and marks, and what
// it does when the source refuses, fails, or another redrive holds the lease.
#include <map>
#include <string>
#include <vector>

#include <llmdlq/llm/redriver.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/replay_letters.hpp"
#include "support/temp_dir.hpp"

namespace redriver_test {

namespace {

// Inputs in memory, by idempotency key; what was sent, in order.
class memory_source final : public llmdlq::redrive_source {
 public:
  std::map<std::string, std::string> inputs;
  std::vector<std::pair<std::string, llmdlq::redrive_reference>> sent;
  std::vector<std::string> keys;  // the idempotency key each input carried
  std::optional<llmdlq::replay_errc> send_fails;

  llmdlq::expected<llmdlq::redrive_input, llmdlq::replay_error> fetch(const llmdlq::envelope& letter) override {
    const auto found = inputs.find(letter.idempotency_key);
    if (found == inputs.end()) {
      return llmdlq::unexpected(llmdlq::replay_error{llmdlq::replay_errc::target_refused, "no such input", {}, {}});
    }
    return llmdlq::redrive_input{.destination = "inbox",
                                 .from = "the host's inbox",
                                 .key = letter.idempotency_key,
                                 .idempotency_key = {},  // the redriver sets it
                                 .value = found->second,
                                 .headers = {}};
  }
  llmdlq::expected<void, llmdlq::replay_error> send(const llmdlq::redrive_input& input,
                                                    const llmdlq::redrive_reference& link) override {
    if (send_fails) return llmdlq::unexpected(llmdlq::replay_error{*send_fails, "the inbox is full", {}, {}});
    sent.emplace_back(input.value, link);
    keys.push_back(input.idempotency_key);
    return {};
  }
};

struct dlq_fixture {
  llmdlq::test::temp_dir dir;
  std::filesystem::path db = dir.path() / "dlq.db";
  llmdlq::sqlite_store store = *llmdlq::sqlite_store::open(db);
  llmdlq::sqlite_replay_state state = *llmdlq::sqlite_replay_state::open(db);
  std::vector<llmdlq::envelope> letters = llmdlq::test::cut_off_letters(3);  // keys key-0 .. key-2
  memory_source source;

  dlq_fixture() {
    for (const auto& letter : letters) REQUIRE(store.publish(letter).has_value());
    source.inputs = {{"key-0", "scan 0"}, {"key-2", "scan 2"}};
  }

  llmdlq::redrive_options options(bool dry_run) const {
    llmdlq::redrive_options o;
    o.dry_run = dry_run;
    o.rate = 0;
    o.owner = "test";
    return o;
  }

  std::string status(std::size_t i) {
    auto record = store.get(letters[i].dlq_id);
    REQUIRE(record.has_value());
    REQUIRE(record->has_value());
    return std::string(to_string((*record)->status));
  }
};

}  // namespace

TEST_CASE("redriver: a dry run says what it would send and changes nothing", "[llm][redrive]") {
  dlq_fixture f;
  std::vector<llmdlq::redrive_report> reports;
  auto o = f.options(true);
  o.on_letter = [&](const llmdlq::redrive_report& r) { reports.push_back(r); };
  llmdlq::redriver redrive(f.store, f.state, f.source, o);
  auto summary = redrive.run();
  REQUIRE(summary.has_value());
  CHECK(summary->seen == 3);
  CHECK(summary->by_outcome == std::map<std::string, std::size_t>{{"refused", 1}, {"would_send", 2}});
  REQUIRE(reports.size() == 3);
  CHECK(reports[1].detail == "no such input");
  CHECK(f.source.sent.empty());
  CHECK(f.status(0) == "pending");
  CHECK(*f.state.attempts("key-0") == 0);
}

TEST_CASE("redriver: each input goes once per attempt, linked, and its letter becomes redriven", "[llm][redrive]") {
  dlq_fixture f;
  llmdlq::redriver redrive(f.store, f.state, f.source, f.options(false));
  auto summary = redrive.run();
  REQUIRE(summary.has_value());
  CHECK(summary->by_outcome == std::map<std::string, std::size_t>{{"refused", 1}, {"sent", 2}});
  REQUIRE(f.source.sent.size() == 2);
  CHECK(f.source.sent[0].first == "scan 0");
  CHECK(f.source.sent[0].second == llmdlq::redrive_reference{f.letters[0].dlq_id, 1});
  CHECK(f.source.keys == std::vector<std::string>{"key-0", "key-2"});
  CHECK(f.status(0) == "redriven");
  CHECK(f.status(1) == "pending");  // refused: nothing went out, no attempt counted
  CHECK(*f.state.attempts("key-1") == 0);
  CHECK(*f.state.attempts("key-0") == 1);
  // Run again: nothing more is sent.
  REQUIRE(redrive.run().has_value());
  CHECK(f.source.sent.size() == 2);
}

TEST_CASE("redriver: a source that fails stops the run, its attempt counted, and one that refuses a send does not",
          "[llm][redrive]") {
  dlq_fixture f;
  f.source.send_fails = llmdlq::replay_errc::target_unavailable;
  llmdlq::redriver failing(f.store, f.state, f.source, f.options(false));
  auto stopped = failing.run();
  REQUIRE_FALSE(stopped.has_value());
  CHECK(stopped.error().code == llmdlq::replay_errc::target_unavailable);
  CHECK(stopped.error().message == "sending an input back failed: the inbox is full");
  CHECK(*f.state.attempts("key-0") == 1);  // it may have gone out
  CHECK(f.status(0) == "pending");

  f.source.send_fails = llmdlq::replay_errc::target_refused;
  auto summary = failing.run();
  REQUIRE(summary.has_value());
  CHECK(summary->by_outcome.at("refused") == 3);
  CHECK(*f.state.attempts("key-2") == 0);  // refused: given back

  // The lease is the run's: a second redrive waits for it.
  REQUIRE(f.state.acquire_lease("redrive", "someone else", std::chrono::seconds(60)).has_value());
  f.source.send_fails.reset();
  auto busy = failing.run();
  REQUIRE_FALSE(busy.has_value());
  CHECK(busy.error().code == llmdlq::replay_errc::lease_held);
  CHECK(busy.error().holder == "someone else");
}

TEST_CASE("redriver: two automated attempts per payload, a replay's and a redrive's together", "[llm][redrive]") {
  dlq_fixture f;
  REQUIRE(f.state.reserve_attempt("key-0", 2).has_value());  // a replay's model call
  REQUIRE(f.state.reserve_attempt("key-2", 2).has_value());
  REQUIRE(f.state.reserve_attempt("key-2", 2).has_value());
  std::vector<llmdlq::redrive_report> reports;
  auto o = f.options(false);
  o.on_letter = [&](const llmdlq::redrive_report& r) { reports.push_back(r); };
  llmdlq::redriver redrive(f.store, f.state, f.source, o);
  auto summary = redrive.run();
  REQUIRE(summary.has_value());
  REQUIRE(f.source.sent.size() == 1);
  CHECK(f.source.sent[0].second.count == 2);
  CHECK(reports[2].outcome == "spent");
  CHECK(reports[2].detail == "its 2 automated attempts are spent: it goes to a person");
  CHECK(f.status(2) == "pending");
}

TEST_CASE("redriver: a redriven letter whose input succeeded is settled as recovered", "[llm][redrive]") {
  dlq_fixture f;
  llmdlq::redriver redrive(f.store, f.state, f.source, f.options(false));
  REQUIRE(redrive.run().has_value());
  llmdlq::request_context ctx;
  ctx.idempotency_key = "key-0";
  llmdlq::apply_redrive(ctx, f.source.sent[0].second);
  CHECK(ctx.attempt == 2);
  REQUIRE(llmdlq::note_redrive_success(f.state, ctx, llmdlq::test::recovered_answer(0)).has_value());
  llmdlq::request_context plain;  // not redriven: nothing noted
  plain.idempotency_key = "key-2";
  REQUIRE(llmdlq::note_redrive_success(f.state, plain, "{}").has_value());
  CHECK_FALSE(f.state.find_output("key-2")->has_value());
  auto summary = redrive.run();
  REQUIRE(summary.has_value());
  CHECK(summary->settled == 1);
  CHECK(f.status(0) == "recovered");
  CHECK(f.status(2) == "redriven");
  auto record = f.store.get(f.letters[0].dlq_id);
  CHECK((*record)->resolution == llmdlq::test::recovered_answer(0));
}

}  // namespace redriver_test
