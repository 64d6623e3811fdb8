// SPDX-License-Identifier: MIT
// Four `llmdlq replay` processes with sixteen calls in flight each share one
// SQLite DLQ of 2,000 letters through their claims, killed with -9 round
// after round: every letter ends recovered, exhausted or held, no payload is
// asked more than twice, and none is delivered twice or lost.
#ifndef LLMDLQ_TEST_HTTPLIB

#include "catch.hpp"
#include "support/skip.hpp"

TEST_CASE("replayers sharing a SQLite DLQ: kill -9 in twenty rounds", "[tools][replay][crash][slow]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/replayer_kill_run.hpp"

namespace replayers_kill_test {

TEST_CASE("replayers sharing a SQLite DLQ: kill -9 in twenty rounds", "[tools][replay][crash][slow]") {
  constexpr std::size_t letters = 2000;
  llmdlq::test::temp_dir dir;
  const auto db = dir.path() / "dlq.db";
  const auto all = llmdlq::test::cut_off_letters(letters);
  {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    for (const auto& letter : all) REQUIRE(store->publish(letter).has_value());
  }
  llmdlq::test::replayer_kill_subject subject;
  subject.store = "sqlite:" + db.string();
  subject.statuses = [&] {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    return llmdlq::test::statuses_by_key(*store, letters);
  };
  subject.attempts = [&] {
    auto state = llmdlq::sqlite_replay_state::open(db);
    REQUIRE(state.has_value());
    std::map<std::string, std::uint32_t> made;
    for (const auto& letter : all) made[letter.idempotency_key] = state->attempts(letter.idempotency_key).value();
    return made;
  };
  const auto tally = llmdlq::test::run_replayer_kill_rounds(subject, letters, 20);
  llmdlq::test::check_replayer_kill_tally(tally, letters, 20);
}

}  // namespace replayers_kill_test

#endif
