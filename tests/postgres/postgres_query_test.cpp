// SPDX-License-Identifier: MIT
// Reading a PostgreSQL moderation queue as an operator: filtered pages that
// neither repeat nor lose a record while others are inserted, counts with
// the oldest pending record, and dead letters and traffic over time.
// Each test works in a table of its own, dropped at its end.
#include <libpq-fe.h>

#include <cstdlib>
#include <random>
#include <set>

#include <fmt/format.h>
#include <llmdlq/moderation_query.hpp>
#include <llmdlq/postgres/store.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"
#include "support/skip.hpp"
#include "support/envelope_check.hpp"

namespace postgres_query_test {

using namespace std::chrono_literals;

namespace {

const char* conninfo() { return std::getenv("LLMDLQ_TEST_POSTGRES"); }

#define REQUIRE_POSTGRES()                                                                   \
  do {                                                                                     \
    if (!conninfo()) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)"); \
  } while (false)

// A table name of the test's own, dropped (with its traffic rows) at the end.
struct scoped_table {
  std::string name = [] {
    std::random_device device;
    return fmt::format("llmdlq_query_{:016x}", std::uint64_t{device()} << 32 | device());
  }();
  ~scoped_table() {
    PGconn* conn = PQconnectdb(conninfo());
    const std::string sql = fmt::format(
        "DROP TABLE IF EXISTS \"{0}\"; DELETE FROM llmdlq_traffic WHERE dlq_table = '{0}'", name);
    PQclear(PQexec(conn, sql.c_str()));
    PQfinish(conn);
  }
};

llmdlq::postgres_store open(const scoped_table& table) {
  llmdlq::postgres_store_options options;
  options.table = table.name;
  auto store = llmdlq::postgres_store::open(conninfo(), options);
  REQUIRE(store);
  return std::move(*store);
}

const llmdlq::timestamp t0 = *llmdlq::parse_rfc3339("2026-11-30T10:00:00.000Z");

llmdlq::envelope letter(const std::string& key, llmdlq::failure_category category, llmdlq::timestamp at,
                        std::string schema_version = "s1") {
  llmdlq::request_context context;
  context.idempotency_key = key;
  context.attempt = 1;
  llmdlq::process_options options;
  options.clock = [at] { return at; };
  auto e = llmdlq::make_envelope({.category = category, .message = "test failure"}, "raw text", context, options);
  e.versions.schema = std::move(schema_version);
  return llmdlq::test::check_envelope(e);
}

std::vector<std::string> ids(const llmdlq::moderation_page& page) {
  std::vector<std::string> out;
  for (const auto& r : page.records) out.push_back(r.dlq_id);
  return out;
}

}  // namespace

TEST_CASE("postgres query: each filter narrows the records, values are bound", "[postgres][query]") {
  REQUIRE_POSTGRES();
  scoped_table table;
  auto store = open(table);
  using fc = llmdlq::failure_category;
  const auto a = letter("a", fc::syntax, t0, "s1");
  const auto b = letter("b", fc::schema, t0 + 1min, "s2");
  const auto c = letter("c", fc::schema, t0 + 2min, "s1");
  const auto d = letter("d", fc::truncated, t0 + 3min, "s1");
  for (const auto& e : {a, b, c, d}) REQUIRE(store.publish(e));
  REQUIRE(store.act({.dlq_id = c.dlq_id, .action = llmdlq::moderation_action::claim, .operator_name = "ann"}));

  llmdlq::moderation_query q;
  CHECK(ids(*store.query(q)) == std::vector{a.dlq_id, b.dlq_id, c.dlq_id, d.dlq_id});
  q.categories = {"schema"};
  CHECK(ids(*store.query(q)) == std::vector{b.dlq_id, c.dlq_id});
  q.statuses = {llmdlq::moderation_status::pending};
  CHECK(ids(*store.query(q)) == std::vector{b.dlq_id});
  q = {};
  q.schema_version = "s1";
  q.created_since = t0 + 1min;
  CHECK(ids(*store.query(q)) == std::vector{c.dlq_id, d.dlq_id});
  q.created_before = t0 + 3min;
  CHECK(ids(*store.query(q)) == std::vector{c.dlq_id});
  q = {};
  q.categories = {"schema' OR 'x' = 'x"};
  CHECK(store.query(q)->records.empty());
}

TEST_CASE("postgres query: pages neither repeat nor lose a record while records are inserted", "[postgres][query]") {
  REQUIRE_POSTGRES();
  scoped_table table;
  auto store = open(table);
  std::set<std::string> expected;
  int next = 0;
  const auto insert = [&](llmdlq::timestamp at) {
    const auto e = letter("k" + std::to_string(next++), llmdlq::failure_category::syntax, at);
    REQUIRE(store.publish(e));
    expected.insert(e.dlq_id);
  };
  for (int i = 0; i < 20; ++i) insert(t0 + std::chrono::seconds(i / 3));
  llmdlq::moderation_query q;
  q.limit = 6;
  std::vector<std::string> seen;
  for (int pages = 0; pages < 50; ++pages) {
    auto page = store.query(q);
    REQUIRE(page);
    for (const auto& r : page->records) seen.push_back(r.dlq_id);
    if (!page->more) break;
    REQUIRE(page->next);
    q.after = page->next;
    insert(t0 + 1h + std::chrono::seconds(pages));
  }
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == seen.size());
  CHECK(std::set<std::string>(seen.begin(), seen.end()) == expected);
}

TEST_CASE("postgres statistics and timeline: counts, oldest pending, buckets with traffic", "[postgres][query]") {
  REQUIRE_POSTGRES();
  scoped_table table;
  auto store = open(table);
  const auto first = letter("a", llmdlq::failure_category::syntax, t0 + 30s);
  REQUIRE(store.publish(first));
  REQUIRE(store.publish(letter("b", llmdlq::failure_category::schema, t0 + 59s)));
  REQUIRE(store.publish(letter("c", llmdlq::failure_category::schema, t0 + 2min)));
  REQUIRE(store.act({.dlq_id = first.dlq_id, .action = llmdlq::moderation_action::discard, .operator_name = "o"}));
  const auto stats = store.statistics();
  REQUIRE(stats);
  CHECK(stats->total == 3);
  CHECK(stats->by_status.at("pending") == 2);
  CHECK(stats->by_category.at("schema") == 2);
  CHECK(stats->oldest_pending_created_at == t0 + 59s);

  REQUIRE(store.record_traffic(t0 + 10s, 40, 2));
  REQUIRE(store.record_traffic(t0 + 50s, 10, 0));
  REQUIRE(store.record_traffic(t0 + 125s, 7, 1));
  const auto timeline = store.timeline(t0, t0 + 3min, 1min);
  REQUIRE(timeline);
  REQUIRE(timeline->size() == 3);
  CHECK((*timeline)[0].start == t0);
  CHECK((*timeline)[0].dead_letters_by_category == std::map<std::string, std::uint64_t>{{"syntax", 1}, {"schema", 1}});
  CHECK((*timeline)[0].processed == 50);
  CHECK((*timeline)[0].dead_lettered == 2);
  CHECK((*timeline)[1].dead_letters() == 0);
  CHECK((*timeline)[2].dead_letters() == 1);
  CHECK((*timeline)[2].processed == 7);
}

}  // namespace postgres_query_test
