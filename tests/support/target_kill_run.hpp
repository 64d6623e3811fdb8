// SPDX-License-Identifier: MIT
// kill -9 between the replay ledger and a target, for every kind of target:
// rounds of `llmdlq deliver` killed at a moment drawn for each round, then
// run again to the end. Whatever the moment (before the ledger, between the
// ledger and the target, between the target and the ledger's confirmation),
// the target must end up holding each correction exactly once. Needs the
// tool (LLMDLQ_TOOL) and a moderation store in SQLite.
#pragma once

#include <signal.h>
#include <sqlite3.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <llmdlq/llm/resolution_delivery.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/eventually.hpp"
#include "support/replay_letters.hpp"
#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

namespace llmdlq::test {

/// A payload as the ledger hands it to a target: recorded now, with a
/// correction's who and why when `source` is `operator`.
inline ledger_entry sample_delivery(const std::string& key, const std::string& source = "operator") {
  ledger_entry e;
  e.first = true;
  e.idempotency_key = key;
  e.source = source;
  e.dlq_id = "dlq-" + key;
  e.output = R"({"total": 2920.00})";
  e.written_at = system_now();
  if (source == "operator") {
    e.resolved_by = "ann";
    e.note = "read off the scan";
  }
  return e;
}

/// The target under test.
struct target_kill_subject {
  std::string spec;  ///< as `--to` takes it
  /// How many records the target holds, by idempotency key.
  std::function<std::map<std::string, std::size_t>()> delivered;
};

struct target_kill_tally {
  std::size_t rounds = 0, killed = 0, corrections = 0, delivered_once = 0, lost = 0, duplicated = 0;
};

namespace target_kill_detail {

// A SQLite DLQ of `n` letters, each resolved with a correction, whose
// idempotency keys start with `prefix`.
inline void fill_resolved(const std::filesystem::path& db, const std::string& prefix, std::size_t n) {
  auto store = sqlite_store::open(db);
  REQUIRE(store.has_value());
  auto letters = cut_off_letters(n);
  for (std::size_t i = 0; i < letters.size(); ++i) {
    letters[i].idempotency_key = prefix + std::to_string(i);
    REQUIRE(store->publish(letters[i]).has_value());
    for (const auto action : {moderation_action::claim, moderation_action::resolve}) {
      moderation_request request{letters[i].dlq_id, action, "ann", "read off the scan", std::nullopt, std::nullopt};
      if (action == moderation_action::resolve) {
        request.corrected = R"({"name": "letter-)" + std::to_string(i) + R"(", "total": 2920.00})";
      }
      REQUIRE(store->act(request).has_value());
    }
  }
}

// Payloads the ledger in `db` has recorded so far (0 while it has no ledger yet).
inline std::size_t recorded(const std::filesystem::path& db) {
  sqlite3* handle = nullptr;
  std::size_t count = 0;
  if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(handle, 1000);
    sqlite3_stmt* query = nullptr;
    if (sqlite3_prepare_v2(handle, "SELECT count(*) FROM llmdlq_replay_ledger", -1, &query, nullptr) == SQLITE_OK &&
        sqlite3_step(query) == SQLITE_ROW) {
      count = static_cast<std::size_t>(sqlite3_column_int64(query, 0));
    }
    sqlite3_finalize(query);
  }
  sqlite3_close(handle);
  return count;
}

}  // namespace target_kill_detail

/// `rounds` rounds of `n` corrections each, into one target: the first runs
/// whole; each later one is killed with SIGKILL once its ledger has recorded
/// a number of corrections drawn for the round (so the kill lands around
/// that delivery: before the ledger, between it and the target, or before
/// the confirmation), then run again to the end.
inline target_kill_tally run_target_kill_rounds(const target_kill_subject& subject, std::size_t rounds, std::size_t n) {
  temp_dir dir;
  const auto allowlist = dir.write("targets.allow", subject.spec + "\n");
  const std::uint32_t seed = std::random_device{}();
  std::mt19937 draw(seed);
  std::cout << "target kill run on " << subject.spec << ": seed " << seed << "\n";
  target_kill_tally tally;
  for (std::size_t round = 0; round < rounds; ++round) {
    const auto db = dir.path() / ("round-" + std::to_string(round) + ".db");
    const std::string prefix = "round-" + std::to_string(round) + "-" + std::to_string(seed) + "-key-";
    target_kill_detail::fill_resolved(db, prefix, n);
    const std::vector<std::string> deliver{"deliver",    "sqlite:" + db.string(), "--to",
                                           subject.spec, "--allowlist",           allowlist};
    if (round > 0) {
      const auto at = std::uniform_int_distribution<std::size_t>(1, n - 1)(draw);
      const pid_t pid = start_llmdlq(deliver);
      (void)eventually([&] { return target_kill_detail::recorded(db) >= at; }, std::chrono::seconds(60));
      ::kill(pid, SIGKILL);
      if (exit_code_of(pid) == 128 + SIGKILL && target_kill_detail::recorded(db) < n) ++tally.killed;
    }
    const pid_t pid = start_llmdlq(deliver);
    REQUIRE(exit_code_of(pid) == 0);
    const auto held = subject.delivered();
    for (std::size_t i = 0; i < n; ++i) {
      const auto found = held.find(prefix + std::to_string(i));
      const std::size_t count = found == held.end() ? 0 : found->second;
      ++tally.corrections;
      if (count == 0) ++tally.lost;
      if (count == 1) ++tally.delivered_once;
      if (count > 1) ++tally.duplicated;
    }
    ++tally.rounds;
  }
  // The widest window, made on purpose: every correction of the last round
  // written to the target and none confirmed in the ledger, as when a run
  // dies just before its confirmations. The next run finds them all there.
  if (rounds > 0) {
    const auto db = dir.path() / ("round-" + std::to_string(rounds - 1) + ".db");
    sqlite3* handle = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &handle) == SQLITE_OK);
    CHECK(sqlite3_exec(handle, "UPDATE llmdlq_replay_ledger SET delivered = 0", nullptr, nullptr, nullptr) ==
          SQLITE_OK);
    CHECK(sqlite3_changes(handle) == static_cast<int>(n));
    sqlite3_close(handle);
    const auto before = subject.delivered();
    REQUIRE(exit_code_of(start_llmdlq({"deliver", "sqlite:" + db.string(), "--to", subject.spec, "--allowlist",
                                       allowlist})) == 0);
    CHECK(subject.delivered() == before);
  }
  std::cout << "target kill run on " << subject.spec << ": " << tally.rounds << " rounds, " << tally.killed
            << " killed midway, " << tally.corrections << " corrections, " << tally.delivered_once
            << " delivered once, " << tally.lost << " lost, " << tally.duplicated << " duplicated\n";
  return tally;
}

}  // namespace llmdlq::test
