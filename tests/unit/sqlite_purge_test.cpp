// SPDX-License-Identifier: MIT
// sqlite_store::purge: exactly the expired rows go, in one transaction with
// one audit row; a dry run changes nothing.
#include <sqlite3.h>

#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/expiring_letters.hpp"
#include "support/temp_dir.hpp"

namespace sqlite_purge_test {

namespace {

// The rows of a one-column query, read with SQLite directly.
std::vector<std::string> rows(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(handle, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  std::vector<std::string> values;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    values.emplace_back(text ? text : "NULL");
  }
  sqlite3_finalize(stmt);
  sqlite3_close(handle);
  return values;
}

}  // namespace

TEST_CASE("a SQLite purge removes exactly the expired rows and audits once", "[sqlite][purge]") {
  const llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  const llmdlq::test::expiring_letters letters;
  auto store = llmdlq::sqlite_store::open(path);
  REQUIRE(store.has_value());
  REQUIRE(store->publish_batch(letters.all()).has_value());

  SECTION("a dry run counts and changes nothing") {
    auto report = store->purge(letters.request(/*dry_run=*/true));
    REQUIRE(report.has_value());
    CHECK(*report == letters.expected_report(true));
    CHECK(rows(path, "SELECT count(*) FROM dead_letters") == std::vector<std::string>{"6"});
    CHECK(rows(path, "SELECT count(*) FROM sqlite_master WHERE name = 'llmdlq_purge_audit'") ==
          std::vector<std::string>{"0"});
  }

  SECTION("a purge removes them, a second one nothing") {
    auto report = store->purge(letters.request());
    REQUIRE(report.has_value());
    CHECK(*report == letters.expected_report());
    CHECK(report->count == 3);
    CHECK(report->oldest_expires_at == letters.expired.front().expires_at);
    CHECK(report->newest_expires_at == letters.purge_time);
    for (const auto& e : letters.expired) CHECK_FALSE(store->find(e.dlq_id)->has_value());
    for (const auto& e : letters.kept) CHECK(store->find(e.dlq_id)->has_value());
    CHECK(rows(path, "SELECT purged_table || ' ' || operator || ' ' || at || ' ' || count || ' ' || "
                     "oldest_expires_at || ' ' || newest_expires_at FROM llmdlq_purge_audit") ==
          std::vector<std::string>{"dead_letters alice 2026-06-01T00:00:00.000Z 3 2026-05-30T00:00:00.000Z "
                                   "2026-06-01T00:00:00.000Z"});

    auto again = store->purge(letters.request());
    REQUIRE(again.has_value());
    CHECK(again->count == 0);
    CHECK_FALSE(again->oldest_expires_at.has_value());
    CHECK(rows(path, "SELECT count || ' ' || coalesce(oldest_expires_at, 'NULL') FROM llmdlq_purge_audit "
                     "ORDER BY id") == std::vector<std::string>{"3 2026-05-30T00:00:00.000Z", "0 NULL"});
    CHECK(rows(path, "SELECT count(*) FROM dead_letters") == std::vector<std::string>{"3"});
  }

  SECTION("a purged failure that comes back is stored again") {
    REQUIRE(store->purge(letters.request()).has_value());
    auto again = store->publish(letters.expired.front());
    REQUIRE(again.has_value());
    CHECK_FALSE(again->duplicate);
  }
}

TEST_CASE("a SQLite purge needs an operator and a writable store, but a dry run does not", "[sqlite][purge]") {
  const llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  const llmdlq::test::expiring_letters letters;
  {
    auto store = llmdlq::sqlite_store::open(path);
    REQUIRE(store.has_value());
    REQUIRE(store->publish_batch(letters.all()).has_value());
    auto nameless = letters.request();
    nameless.operator_name.clear();
    auto refused = store->purge(nameless);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == llmdlq::sink_errc::rejected);
  }
  auto reader = llmdlq::sqlite_store::open(path, {.read_only = true});
  REQUIRE(reader.has_value());
  auto counted = reader->purge(letters.request(true));
  REQUIRE(counted.has_value());
  CHECK(counted->count == 3);
  auto refused = reader->purge(letters.request());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == llmdlq::sink_errc::rejected);
  CHECK(rows(path, "SELECT count(*) FROM dead_letters") == std::vector<std::string>{"6"});
}

TEST_CASE("a SQLite purge leaves the replay state in the same file alone", "[sqlite][purge]") {
  const llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  const llmdlq::test::expiring_letters letters;
  auto store = llmdlq::sqlite_store::open(path);
  REQUIRE(store.has_value());
  REQUIRE(store->publish_batch(letters.all()).has_value());
  auto state = llmdlq::sqlite_replay_state::open(path);
  REQUIRE(state.has_value());
  const auto& purged = letters.expired.front();
  REQUIRE(state->reserve_attempt(purged.idempotency_key, 2).has_value());
  REQUIRE(state->record_output(purged.idempotency_key, "sqlite", purged.dlq_id, "{}").has_value());
  REQUIRE(store->purge(letters.request()).has_value());
  CHECK(state->attempts(purged.idempotency_key).value() == 1);
  CHECK(state->find_output(purged.idempotency_key).value().has_value());
}

}  // namespace sqlite_purge_test
