// SPDX-License-Identifier: MIT
// Four `llmdlq replay` processes with sixteen calls in flight each share one
// PostgreSQL DLQ of 2,000 letters through their claims, killed with -9
// round after round: every letter ends recovered, exhausted or held, no
// payload is asked more than twice, and none is delivered twice or lost.
// Needs the test server (LLMDLQ_TEST_POSTGRES; skipped without it).
#ifndef LLMDLQ_TEST_HTTPLIB

#include "catch.hpp"
#include "support/skip.hpp"

TEST_CASE("replayers sharing a PostgreSQL DLQ: kill -9 in twenty rounds", "[postgres][tools][replay][crash]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <libpq-fe.h>

#include <cstdlib>
#include <random>

#include <fmt/format.h>
#include <llmdlq/postgres/replay_state.hpp>
#include <llmdlq/postgres/store.hpp>

#include "catch.hpp"
#include "support/replayer_kill_run.hpp"
#include "support/skip.hpp"

namespace replayers_kill_test {

namespace {

void drop_notice(void*, const char*) {}

void run_sql(const std::string& conninfo, const std::string& sql) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  PQsetNoticeProcessor(conn, drop_notice, nullptr);
  PGresult* result = PQexec(conn, sql.c_str());
  INFO(PQerrorMessage(conn));
  CHECK(PQresultStatus(result) == PGRES_COMMAND_OK);
  PQclear(result);
  PQfinish(conn);
}

}  // namespace

TEST_CASE("replayers sharing a PostgreSQL DLQ: kill -9 in twenty rounds", "[postgres][tools][replay][crash]") {
  const char* server = std::getenv("LLMDLQ_TEST_POSTGRES");
  if (server == nullptr) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)");
  constexpr std::size_t letters = 2000;
  const std::string schema = fmt::format("llmdlq_replayers_{:08x}", std::random_device{}());
  const std::string conninfo = std::string(server) + " options=-csearch_path=" + schema;
  run_sql(server, fmt::format(R"(CREATE SCHEMA "{}")", schema));
  const auto all = llmdlq::test::cut_off_letters(letters);
  const auto open = [&] {
    auto store = llmdlq::postgres_store::open(conninfo);
    INFO((store ? "" : store.error().message));
    REQUIRE(store.has_value());
    return std::move(*store);
  };
  {
    auto store = open();
    for (const auto& letter : all) REQUIRE(store.publish(letter).has_value());
  }
  llmdlq::test::replayer_kill_subject subject;
  subject.store = "postgres:" + conninfo;
  subject.statuses = [&] {
    auto store = open();
    return llmdlq::test::statuses_by_key(store, letters);
  };
  subject.attempts = [&] {
    auto state = llmdlq::postgres_replay_state::open(conninfo);
    REQUIRE(state.has_value());
    std::map<std::string, std::uint32_t> made;
    for (const auto& letter : all) made[letter.idempotency_key] = state->attempts(letter.idempotency_key).value();
    return made;
  };
  const auto tally = llmdlq::test::run_replayer_kill_rounds(subject, letters, 20);
  run_sql(server, fmt::format(R"(DROP SCHEMA IF EXISTS "{}" CASCADE)", schema));
  llmdlq::test::check_replayer_kill_tally(tally, letters, 20);
}

}  // namespace replayers_kill_test

#endif
