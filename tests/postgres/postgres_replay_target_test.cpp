// SPDX-License-Identifier: MIT
// postgres_replay_target against the test's PostgreSQL server: the row a
// delivery inserts, once per key across target instances, a table of
// another shape refused, and `llmdlq deliver --to postgres:` killed at random
// moments.
#include <libpq-fe.h>

#include <cstdlib>
#include <map>
#include <random>
#include <string>

#include <fmt/format.h>
#include <llmdlq/postgres/replay_target.hpp>

#include "catch.hpp"
#include "support/skip.hpp"
#include "support/target_kill_run.hpp"

namespace postgres_replay_target_test {

using llmdlq::test::sample_delivery;

namespace {

const char* conninfo() { return std::getenv("LLMDLQ_TEST_POSTGRES"); }

// A table name no other test or run uses, dropped when this goes.
class scoped_table {
 public:
  scoped_table() : name_(fmt::format("deliveries_{}_{}", ::getpid(), std::random_device{}())) {}
  ~scoped_table() { (void)query(fmt::format("DROP TABLE IF EXISTS \"{}\"", name_)); }
  scoped_table(const scoped_table&) = delete;
  scoped_table& operator=(const scoped_table&) = delete;
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  // The rows of one column of a query's result, as text.
  static std::vector<std::string> query(const std::string& sql) {
    PGconn* conn = PQconnectdb(conninfo());
    PGresult* r = PQexec(conn, sql.c_str());
    std::vector<std::string> values;
    for (int row = 0; row < PQntuples(r); ++row) values.emplace_back(PQgetvalue(r, row, 0));
    PQclear(r);
    PQfinish(conn);
    return values;
  }

  [[nodiscard]] std::map<std::string, std::size_t> keys() const {
    std::map<std::string, std::size_t> found;
    for (const auto& key : query(fmt::format("SELECT idempotency_key FROM \"{}\"", name_))) ++found[key];
    return found;
  }

 private:
  std::string name_;
};

}  // namespace

TEST_CASE("postgres target: a delivery is one row, and a key delivered keeps its first row", "[postgres][target]") {
  if (!conninfo()) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)");
  scoped_table table;
  {
    auto target = llmdlq::postgres_replay_target::open(conninfo(), {.table = table.name()});
    REQUIRE(target.has_value());
    CHECK(target->qualified_table() == "\"" + table.name() + "\"");
    REQUIRE(target->deliver(sample_delivery("k0")).has_value());
  }
  auto again = llmdlq::postgres_replay_target::open(conninfo(), {.table = table.name()});
  REQUIRE(again.has_value());
  auto changed = sample_delivery("k0");
  changed.output = R"({"total": 1})";
  REQUIRE(again->deliver(changed).has_value());
  CHECK(table.keys() == std::map<std::string, std::size_t>{{"k0", 1}});
  CHECK(scoped_table::query(fmt::format("SELECT output->>'total' FROM \"{}\"", table.name())) ==
        std::vector<std::string>{"2920.00"});
  CHECK(scoped_table::query(fmt::format("SELECT concat_ws('|', source, dlq_id, resolved_by, note) "
                                        "FROM \"{}\"",
                                        table.name())) ==
        std::vector<std::string>{"operator|dlq-k0|ann|read off the scan"});

  auto nul = sample_delivery("k1");
  nul.output = R"({"name": "a\u0000b"})";  // JSON, which jsonb cannot hold
  auto refused = again->deliver(nul);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == llmdlq::replay_errc::target_refused);
}

TEST_CASE("postgres target: a table of another shape, or none without migration, is refused at open",
          "[postgres][target]") {
  if (!conninfo()) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)");
  scoped_table table;
  auto missing = llmdlq::postgres_replay_target::open(conninfo(), {.table = table.name(), .migrate = false});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == llmdlq::replay_errc::target_refused);
  (void)scoped_table::query(fmt::format("CREATE TABLE \"{}\" (idempotency_key text, output jsonb)", table.name()));
  auto other = llmdlq::postgres_replay_target::open(conninfo(), {.table = table.name()});
  REQUIRE_FALSE(other.has_value());
  CHECK(other.error().code == llmdlq::replay_errc::target_refused);
  auto bad_name = llmdlq::postgres_replay_target::open(conninfo(), {.table = "no-such; table"});
  REQUIRE_FALSE(bad_name.has_value());
  CHECK(bad_name.error().code == llmdlq::replay_errc::target_refused);
}

TEST_CASE("postgres target: llmdlq deliver killed at random moments delivers every correction once",
          "[postgres][target][tools][kill]") {
  if (!conninfo()) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)");
  scoped_table table;
  const std::string spec = fmt::format("postgres:{}#{}", conninfo(), table.name());
  const auto tally = llmdlq::test::run_target_kill_rounds({spec, [&] { return table.keys(); }}, 10, 40);
  CHECK(tally.killed > 0);  // the kills landed midway, not only before or after the runs
  CHECK(tally.lost == 0);
  CHECK(tally.duplicated == 0);
  CHECK(tally.delivered_once == tally.corrections);
}

}  // namespace postgres_replay_target_test
