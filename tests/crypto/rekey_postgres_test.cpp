// SPDX-License-Identifier: MIT
// `llmdlq rekey postgres:...` against the test server (LLMDLQ_TEST_POSTGRES,
// which scripts/test sets; without it the test skips itself), in a schema of
// its own.
#include <libpq-fe.h>

#include <cstdlib>
#include <random>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "llmdlq/postgres/store.hpp"
#include "sealed_letters.hpp"
#include "support/skip.hpp"
#include "tools/run_tool.hpp"

namespace rekey_postgres_test {

namespace {

void run_sql(const std::string& sql) {
  PGconn* conn = PQconnectdb(std::getenv("LLMDLQ_TEST_POSTGRES"));
  PGresult* result = PQexec(conn, sql.c_str());
  INFO(PQerrorMessage(conn));
  CHECK(PQresultStatus(result) == PGRES_COMMAND_OK);
  PQclear(result);
  PQfinish(conn);
}

}  // namespace

TEST_CASE("llmdlq rekey moves every sealed text of a PostgreSQL DLQ to the new key", "[crypto][postgres]") {
  if (!std::getenv("LLMDLQ_TEST_POSTGRES")) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)");
  const std::string schema = fmt::format("llmdlq_rekey_{:08x}", std::random_device()());
  const std::string conninfo = std::string(std::getenv("LLMDLQ_TEST_POSTGRES")) + " options=-csearch_path=" + schema;
  run_sql(fmt::format(R"(CREATE SCHEMA "{}")", schema));
  struct drop {
    std::string schema;
    ~drop() { run_sql(fmt::format(R"(DROP SCHEMA IF EXISTS "{}" CASCADE)", schema)); }
  } dropped{schema};

  llmdlq::test::sealing_setup setup;
  constexpr int letters = 9;
  {
    auto store = llmdlq::postgres_store::open(conninfo);
    REQUIRE(store);
    for (int i = 1; i <= letters; ++i) REQUIRE(store->publish(llmdlq::test::letter(i, setup.options())));
  }
  REQUIRE(llmdlq::file_key_provider::generate(setup.keys, "k2"));
  const auto run = llmdlq::test::run_llmdlq("rekey 'postgres:" + conninfo + "' --keys '" + setup.keys.string() +
                                            "' --to k2 --batch 4");
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "re-sealed 18 sealed texts in 9 records to key k2; left 0 (key shredded: 0, other: 0)\n");

  REQUIRE(llmdlq::file_key_provider::shred(setup.keys, "k1"));
  auto store = llmdlq::postgres_store::open(conninfo);
  REQUIRE(store);
  for (int i = 1; i <= letters; ++i) {
    const auto record = store->get(llmdlq::test::letter(i, setup.options()).dlq_id);
    REQUIRE(record);
    REQUIRE(*record);
    const auto e = llmdlq::parse_envelope((*record)->envelope_json);
    REQUIRE(e);
    llmdlq::test::check_all_open(*e, *setup.cipher, i, "k2");
  }
}

}  // namespace rekey_postgres_test
