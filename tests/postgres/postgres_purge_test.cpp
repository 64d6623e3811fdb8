// SPDX-License-Identifier: MIT
// postgres_store::purge against a real server (LLMDLQ_TEST_POSTGRES; skipped
// without it): batched deletes of exactly the expired rows, one audit row
// that matches them, a dry run that changes nothing. Each test works in a
// schema of its own, dropped at its end.
#include <libpq-fe.h>

#include <cstdlib>
#include <random>
#include <string>

#include <fmt/format.h>

#include <llmdlq/postgres/store.hpp>

#include "catch.hpp"
#include "support/skip.hpp"
#include "support/expiring_letters.hpp"

namespace postgres_purge_test {

namespace {

const char* conninfo() { return std::getenv("LLMDLQ_TEST_POSTGRES"); }

void drop_notice(void*, const char*) {}

// A schema of its own for one test, dropped with everything in it at the end;
// SQL run directly, as an operator would.
class scratch_schema {
 public:
  scratch_schema() : conn_(PQconnectdb(conninfo())) {
    PQsetNoticeProcessor(conn_, drop_notice, nullptr);
    REQUIRE(PQstatus(conn_) == CONNECTION_OK);
    std::random_device device;
    name = fmt::format("llmdlq_purge_{:08x}", device());
  }
  ~scratch_schema() {
    PQclear(PQexec(conn_, fmt::format("DROP SCHEMA IF EXISTS {} CASCADE", name).c_str()));
    PQfinish(conn_);
  }
  scratch_schema(const scratch_schema&) = delete;
  scratch_schema& operator=(const scratch_schema&) = delete;

  // The first column of the first row.
  std::string value(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    INFO(sql << ": " << PQresultErrorMessage(r));
    REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK);
    std::string v = PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
    PQclear(r);
    return v;
  }

  std::string name;

 private:
  PGconn* conn_;
};

}  // namespace

TEST_CASE("a PostgreSQL purge deletes exactly the expired rows in batches and audits once", "[postgres][purge]") {
  if (!conninfo()) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)");
  scratch_schema db;
  const llmdlq::test::expiring_letters letters;
  llmdlq::postgres_store_options options;
  options.schema = db.name;
  options.table = "dead_letters";
  options.purge_batch = 2;  // three expired rows: two batches and an empty one
  auto store = llmdlq::postgres_store::open(conninfo(), options);
  REQUIRE(store.has_value());
  REQUIRE(store->publish_batch(letters.all()).has_value());
  const std::string table = db.name + ".dead_letters";
  const std::string audit = db.name + ".llmdlq_purge_audit";

  auto dry = store->purge(letters.request(true));
  REQUIRE(dry.has_value());
  CHECK(*dry == letters.expected_report(true));
  CHECK(db.value("SELECT count(*) FROM " + table) == "6");
  CHECK(db.value("SELECT count(*) FROM " + audit) == "0");

  auto report = store->purge(letters.request());
  REQUIRE(report.has_value());
  CHECK(*report == letters.expected_report());
  CHECK(db.value("SELECT count(*) FROM " + table) == "3");
  for (const auto& e : letters.kept) {
    CHECK(db.value(fmt::format("SELECT count(*) FROM {} WHERE dlq_id = '{}'", table, e.dlq_id)) == "1");
  }
  CHECK(db.value(fmt::format("SELECT purged_table || ' ' || operator || ' ' || count || ' ' || "
                             "to_char(oldest_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') || ' ' || "
                             "to_char(newest_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') FROM {}",
                             audit)) == db.name + ".dead_letters alice 3 2026-05-30 00:00 2026-06-01 00:00");

  auto again = store->purge(letters.request());
  REQUIRE(again.has_value());
  CHECK(again->count == 0);
  CHECK_FALSE(again->oldest_expires_at.has_value());
  CHECK(db.value("SELECT count(*) FROM " + audit) == "2");
  CHECK(db.value("SELECT count(*) FROM " + table) == "3");
}

}  // namespace postgres_purge_test
