// SPDX-License-Identifier: MIT
// `llmdlq replay postgres:CONNINFO` against the test server (scripts/test
// sets LLMDLQ_TEST_POSTGRES; without it every test skips itself) and a model
// server on loopback: a dry run calls nothing and writes nothing, a real run
// moves the rows along, and a payload another replay holds is left to it. Each test keeps
// its tables in a schema of its own, named through the connection's
// search_path, and drops it at the end.
#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("replay postgres: against a model server", "[postgres][tools][replay]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <libpq-fe.h>

#include <cstdlib>
#include <random>
#include <set>

#include <boost/json/parse.hpp>
#include <fmt/format.h>

#include <llmdlq/postgres/replay_state.hpp>
#include <llmdlq/postgres/store.hpp>

#include "llm/scripted_server.hpp"
#include "support/replay_letters.hpp"
#include "tools/run_tool.hpp"

namespace replay_command_test {

using namespace std::chrono_literals;
using llmdlq::moderation_status;
using llmdlq::test::chat_completion;
using llmdlq::test::scripted_server;
using llmdlq::test::stored_failure;

namespace {

const char* server_conninfo() { return std::getenv("LLMDLQ_TEST_POSTGRES"); }

#define REQUIRE_POSTGRES()                                                                                     \
  do {                                                                                                         \
    if (!server_conninfo()) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)"); \
  } while (false)

void drop_notice(void*, const char*) {}

// Runs `sql` on the test server; the first column of each row.
std::vector<std::string> query(const std::string& sql) {
  PGconn* conn = PQconnectdb(server_conninfo());
  PQsetNoticeProcessor(conn, drop_notice, nullptr);
  PGresult* result = PQexec(conn, sql.c_str());
  const auto status = PQresultStatus(result);
  INFO(PQerrorMessage(conn));
  CHECK((status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK));
  std::vector<std::string> rows;
  for (int i = 0; status == PGRES_TUPLES_OK && i < PQntuples(result); ++i) rows.emplace_back(PQgetvalue(result, i, 0));
  PQclear(result);
  PQfinish(conn);
  return rows;
}

// A schema of this test's own holding a DLQ of `letters`, and a folder with today's schema.
struct postgres_dlq {
  std::string name = [] {
    std::random_device device;
    return fmt::format("llmdlq_replay_cli_{:08x}", device());
  }();
  std::string conninfo = std::string(server_conninfo()) + " options=-csearch_path=" + name;
  llmdlq::test::temp_dir dir;
  std::string schema = dir.write("schema.json", llmdlq::test::replay_schema);

  explicit postgres_dlq(const std::vector<llmdlq::envelope>& letters) {
    query(fmt::format(R"(CREATE SCHEMA "{}")", name));
    auto store = open();
    for (const auto& letter : letters) REQUIRE(store.publish(letter).has_value());
  }
  ~postgres_dlq() { query(fmt::format(R"(DROP SCHEMA IF EXISTS "{}" CASCADE)", name)); }

  llmdlq::postgres_store open() const {
    auto store = llmdlq::postgres_store::open(conninfo);
    INFO((store ? "" : store.error().message));
    REQUIRE(store.has_value());
    return std::move(*store);
  }
  std::set<std::string> tables() const {
    const auto rows = query(fmt::format("SELECT table_name FROM information_schema.tables WHERE table_schema = '{}'",
                                        name));
    return {rows.begin(), rows.end()};
  }
  std::map<std::string, moderation_status> statuses() const {
    auto store = open();
    return llmdlq::test::statuses_by_key(store);
  }
  llmdlq::test::tool_run replay(const std::string& arguments) const {
    return llmdlq::test::run_llmdlq_reading("replay 'postgres:" + conninfo + "' --schema " + schema + " " + arguments,
                                            "/dev/null");
  }
};

}  // namespace

TEST_CASE("replay postgres: a dry run calls nothing and writes nothing, a real run moves the rows",
          "[postgres][tools][replay]") {
  REQUIRE_POSTGRES();
  postgres_dlq q(llmdlq::test::replay_letters({stored_failure::cut_off, stored_failure::cut_off,
                                               stored_failure::cut_off, stored_failure::schema_failure}));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0), "stop", 100, 20),
                          chat_completion(llmdlq::test::recovered_answer(1), "stop", 100, 20),
                          chat_completion(llmdlq::test::failing_answer(2), "stop", 100, 20)});
  REQUIRE(server.listening());
  const auto tables = q.tables();
  const auto rows_before = query(fmt::format(R"(SELECT md5(string_agg(t::text, '|' ORDER BY dlq_id)) FROM "{}".)"
                                             R"("receipt_moderation_queue" t)",
                                             q.name));

  auto run = q.replay("--json --max-attempts 1 --model-url " + server.base_url());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("dry_run") == true);
  CHECK(summary.at("by_outcome") == boost::json::parse(R"({"repair_prompt": 3, "held": 1})"));
  CHECK(server.calls() == 0);
  CHECK(q.tables() == tables);  // no replay state was made
  CHECK(query(fmt::format(R"(SELECT md5(string_agg(t::text, '|' ORDER BY dlq_id)) FROM "{}".)"
                          R"("receipt_moderation_queue" t)",
                          q.name)) == rows_before);

  run = q.replay("--execute --json --rate 0 --max-attempts 1 --model-url " + server.base_url());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("recovered") == 2);
  CHECK(summary.at("exhausted") == 1);
  CHECK(summary.at("held") == 1);
  CHECK(summary.at("tokens").at("total") == 360);
  CHECK(server.calls() == 3);
  CHECK(q.statuses() == std::map<std::string, moderation_status>{{"key-0", moderation_status::recovered},
                                                                 {"key-1", moderation_status::recovered},
                                                                 {"key-2", moderation_status::exhausted},
                                                                 {"key-3", moderation_status::pending}});
  // The recovered rows hold the corrected document.
  auto store = q.open();
  auto recovered = store.list(moderation_status::recovered, 10);
  REQUIRE(recovered.has_value());
  REQUIRE(recovered->size() == 2);
}

TEST_CASE("replay postgres: a payload another replay holds is left to it until given back",
          "[postgres][tools][replay]") {
  REQUIRE_POSTGRES();
  postgres_dlq q(llmdlq::test::cut_off_letters(2));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(1)),
                          chat_completion(llmdlq::test::recovered_answer(0))});
  REQUIRE(server.listening());
  {
    auto state = llmdlq::postgres_replay_state::open(q.conninfo);
    REQUIRE(state.has_value());
    REQUIRE(state->claim("payload key-0", "another-host:1", 300s).value());
  }
  auto run = q.replay("--execute --json --rate 0 --model-url " + server.base_url());
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(boost::json::parse(run.out).as_object().at("claimed_elsewhere") == 1);
  CHECK(server.calls() == 1);
  CHECK(q.statuses().at("key-0") == moderation_status::pending);
  {
    auto state = llmdlq::postgres_replay_state::open(q.conninfo);
    REQUIRE(state.has_value());
    REQUIRE(state->release_claim("payload key-0", "another-host:1").has_value());
  }
  run = q.replay("--execute --rate 0 --model-url " + server.base_url());
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(server.calls() == 2);
  for (const auto& [key, status] : q.statuses()) CHECK(status == moderation_status::recovered);
}

TEST_CASE("replay postgres: a DLQ table that is missing is not made by a dry run", "[postgres][tools][replay]") {
  REQUIRE_POSTGRES();
  postgres_dlq q({});
  query(fmt::format(
      R"(DROP TABLE "{0}"."receipt_moderation_queue", "{0}"."llmdlq_purge_audit", "{0}"."llmdlq_traffic")", q.name));
  const auto run = q.replay("");
  CHECK(run.exit_code == 3);
  CHECK(q.tables().empty());
}

}  // namespace replay_command_test

#endif  // LLMDLQ_TEST_HTTPLIB
