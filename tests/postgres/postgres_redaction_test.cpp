// SPDX-License-Identifier: MIT
// What the PostgreSQL store keeps holds no detected value: every column of
// every row, read back as text with libpq.
#include <libpq-fe.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <llmdlq/postgres/store.hpp>

#include "catch.hpp"
#include "support/skip.hpp"
#include "support/pii_sample.hpp"

namespace postgres_redaction_test {

TEST_CASE("postgres_store: no column of any row holds a detected value", "[postgres][redaction]") {
  const char* conninfo = std::getenv("LLMDLQ_TEST_POSTGRES");
  if (!conninfo) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set");
  const std::string table = "llmdlq_redaction_" + std::to_string(::getpid());
  auto store = llmdlq::postgres_store::open(conninfo, {.table = table});
  REQUIRE(store.has_value());
  REQUIRE(store->publish(llmdlq::test::pii_envelope()).has_value());

  PGconn* conn = PQconnectdb(conninfo);
  REQUIRE(PQstatus(conn) == CONNECTION_OK);
  PGresult* rows = PQexec(conn, ("SELECT t::text FROM \"" + table + "\" t").c_str());
  std::string stored;
  const bool read = PQresultStatus(rows) == PGRES_TUPLES_OK && PQntuples(rows) == 1;
  if (read) stored = PQgetvalue(rows, 0, 0);
  PQclear(rows);
  PQclear(PQexec(conn, ("DROP TABLE IF EXISTS \"" + table + "\"").c_str()));
  PQfinish(conn);
  REQUIRE(read);
  llmdlq::test::check_no_pii(stored);
}

}  // namespace postgres_redaction_test
