// SPDX-License-Identifier: MIT
// The fault run (support/fault_run.hpp) on one SQLite DLQ file: writers, a
// replay, a purge and an operator on the same file, kill -9 among them.
#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("fault run: kill -9 among writers, a replay, a purge and an operator", "[tools][fault]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <sqlite3.h>

#include <set>
#include <sstream>
#include <string>

#include <llmdlq/sqlite/replay_state.hpp>

#include "support/fault_run.hpp"

namespace fault_run_test {

namespace {

// One value of a one-row, one-column query (empty when none).
std::string query_text(const std::string& file, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string value;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK) {
      sqlite3_busy_timeout(db, 5000);
      for (int row = 0; sqlite3_step(s) == SQLITE_ROW; ++row) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
        value += (row > 0 ? "\n" : "") + std::string(text ? text : "");
      }
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return value;
}

}  // namespace

TEST_CASE("fault run: kill -9 among four writers, a replay, a purge and an operator on one SQLite file",
          "[tools][fault]") {
  llmdlq::test::temp_dir dir;
  const std::string db = (std::filesystem::canonical(dir.path()) / "dlq.db").string();
  const auto count = [&](const std::string& sql) { return std::stoull("0" + query_text(db, sql)); };
  llmdlq::test::fault_run_store store;
  store.kind = "sqlite";
  store.spec = "sqlite:" + db;
  store.stored_ids = [&] {
    std::set<std::string> ids;
    std::istringstream rows(query_text(db, "SELECT dlq_id FROM dead_letters"));
    for (std::string id; std::getline(rows, id);) ids.insert(id);
    return ids;
  };
  store.stored = [&] { return count("SELECT count(*) FROM dead_letters"); };
  store.purged = [&] { return count("SELECT coalesce(sum(count), 0) FROM llmdlq_purge_audit"); };
  store.keys_stored_twice = [&] {
    return count("SELECT count(*) FROM (SELECT idempotency_key FROM dead_letters GROUP BY idempotency_key "
                 "HAVING count(*) > 1)");
  };
  store.integrity = [&] { return query_text(db, "PRAGMA integrity_check"); };
  store.release_lease = [&](const std::string& owner) {
    auto state = llmdlq::sqlite_replay_state::open(db);
    REQUIRE(state.has_value());
    (void)state->release_lease("replay", owner);
  };
  llmdlq::test::run_fault_rounds(store, 20, 500);
}

}  // namespace fault_run_test

#endif
