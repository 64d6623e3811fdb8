// SPDX-License-Identifier: MIT
// The operator commands on a PostgreSQL DLQ, as a shell user runs them.
#include <libpq-fe.h>

#include <cstdlib>
#include <random>
#include <sstream>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "catch.hpp"
#include "support/skip.hpp"
#include "tools/run_tool.hpp"

namespace operator_commands_test {

using llmdlq::test::run_llmdlq;

namespace {

const char* conninfo() { return std::getenv("LLMDLQ_TEST_POSTGRES"); }

struct scoped_table {
  std::string name = [] {
    std::random_device device;
    return fmt::format("llmdlq_ops_{:016x}", std::uint64_t{device()} << 32 | device());
  }();
  ~scoped_table() {
    PGconn* conn = PQconnectdb(conninfo());
    const std::string sql = fmt::format(
        "DROP TABLE IF EXISTS \"{0}\"; DELETE FROM llmdlq_traffic WHERE dlq_table = '{0}'", name);
    PQclear(PQexec(conn, sql.c_str()));
    PQfinish(conn);
  }
};

}  // namespace

TEST_CASE("operator commands on postgres: process, stats, list, claim, resolve, show", "[postgres][tools][operator]") {
  if (!conninfo()) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)");
  scoped_table table;
  llmdlq::test::temp_dir dir;
  const auto schema = dir.write("schema.json", R"({"type": "object", "required": ["total"]})");
  const std::string store = fmt::format("'postgres:{}#{}'", conninfo(), table.name);
  auto run = run_llmdlq("process --repair off --schema " + schema + " --sink " + store,
                        R"({"id": 1, "response": "{\"total\": 1}"})" "\n" R"({"id": 2, "response": "{\"sum\": 1}"})" "\n");
  REQUIRE(run.exit_code == 0);

  run = run_llmdlq("stats --json " + store);
  REQUIRE(run.exit_code == 0);
  const auto stats = boost::json::parse(run.out);
  CHECK(stats.at("total") == 1);
  CHECK(stats.at("status").at("pending") == 1);
  CHECK(stats.as_object().contains("oldest_pending_created_at"));
  CHECK(run_llmdlq("stats " + store).out.find("postgres#" + table.name + ": 1 dead letter\n") != std::string::npos);

  run = run_llmdlq("list --json --category schema " + store);
  REQUIRE(run.exit_code == 0);
  const auto row = boost::json::parse(run.out);
  const std::string id(row.at("dlq_id").as_string());

  CHECK(run_llmdlq("claim " + store + " " + id + " --operator ann").exit_code == 0);
  run = run_llmdlq("claim " + store + " " + id + " --operator bob");
  CHECK(run.exit_code == 4);
  CHECK(run.err.find("claimed by ann") != std::string::npos);
  CHECK(run_llmdlq("resolve " + store + " " + id + " --operator ann --schema " + schema + " --corrected -",
                   R"({"sum": 1})")
            .exit_code == 1);
  CHECK(run_llmdlq("resolve " + store + " " + id + " --operator ann --schema " + schema + " --corrected -",
                   R"({"total": 1})")
            .exit_code == 0);
  run = run_llmdlq("show --json " + store + " " + id);
  REQUIRE(run.exit_code == 0);
  const auto shown = boost::json::parse(run.out);
  CHECK(shown.at("status") == "resolved");
  CHECK(shown.at("operator_log").as_array().size() == 2);
  CHECK(run_llmdlq("top --once " + store).exit_code == 0);
}

}  // namespace operator_commands_test
