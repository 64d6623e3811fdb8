// SPDX-License-Identifier: MIT
// A PostgreSQL DLQ with records that do not read back, the ones jsonb and a
// status CHECK still let through (an envelope that is JSON but not an
// envelope, a status the CHECK was dropped for): list, stats and replay read
// around them and name them, show and claim name what is wrong. The test
// server is scripts/test's (LLMDLQ_TEST_POSTGRES); without it the test skips.
#include <libpq-fe.h>

#include <cstdlib>
#include <random>
#include <set>
#include <sstream>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <llmdlq/postgres/store.hpp>

#include "catch.hpp"
#include "support/skip.hpp"
#include "support/replay_letters.hpp"
#include "tools/run_tool.hpp"

namespace postgres_unreadable_records_test {

using llmdlq::test::run_llmdlq;

namespace {

const char* server_conninfo() { return std::getenv("LLMDLQ_TEST_POSTGRES"); }

void drop_notice(void*, const char*) {}

void execute(const std::string& sql) {
  PGconn* conn = PQconnectdb(server_conninfo());
  PQsetNoticeProcessor(conn, drop_notice, nullptr);
  PGresult* result = PQexec(conn, sql.c_str());
  INFO(sql << ": " << PQerrorMessage(conn));
  CHECK((PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK));
  PQclear(result);
  PQfinish(conn);
}

std::vector<boost::json::object> json_lines(const std::string& text) {
  std::vector<boost::json::object> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(boost::json::parse(line).as_object());
  return out;
}

std::set<std::string> reported(const boost::json::value& list) {
  std::set<std::string> ids;
  for (const auto& entry : list.as_array()) ids.emplace(entry.at("dlq_id").as_string());
  return ids;
}

}  // namespace

TEST_CASE("postgres: records that do not read back are named by list, stats and replay, and refused by claim",
          "[postgres][tools][unreadable]") {
  if (!server_conninfo()) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)");
  const std::string name = [] {
    std::random_device device;
    return fmt::format("llmdlq_unreadable_{:08x}", device());
  }();
  execute(fmt::format(R"(CREATE SCHEMA "{}")", name));
  struct dropped {
    std::string name;
    ~dropped() { execute(fmt::format(R"(DROP SCHEMA IF EXISTS "{}" CASCADE)", name)); }
  } drop{name};
  const std::string conninfo = std::string(server_conninfo()) + " options=-csearch_path=" + name;
  const std::string store = "'postgres:" + conninfo + "'";
  std::vector<std::string> ids;
  {
    auto dlq = llmdlq::postgres_store::open(conninfo);
    REQUIRE(dlq.has_value());
    for (const auto& letter : llmdlq::test::cut_off_letters(10)) {
      REQUIRE(dlq->publish(letter).has_value());
      ids.push_back(letter.dlq_id);
    }
  }
  // Letter 3's envelope is JSON but no envelope; letter 6's status is none of
  // the statuses (its CHECK dropped, then put back unchecked).
  const std::string table = fmt::format(R"("{}"."receipt_moderation_queue")", name);
  execute(fmt::format("UPDATE {} SET envelope = '{{}}'::jsonb WHERE dlq_id = '{}'", table, ids[3]));
  execute(fmt::format(R"(ALTER TABLE {0} DROP CONSTRAINT "receipt_moderation_queue_status_check"; )"
                      R"(UPDATE {0} SET status = 'bogus' WHERE dlq_id = '{1}'; )"
                      R"(ALTER TABLE {0} ADD CONSTRAINT "receipt_moderation_queue_status_check" )"
                      R"(CHECK (status IN ('pending', 'claimed', 'resolved', 'discarded', 'requeued', 'recovered', )"
                      R"('exhausted', 'redriven')) NOT VALID)",
                      table, ids[6]));

  auto run = run_llmdlq("list --json " + store);
  INFO(run.err);
  CHECK(run.exit_code == 6);
  std::set<std::string> marked;
  const auto rows = json_lines(run.out);
  CHECK(rows.size() == 10);
  for (const auto& row : rows) {
    if (row.contains("unreadable")) marked.emplace(row.at("dlq_id").as_string());
  }
  CHECK(marked == std::set<std::string>{ids[3], ids[6]});

  run = run_llmdlq("stats --json " + store);
  CHECK(run.exit_code == 6);
  auto stats = boost::json::parse(run.out);
  CHECK(stats.at("total") == 10);
  CHECK(reported(stats.at("unreadable_records")) == std::set<std::string>{ids[3], ids[6]});

  llmdlq::test::temp_dir dir;
  const auto schema = dir.write("schema.json", llmdlq::test::replay_schema);
  run = run_llmdlq("replay " + store + " --schema " + schema + " --json");
  INFO(run.err);
  CHECK(run.exit_code == 6);
  auto summary = boost::json::parse(run.out);
  CHECK(summary.at("seen") == 9);  // letter 6 is not pending
  CHECK(summary.at("selected") == 8);
  CHECK(reported(summary.at("unreadable_letters")) == std::set<std::string>{ids[3]});

  run = run_llmdlq("show " + store + " " + ids[6]);
  CHECK(run.exit_code == 6);
  CHECK(run.err.find("bogus") != std::string::npos);
  run = run_llmdlq("claim " + store + " " + ids[6] + " --operator bob");
  CHECK(run.exit_code == 6);
  CHECK(run.err.find("bogus") != std::string::npos);
  CHECK(run.out.find("pending") == std::string::npos);
  // A record whose envelope does not read can still be claimed and discarded by a person.
  run = run_llmdlq("claim " + store + " " + ids[3] + " --operator bob");
  INFO(run.err);
  CHECK(run.exit_code == 0);
}

}  // namespace postgres_unreadable_records_test
