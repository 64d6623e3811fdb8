// SPDX-License-Identifier: MIT
// Replaying a SQLite DLQ: dry runs change nothing, real runs move records
// along, claims keep replays off each other's payloads, the cursor resumes,
// the rate paces, and the ledger writes each payload downstream once, also
// across kill -9.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include <fstream>
#include <string>

#include <llmdlq/llm/moderation_replay_source.hpp>
#include <llmdlq/llm/recovery_ladder.hpp>
#include <llmdlq/llm/replayer.hpp>
#include <llmdlq/llm/resolution_delivery.hpp>
#include <llmdlq/llm/testing.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/temp_dir.hpp"

namespace replayer_test {

namespace {

using namespace std::chrono_literals;
using llmdlq::moderation_status;
using llmdlq::testing::manual_clock;
using llmdlq::testing::scripted_llm_client;

constexpr std::string_view schema_text = R"({
  "type": "object", "required": ["name", "total"],
  "properties": {"name": {"type": "string"}, "total": {"type": "number"}}
})";

std::string valid(int i) { return R"({"name": "r)" + std::to_string(i) + R"(", "total": 1})"; }

// A DLQ with `n` cut-off responses (keys k0..k(n-1)), each recoverable by a re-ask.
void fill(llmdlq::sqlite_store& store, int n, manual_clock& clock) {
  auto schema = llmdlq::schema::compile(schema_text);
  REQUIRE(schema.has_value());
  for (int i = 0; i < n; ++i) {
    llmdlq::request_context ctx;
    ctx.idempotency_key = "k" + std::to_string(i);
    ctx.model.name = "m";
    ctx.model.max_tokens = 100;
    ctx.finish_reason = "length";
    llmdlq::process_options o;
    o.clock = clock.function();
    auto judged = llmdlq::process_llm_response(R"({"name": "r)" + std::to_string(i), *schema, ctx, o);
    REQUIRE_FALSE(judged.has_value());
    REQUIRE(store.publish(judged.error()).has_value());
    clock.advance(1s);
  }
}

// Appends each delivery to a file, one line per key; kills the process at the chosen moment.
class file_target final : public llmdlq::replay_target {
 public:
  explicit file_target(std::filesystem::path path, bool die_before_write = false)
      : path_(std::move(path)), die_(die_before_write) {}
  llmdlq::expected<void, llmdlq::replay_error> deliver(const llmdlq::ledger_entry& entry) override {
    if (die_) ::raise(SIGKILL);
    std::ofstream(path_, std::ios::app) << entry.idempotency_key << ' ' << entry.output << '\n';
    return {};
  }

 private:
  std::filesystem::path path_;
  bool die_;
};

// A target that fails every delivery with `code`.
class failing_target final : public llmdlq::replay_target {
 public:
  explicit failing_target(llmdlq::replay_errc code) : code_(code) {}
  llmdlq::expected<void, llmdlq::replay_error> deliver(const llmdlq::ledger_entry&) override {
    return llmdlq::unexpected(llmdlq::replay_error{code_, "no room downstream", {}, {}});
  }

 private:
  llmdlq::replay_errc code_;
};

// A source whose reads fail with `code`.
class failing_source final : public llmdlq::replay_source {
 public:
  explicit failing_source(llmdlq::replay_errc code) : code_(code) {}
  llmdlq::expected<std::vector<llmdlq::stored_letter>, llmdlq::replay_error> next(std::string_view,
                                                                                  std::size_t) override {
    return llmdlq::unexpected(llmdlq::replay_error{code_, "the topic is gone", {}, {}});
  }
  llmdlq::expected<llmdlq::letter_standing, llmdlq::replay_error> update(const llmdlq::stored_letter&,
                                                                         const llmdlq::envelope&,
                                                                         const llmdlq::recovery_result&) override {
    return llmdlq::letter_standing::ours;
  }
  llmdlq::expected<llmdlq::letter_standing, llmdlq::replay_error> record_call(const llmdlq::stored_letter&,
                                                                              const llmdlq::envelope&) override {
    return llmdlq::letter_standing::ours;
  }
  llmdlq::expected<llmdlq::letter_standing, llmdlq::replay_error> recheck(const llmdlq::stored_letter&) override {
    return llmdlq::letter_standing::ours;
  }

 private:
  llmdlq::replay_errc code_;
};

// Runs `sql` on the database at `path`, as another program (or a bad disk) would.
void tamper(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct fixture {
  llmdlq::test::temp_dir dir;
  manual_clock clock;
  scripted_llm_client model;
  std::filesystem::path db = dir.path() / "dlq.db";
  llmdlq::sqlite_store store = *llmdlq::sqlite_store::open(db);
  llmdlq::sqlite_replay_state state = *llmdlq::sqlite_replay_state::open(db, {.clock = clock.function()});
  llmdlq::recovery_ladder_options recovery;
  llmdlq::replayer_options replay;

  fixture() {
    recovery.clock = clock.function();
    recovery.sleep = clock.sleeper();
    replay.clock = clock.function();
    replay.sleep = clock.sleeper();
    replay.owner = "test";
    replay.dry_run = false;
  }
  llmdlq::recovery_ladder ladder() { return *llmdlq::recovery_ladder::create(schema_text, model, recovery); }
};

}  // namespace

TEST_CASE("A dry run counts next steps, calls no model and changes nothing", "[replay]") {
  fixture f;
  fill(f.store, 3, f.clock);
  f.replay.dry_run = true;
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  llmdlq::replayer replay(ladder, source, f.state, f.replay);
  auto summary = replay.run();
  REQUIRE(summary.has_value());
  CHECK(summary->selected == 3);
  CHECK(summary->by_outcome["repair_prompt"] == 3);
  CHECK(summary->samples.size() == 3);
  CHECK(f.model.calls() == 0);
  CHECK(f.store.list(moderation_status::pending, 10)->size() == 3);
  CHECK(f.state.attempts("k0") == 0u);
}

TEST_CASE("A dry run counts a payload the ledger holds as a duplicate, as a real run would", "[replay]") {
  fixture f;
  fill(f.store, 2, f.clock);
  REQUIRE(f.state.record_output("k0", "original", "", valid(0)).has_value());
  f.replay.dry_run = true;
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  llmdlq::replayer replay(ladder, source, f.state, f.replay);
  auto summary = replay.run();
  REQUIRE(summary.has_value());
  CHECK(summary->by_outcome == std::map<std::string, std::size_t>{{"duplicate", 1}, {"repair_prompt", 1}});
  CHECK(summary->samples.size() == 1);
  CHECK(f.model.calls() == 0);
}

TEST_CASE("A real run recovers, records the attempt and writes each payload once", "[replay]") {
  fixture f;
  fill(f.store, 3, f.clock);
  for (int i = 0; i < 3; ++i) f.model.then_reply(valid(i), {50, 10});
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  file_target target(f.dir.path() / "out.txt");
  llmdlq::replayer replay(ladder, source, f.state, f.replay);
  replay.deliver_to(target);
  auto summary = replay.run();
  REQUIRE(summary.has_value());
  CHECK(summary->recovered == 3);
  CHECK(summary->finished);
  CHECK(summary->usage.total() == 180);
  CHECK(lines_of(f.dir.path() / "out.txt").size() == 3);
  CHECK(f.store.list(moderation_status::recovered, 10)->size() == 3);
  auto stored = f.store.find(f.store.list(moderation_status::recovered, 1)->at(0).dlq_id);
  REQUIRE(stored.has_value());
  REQUIRE(stored->has_value());
  CHECK((*stored)->attempts.history.size() == 1);
  CHECK((*stored)->attempts.history[0].tokens == 60);
  // A second run finds nothing left to do: no call, no write.
  auto again = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(again.has_value());
  CHECK(again->selected == 0);
  CHECK(f.model.calls() == 3);
}

TEST_CASE("A late original and a replay both succeed: one downstream write", "[replay][ledger]") {
  fixture f;
  fill(f.store, 1, f.clock);
  // The original worker finished after all, and wrote through the ledger first.
  auto original = f.state.record_output("k0", "worker", "", valid(0));
  REQUIRE(original.has_value());
  REQUIRE(original->first);
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  file_target target(f.dir.path() / "out.txt");
  llmdlq::replayer replay(ladder, source, f.state, f.replay);
  replay.deliver_to(target);
  auto summary = replay.run();
  REQUIRE(summary.has_value());
  CHECK(summary->duplicates == 1);
  CHECK(summary->recovered == 0);
  CHECK(f.model.calls() == 0);  // the ledger answered before any call
  CHECK(lines_of(f.dir.path() / "out.txt").empty());
  CHECK(f.store.list(moderation_status::recovered, 10)->size() == 1);

  SECTION("and when the original writes after the replay, the original is the duplicate") {
    auto late = f.state.record_output("k0", "worker", "", valid(0));
    REQUIRE(late.has_value());
    CHECK_FALSE(late->first);
    CHECK(late->source == "worker");
  }
}

TEST_CASE("Replays share a store: a payload another replay claimed is left to it until its claim expires",
          "[replay][claims]") {
  fixture f;
  fill(f.store, 2, f.clock);
  REQUIRE(f.state.claim("payload k0", "someone-else", 60s).value());
  f.model.then_reply(valid(1));
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  auto summary = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(summary.has_value());
  CHECK(summary->claimed_elsewhere == 1);
  CHECK(summary->recovered == 1);
  CHECK(summary->finished);
  CHECK(f.model.calls() == 1);
  CHECK(f.store.list(moderation_status::pending, 10)->size() == 1);
  // Its claim holds: the next pass leaves it again, and calls nothing.
  summary = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(summary.has_value());
  CHECK(summary->claimed_elsewhere == 1);
  CHECK(f.model.calls() == 1);
  f.clock.advance(61s);  // the other replay died: its claim expires
  f.model.then_reply(valid(0));
  summary = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(summary.has_value());
  CHECK(summary->claimed_elsewhere == 0);
  CHECK(summary->recovered == 1);
  CHECK(f.model.calls() == 2);
  CHECK(f.store.list(moderation_status::pending, 10)->empty());
  // The run gave its own claims back: another owner takes them at once.
  CHECK(f.state.claim("payload k0", "someone-else", 60s).value());
}

// A moderation source that keeps its own place, as a consumer group does: it records what it is told to keep.
class place_keeping_source final : public llmdlq::replay_source {
 public:
  explicit place_keeping_source(llmdlq::replay_source& inner) : inner_(inner) {}
  llmdlq::expected<std::vector<llmdlq::stored_letter>, llmdlq::replay_error> next(std::string_view after,
                                                                                  std::size_t limit) override {
    return inner_.next(after, limit);
  }
  llmdlq::expected<llmdlq::letter_standing, llmdlq::replay_error> update(
      const llmdlq::stored_letter& before, const llmdlq::envelope& after,
      const llmdlq::recovery_result& result) override {
    return inner_.update(before, after, result);
  }
  llmdlq::expected<llmdlq::letter_standing, llmdlq::replay_error> record_call(
      const llmdlq::stored_letter& letter, const llmdlq::envelope& with_call) override {
    return inner_.record_call(letter, with_call);
  }
  llmdlq::expected<llmdlq::letter_standing, llmdlq::replay_error> recheck(
      const llmdlq::stored_letter& letter) override {
    return inner_.recheck(letter);
  }
  llmdlq::expected<void, llmdlq::replay_error> passed(std::string_view position) override {
    kept.emplace_back(position);
    return {};
  }
  std::vector<std::string> kept;

 private:
  llmdlq::replay_source& inner_;
};

TEST_CASE("A source that keeps its own place is never told to keep one past a letter left for later",
          "[replay][claims]") {
  fixture f;
  fill(f.store, 3, f.clock);
  REQUIRE(f.state.claim("payload k1", "someone-else", 60s).value());
  f.model.then_reply(valid(0)).then_reply(valid(2));
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source letters(f.store);
  const auto positions = letters.next("", 10);
  REQUIRE(positions.has_value());
  REQUIRE(positions->size() == 3);
  place_keeping_source source(letters);
  auto summary = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(summary.has_value());
  CHECK(summary->finished);
  CHECK(summary->recovered == 2);
  CHECK(summary->claimed_elsewhere == 1);
  // k0 is done with; k1 waits for the replay that holds it, and k2, done, lies beyond it.
  REQUIRE_FALSE(source.kept.empty());
  for (const auto& position : source.kept) CHECK(position == (*positions)[0].position);
}

TEST_CASE("A stopped replay resumes after the last letter it finished, and one that waits is asked on the next pass",
          "[replay][cursor]") {
  fixture f;
  fill(f.store, 4, f.clock);
  f.model.then_reply(valid(0)).then_fail("server_error");  // the second letter meets a failing endpoint
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  f.replay.limit = 2;
  auto first = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(first.has_value());
  CHECK_FALSE(first->finished);
  CHECK(first->recovered == 1);
  CHECK(first->by_outcome.at("call_failed") == 1);
  const auto hold = f.state.hold(llmdlq::payload_hold_key("k1"));
  REQUIRE(hold.has_value());
  CHECK(hold->failures == 1);
  CHECK(f.state.attempts("k1") == 0u);  // the failed call gave its attempt back

  // Resumed later: it starts after the last letter it finished, the one that waits included.
  f.clock.advance(5min);
  f.replay.limit = 0;
  for (int i = 2; i < 4; ++i) f.model.then_reply(valid(i));
  auto second = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(second.has_value());
  CHECK(second->finished);
  CHECK(second->seen == 2);
  CHECK(second->recovered == 2);

  // The next pass starts over and asks the letter that waited.
  f.model.then_reply(valid(1));
  auto third = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(third.has_value());
  CHECK(third->finished);
  CHECK(third->seen == 1);
  CHECK(third->recovered == 1);
  CHECK(f.model.calls() == 5);
  CHECK(f.state.attempts("k1") == 1u);
  CHECK(f.state.hold(llmdlq::payload_hold_key("k1"))->failures == 0);  // lifted by the answer
}

TEST_CASE("The rate paces letters", "[replay][rate]") {
  fixture f;
  fill(f.store, 5, f.clock);
  for (int i = 0; i < 5; ++i) f.model.then_reply(valid(i));
  f.replay.rate = 2.0;  // letters per second
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  const auto start = f.clock.now();
  auto summary = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(summary.has_value());
  CHECK(summary->recovered == 5);
  CHECK(f.clock.now() - start >= 2000ms);  // 5 letters at 2/s: 4 waits of 500 ms
}

TEST_CASE("kill -9 between the model call and the write: nothing written twice, nothing lost", "[replay][crash]") {
  fixture f;
  fill(f.store, 1, f.clock);
  const auto out = f.dir.path() / "out.txt";
  // The child gets its answer, then dies before the ledger records it.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    struct dying_client final : llmdlq::llm_client {
      llmdlq::expected<llmdlq::completion, llmdlq::call_error> complete(const llmdlq::llm_request&) override {
        ::raise(SIGKILL);
        return llmdlq::completion{};
      }
      std::string endpoint() const override { return "dying"; }
    } dying;
    auto store = *llmdlq::sqlite_store::open(f.db);
    auto state = *llmdlq::sqlite_replay_state::open(f.db);
    auto ladder = *llmdlq::recovery_ladder::create(schema_text, dying, f.recovery);
    llmdlq::moderation_replay_source source(store);
    file_target target(out);
    llmdlq::replayer replay(ladder, source, state, f.replay);
    replay.deliver_to(target);
    (void)replay.run();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  CHECK(f.state.attempts("k0") == 1u);  // counted before the call
  CHECK(lines_of(out).empty());
  f.clock.advance(10min);  // the dead replay's lease expires
  f.model.then_reply(valid(0));
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  file_target target(out);
  llmdlq::replayer replay(ladder, source, f.state, f.replay);
  replay.deliver_to(target);
  auto summary = replay.run();
  REQUIRE(summary.has_value());
  CHECK(summary->recovered == 1);
  CHECK(lines_of(out).size() == 1);
  CHECK(f.state.attempts("k0") == 2u);
}

TEST_CASE("kill -9 between the ledger and the delivery: the resumed replay delivers it once", "[replay][crash]") {
  fixture f;
  fill(f.store, 1, f.clock);
  const auto out = f.dir.path() / "out.txt";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    scripted_llm_client model;
    model.then_reply(valid(0));
    auto store = *llmdlq::sqlite_store::open(f.db);
    auto state = *llmdlq::sqlite_replay_state::open(f.db);
    auto ladder = *llmdlq::recovery_ladder::create(schema_text, model, f.recovery);
    llmdlq::moderation_replay_source source(store);
    file_target dying(out, /*die_before_write=*/true);
    llmdlq::replayer replay(ladder, source, state, f.replay);
    replay.deliver_to(dying);
    (void)replay.run();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  auto recorded = f.state.find_output("k0");
  REQUIRE(recorded.has_value());
  REQUIRE(recorded->has_value());
  CHECK_FALSE((*recorded)->delivered);
  f.clock.advance(10min);
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  file_target target(out);
  llmdlq::replayer replay(ladder, source, f.state, f.replay);
  replay.deliver_to(target);
  auto summary = replay.run();
  REQUIRE(summary.has_value());
  CHECK(summary->delivered == 1);
  CHECK(lines_of(out).size() == 1);
  CHECK(f.model.calls() == 0);  // the ledger had the payload: no second call
}

TEST_CASE("A relaxed letter goes downstream once and stays pending for review", "[replay][relax]") {
  fixture f;
  f.recovery.relaxation.allow_additional_properties = true;
  auto schema = llmdlq::schema::compile(R"({"type": "object", "required": ["name", "total"],
      "properties": {"name": {"type": "string"}, "total": {"type": "number"}}, "additionalProperties": false})");
  llmdlq::request_context ctx;
  ctx.idempotency_key = "relax-me";
  auto judged = llmdlq::process_llm_response(R"({"name": "r", "total": 1, "discount_code": "X"})", *schema, ctx);
  REQUIRE_FALSE(judged.has_value());
  REQUIRE(f.store.publish(judged.error()).has_value());
  auto ladder = *llmdlq::recovery_ladder::create(R"({"type": "object", "required": ["name", "total"],
      "properties": {"name": {"type": "string"}, "total": {"type": "number"}}, "additionalProperties": false})",
                                                 f.model, f.recovery);
  llmdlq::moderation_replay_source source(f.store);
  file_target target(f.dir.path() / "out.txt");
  for (int run = 0; run < 2; ++run) {
    llmdlq::replayer replay(ladder, source, f.state, f.replay);
    replay.deliver_to(target);
    auto summary = replay.run();
    REQUIRE(summary.has_value());
    CHECK(summary->by_outcome["relaxed"] == 1);
  }
  CHECK(lines_of(f.dir.path() / "out.txt").size() == 1);
  CHECK(f.store.list(moderation_status::pending, 10)->size() == 1);
  CHECK(f.store.list(moderation_status::recovered, 10)->empty());
  CHECK(f.model.calls() == 0);
}

TEST_CASE("A letter whose record does not read back is skipped, counted and named, and the others replayed",
          "[replay][unreadable]") {
  fixture f;
  fill(f.store, 5, f.clock);
  const auto records = f.store.list(moderation_status::pending, 10);
  REQUIRE(records->size() == 5);
  const std::string broken = records->at(2).dlq_id;
  {  // as a bad disk or a hand-made update would leave it
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(f.db.c_str(), &db) == SQLITE_OK);
    const std::string sql = "UPDATE dead_letters SET envelope = '{garbage' WHERE dlq_id = '" + broken + "'";
    CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  for (const int i : {0, 1, 3, 4}) f.model.then_reply(valid(i), {50, 10});
  f.replay.batch = 3;  // the broken letter ends the first batch: the cursor passes it
  std::vector<std::string> named;
  f.replay.on_unreadable = [&](const llmdlq::unreadable_record& r) { named.push_back(r.dlq_id); };
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  auto summary = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(summary.has_value());
  CHECK(summary->finished);
  CHECK(summary->seen == 5);
  CHECK(summary->selected == 4);
  CHECK(summary->recovered == 4);
  CHECK(summary->unreadable == 1);
  REQUIRE(summary->unreadable_letters.size() == 1);
  CHECK(summary->unreadable_letters[0].dlq_id == broken);
  CHECK(summary->unreadable_letters[0].reason.find("not JSON") != std::string::npos);
  CHECK(named == std::vector<std::string>{broken});
  CHECK(f.store.list(moderation_status::recovered, 10)->size() == 4);
  const auto left = f.store.get(broken);
  REQUIRE(left.has_value());
  REQUIRE(left->has_value());
  CHECK((*left)->status == moderation_status::pending);
  CHECK((*left)->defect == llmdlq::record_defect::envelope);
  CHECK((*left)->envelope_json == "{garbage");

  // Reported again by the next run; not by one whose selection names other letters.
  f.replay.dry_run = true;
  auto again = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(again.has_value());
  CHECK(again->unreadable == 1);
  f.replay.filter.dlq_ids = {records->at(0).dlq_id};
  again = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE(again.has_value());
  CHECK(again->unreadable == 0);
}

TEST_CASE("A target's failure stops the run with its code, and the next run delivers what the ledger kept",
          "[replay][errors]") {
  fixture f;
  fill(f.store, 2, f.clock);
  f.model.then_reply(valid(0));
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  const auto code = GENERATE(llmdlq::replay_errc::target_unavailable, llmdlq::replay_errc::target_refused);
  CAPTURE(llmdlq::to_string(code));
  failing_target failing(code);
  llmdlq::replayer replay(ladder, source, f.state, f.replay);
  replay.deliver_to(failing);
  auto summary = replay.run();
  REQUIRE_FALSE(summary.has_value());
  CHECK(summary.error().code == code);
  CHECK(llmdlq::is_permanent(summary.error().code) == (code == llmdlq::replay_errc::target_refused));
  CHECK(summary.error().message == "the target refused a delivery: no room downstream");
  CHECK(f.model.calls() == 1);  // the run stopped at the first delivery

  // The payload stayed undelivered in the ledger: the next run delivers it first, without asking again.
  f.model.then_reply(valid(1));
  const auto out = f.dir.path() / "out.txt";
  file_target target(out);
  llmdlq::replayer again(ladder, source, f.state, f.replay);
  again.deliver_to(target);
  auto resumed = again.run();
  REQUIRE(resumed.has_value());
  CHECK(resumed->delivered == 2);
  CHECK(lines_of(out).size() == 2);
  CHECK(f.model.calls() == 2);
}

TEST_CASE("A source's failure stops the run with the source's code", "[replay][errors]") {
  fixture f;
  auto ladder = f.ladder();
  const auto code = GENERATE(llmdlq::replay_errc::source_unavailable, llmdlq::replay_errc::source_refused);
  CAPTURE(llmdlq::to_string(code));
  failing_source source(code);
  auto summary = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE_FALSE(summary.has_value());
  CHECK(summary.error().code == code);
  CHECK(summary.error().message == "the source failed: the topic is gone");
}

TEST_CASE("A moderation store that fails is source_unavailable, a replay state that fails state_unavailable",
          "[replay][errors]") {
  fixture f;
  fill(f.store, 1, f.clock);
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);

  SECTION("the store's table is gone") {
    tamper(f.db, "ALTER TABLE dead_letters RENAME TO elsewhere");
    auto read = source.next("", 10);
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().code == llmdlq::replay_errc::source_unavailable);
    CHECK(read.error().message.starts_with("listing requeued letters: "));
    auto summary = llmdlq::replayer(ladder, source, f.state, f.replay).run();
    REQUIRE_FALSE(summary.has_value());
    CHECK(summary.error().code == llmdlq::replay_errc::source_unavailable);
  }
  SECTION("the ledger's table is gone") {
    tamper(f.db, "DROP TABLE llmdlq_replay_ledger");
    auto summary = llmdlq::replayer(ladder, source, f.state, f.replay).run();
    REQUIRE_FALSE(summary.has_value());
    CHECK(summary.error().code == llmdlq::replay_errc::state_unavailable);
    CHECK_FALSE(llmdlq::is_permanent(summary.error().code));
  }
  CHECK(f.model.calls() == 0);
}

TEST_CASE("A replay whose lease another replay took meanwhile stops with lease_lost", "[replay][errors][lease]") {
  fixture f;
  fill(f.store, 3, f.clock);
  for (int i = 0; i < 3; ++i) f.model.then_reply(valid(i));
  f.replay.lease_ttl = 60s;
  f.replay.batch = 1;
  // After the first letter this replay stalls past its lease, and another takes it.
  bool taken = false;
  f.replay.progress = [&](const llmdlq::replay_progress&) {
    if (taken) return;
    taken = true;
    f.clock.advance(61s);
    REQUIRE(f.state.acquire_lease("replay test", "someone-else", 60s).has_value());  // the run's own lease
  };
  auto ladder = f.ladder();
  llmdlq::moderation_replay_source source(f.store);
  auto summary = llmdlq::replayer(ladder, source, f.state, f.replay).run();
  REQUIRE_FALSE(summary.has_value());
  CHECK(summary.error().code == llmdlq::replay_errc::lease_lost);
  CHECK(summary.error().holder == "someone-else");
  CHECK(f.model.calls() == 1);
}

TEST_CASE("deliver_resolutions passes the target's and the state's codes on", "[replay][errors][deliver]") {
  fixture f;
  fill(f.store, 1, f.clock);
  const auto records = f.store.list(moderation_status::pending, 10);
  REQUIRE(records->size() == 1);
  const std::string id = records->at(0).dlq_id;
  REQUIRE(f.store.act({id, llmdlq::moderation_action::claim, "ana", "", std::nullopt}).has_value());
  REQUIRE(f.store.act({id, llmdlq::moderation_action::resolve, "ana", "fixed", valid(0)}).has_value());

  SECTION("a target that refuses") {
    failing_target refusing(llmdlq::replay_errc::target_refused);
    auto delivered = llmdlq::deliver_resolutions(f.store, f.state, refusing);
    REQUIRE_FALSE(delivered.has_value());
    CHECK(delivered.error().code == llmdlq::replay_errc::target_refused);
    CHECK(delivered.error().message == "the target refused a correction: no room downstream");
  }
  SECTION("a ledger that fails") {
    tamper(f.db, "DROP TABLE llmdlq_replay_ledger");
    file_target target(f.dir.path() / "out.txt");
    auto delivered = llmdlq::deliver_resolutions(f.store, f.state, target);
    REQUIRE_FALSE(delivered.has_value());
    CHECK(delivered.error().code == llmdlq::replay_errc::state_unavailable);
  }
  SECTION("a store that fails") {
    tamper(f.db, "ALTER TABLE dead_letters RENAME TO elsewhere");
    file_target target(f.dir.path() / "out.txt");
    auto delivered = llmdlq::deliver_resolutions(f.store, f.state, target);
    REQUIRE_FALSE(delivered.has_value());
    CHECK(delivered.error().code == llmdlq::replay_errc::source_unavailable);
  }
}

}  // namespace replayer_test
