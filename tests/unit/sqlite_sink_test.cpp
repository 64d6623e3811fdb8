// SPDX-License-Identifier: MIT
// The SQLite sink: durable rows with status pending, idempotent on dlq_id and
// on idempotency key + attempt, batches in one transaction, statistics.
#include <sqlite3.h>
#include <sys/stat.h>

#include <llmdlq/process.hpp>
#include <llmdlq/sqlite_sink.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"
#include "support/temp_dir.hpp"

namespace {

llmdlq::envelope sample(std::string key, std::uint32_t attempt = 1,
                        llmdlq::failure_category category = llmdlq::failure_category::syntax) {
  llmdlq::request_context context;
  context.idempotency_key = std::move(key);
  context.attempt = attempt;
  return llmdlq::test::check_envelope(llmdlq::make_envelope(category, "test failure", "raw text", context));
}

// Reads one column of one row with SQLite directly, as an operator's tool would.
std::string column(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(handle, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  std::string value;
  if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0)) {
    value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(handle);
  return value;
}

}  // namespace

TEST_CASE("sqlite_sink stores a pending row per envelope, durably and in WAL mode", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  auto sink = llmdlq::sqlite_sink::open(path);
  REQUIRE(sink.has_value());
  const auto e = sample("receipt-1");
  auto r = sink->publish(e);
  REQUIRE(r.has_value());
  CHECK_FALSE(r->duplicate);
  CHECK(column(path, "PRAGMA journal_mode") == "wal");
  CHECK(column(path, "SELECT status FROM dead_letters WHERE dlq_id = '" + e.dlq_id + "'") == "pending");
  CHECK(column(path, "SELECT failure_code FROM dead_letters") == "structural_broken_json");
  CHECK(column(path, "SELECT category || '/' || triage || '/' || action FROM dead_letters") ==
        "syntax/transient/local_repair");
  auto found = sink->find(e.dlq_id);
  REQUIRE(found.has_value());
  CHECK(*found == e);
}

TEST_CASE("sqlite_sink is idempotent on dlq_id and on idempotency key + attempt", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  auto sink = llmdlq::sqlite_sink::open(dir.path() / "dlq.db");
  REQUIRE(sink.has_value());
  const auto e = sample("receipt-1");
  REQUIRE(sink->publish(e).has_value());
  auto again = sink->publish(e);
  REQUIRE(again.has_value());
  CHECK(again->duplicate);
  // Same input, same attempt, new envelope (a worker that crashed before committing).
  auto replayed = sink->publish(sample("receipt-1", 1));
  REQUIRE(replayed.has_value());
  CHECK(replayed->duplicate);
  // The next attempt is a new row.
  auto second = sink->publish(sample("receipt-1", 2));
  REQUIRE(second.has_value());
  CHECK_FALSE(second->duplicate);
  auto stats = sink->statistics();
  REQUIRE(stats.has_value());
  CHECK(stats->total == 2);
}

TEST_CASE("sqlite_sink batches are one transaction, and survive reopening", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  std::vector<llmdlq::envelope> batch;
  for (int i = 0; i < 50; ++i) {
    batch.push_back(sample("k" + std::to_string(i), 1,
                           i % 2 ? llmdlq::failure_category::schema : llmdlq::failure_category::truncated));
  }
  {
    auto sink = llmdlq::sqlite_sink::open(path);
    REQUIRE(sink.has_value());
    auto receipts = sink->publish_batch(batch);
    REQUIRE(receipts.has_value());
    CHECK(receipts->size() == 50);
  }
  auto reopened = llmdlq::sqlite_sink::open(path);
  REQUIRE(reopened.has_value());
  auto stats = reopened->statistics();
  REQUIRE(stats.has_value());
  CHECK(stats->total == 50);
  CHECK(stats->by_category.at("schema") == 25);
  CHECK(stats->by_category.at("truncated") == 25);
  CHECK(stats->by_status.at("pending") == 50);
  CHECK(stats->by_triage.at("deterministic") == 25);
}

TEST_CASE("sqlite_sink failures are sink errors, and a custom table name is checked", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  auto bad_name = llmdlq::sqlite_sink::open(dir.path() / "a.db", {"drop table x; --"});
  REQUIRE_FALSE(bad_name.has_value());
  CHECK(bad_name.error().code == llmdlq::sink_errc::rejected);

  auto missing = llmdlq::sqlite_sink::open("/nonexistent-dir/dlq.db");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == llmdlq::sink_errc::unavailable);

  auto custom = llmdlq::sqlite_sink::open(dir.path() / "b.db", {"receipt_moderation_queue"});
  REQUIRE(custom.has_value());
  REQUIRE(custom->publish(sample("x")).has_value());
  CHECK(column(dir.path() / "b.db", "SELECT count(*) FROM receipt_moderation_queue") == "1");

  // The database file made read-only under a running sink: publishing fails.
  if (::geteuid() != 0) {
    ::chmod((dir.path() / "b.db").c_str(), 0400);
    auto r = custom->publish(sample("y"));
    CHECK_FALSE(r.has_value());
  }
}
