// SPDX-License-Identifier: MIT
// The fault run (support/fault_run.hpp) on one PostgreSQL DLQ: writers, a
// replay, a purge and an operator on the same table, kill -9 among them.
// Against the server scripts/test starts (LLMDLQ_TEST_POSTGRES), in a schema
// of the test's own, dropped at the end.
#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("fault run postgres: kill -9 among writers, a replay, a purge and an operator", "[postgres][fault]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <libpq-fe.h>

#include <cstdlib>
#include <random>
#include <string>

#include <fmt/format.h>

#include <llmdlq/postgres/replay_state.hpp>

#include "support/fault_run.hpp"

namespace fault_run_test {

namespace {

void drop_notice(void*, const char*) {}

// The first column of the first row of `sql` (empty when none).
std::string query_text(const std::string& conninfo, const std::string& sql) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  PQsetNoticeProcessor(conn, drop_notice, nullptr);
  PGresult* result = PQexec(conn, sql.c_str());
  std::string value;
  if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) > 0) value = PQgetvalue(result, 0, 0);
  INFO(PQerrorMessage(conn));
  CHECK((PQresultStatus(result) == PGRES_TUPLES_OK || PQresultStatus(result) == PGRES_COMMAND_OK));
  PQclear(result);
  PQfinish(conn);
  return value;
}

}  // namespace

TEST_CASE("fault run postgres: kill -9 among four writers, a replay, a purge and an operator on one table",
          "[postgres][fault]") {
  const char* server = std::getenv("LLMDLQ_TEST_POSTGRES");
  if (server == nullptr) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)");
  const std::string name = fmt::format("llmdlq_fault_run_{:08x}", std::random_device()());
  const std::string conninfo = std::string(server) + " options=-csearch_path=" + name;
  (void)query_text(server, fmt::format(R"(CREATE SCHEMA "{}")", name));
  const auto count = [&](const std::string& sql) { return std::stoull("0" + query_text(conninfo, sql)); };
  const std::string table = "receipt_moderation_queue";
  llmdlq::test::fault_run_store store;
  store.kind = "postgres";
  store.spec = "postgres:" + conninfo;
  store.stored_ids = [&] {
    std::set<std::string> ids;
    PGconn* conn = PQconnectdb(conninfo.c_str());
    PQsetNoticeProcessor(conn, drop_notice, nullptr);
    PGresult* result = PQexec(conn, fmt::format("SELECT dlq_id FROM {}", table).c_str());
    INFO(PQerrorMessage(conn));
    CHECK(PQresultStatus(result) == PGRES_TUPLES_OK);
    for (int row = 0; row < PQntuples(result); ++row) ids.insert(PQgetvalue(result, row, 0));
    PQclear(result);
    PQfinish(conn);
    return ids;
  };
  store.stored = [&] {  // 0 until the first writer has made the table
    return query_text(conninfo, fmt::format("SELECT to_regclass('{}') IS NULL", table)) == "t"
               ? 0
               : count("SELECT count(*) FROM " + table);
  };
  store.purged = [&] { return count("SELECT coalesce(sum(count), 0) FROM llmdlq_purge_audit"); };
  store.keys_stored_twice = [&] {
    return count(fmt::format("SELECT count(*) FROM (SELECT idempotency_key FROM {} GROUP BY idempotency_key "
                             "HAVING count(*) > 1) twice",
                             table));
  };
  // Every row holds an envelope that is JSON with its own dlq_id.
  store.integrity = [&] {
    const auto broken = count(fmt::format("SELECT count(*) FROM {} WHERE envelope IS NULL OR "
                                          "(envelope::jsonb ->> 'dlq_id') IS DISTINCT FROM dlq_id",
                                          table));
    return broken == 0 ? std::string("ok") : fmt::format("{} rows without their envelope", broken);
  };
  store.release_lease = [&](const std::string& owner) {
    auto state = llmdlq::postgres_replay_state::open(conninfo);
    REQUIRE(state.has_value());
    (void)state->release_lease("replay", owner);
  };
  llmdlq::test::run_fault_rounds(store, 20, 120);  // each letter is a synced commit
  (void)query_text(server, fmt::format(R"(DROP SCHEMA IF EXISTS "{}" CASCADE)", name));
}

}  // namespace fault_run_test

#endif
