// SPDX-License-Identifier: MIT
// Reading a SQLite moderation queue as an operator: filtered pages that
// neither repeat nor lose a record while others are inserted, counts with
// the oldest pending record, and dead letters and traffic over time.
#include <set>

#include <llmdlq/metrics.hpp>
#include <llmdlq/moderation_query.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"
#include "support/temp_dir.hpp"

namespace sqlite_query_test {

namespace {

using namespace std::chrono_literals;

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

TEST_CASE("sqlite query: each filter narrows the records, all together narrow them all", "[sqlite][query]") {
  llmdlq::test::temp_dir dir;
  auto store = llmdlq::sqlite_store::open(dir.path() / "dlq.db");
  REQUIRE(store);
  using fc = llmdlq::failure_category;
  const auto a = letter("a", fc::syntax, t0, "s1");
  const auto b = letter("b", fc::schema, t0 + 1min, "s2");
  const auto c = letter("c", fc::schema, t0 + 2min, "s1");
  const auto d = letter("d", fc::truncated, t0 + 3min, "s1");
  for (const auto& e : {a, b, c, d}) REQUIRE(store->publish(e));
  REQUIRE(store->act({.dlq_id = c.dlq_id, .action = llmdlq::moderation_action::claim, .operator_name = "ann"}));

  llmdlq::moderation_query q;
  CHECK(ids(*store->query(q)) == std::vector{a.dlq_id, b.dlq_id, c.dlq_id, d.dlq_id});
  q.categories = {"schema"};
  CHECK(ids(*store->query(q)) == std::vector{b.dlq_id, c.dlq_id});
  q.statuses = {llmdlq::moderation_status::pending};
  CHECK(ids(*store->query(q)) == std::vector{b.dlq_id});
  q = {};
  q.schema_version = "s1";
  q.created_since = t0 + 1min;
  CHECK(ids(*store->query(q)) == std::vector{c.dlq_id, d.dlq_id});
  q.created_before = t0 + 3min;
  CHECK(ids(*store->query(q)) == std::vector{c.dlq_id});
  q = {};
  q.failure_codes = {c.failure.code};
  q.triage_classes = {std::string(llmdlq::to_string(c.triage.kind))};
  const auto by_code = store->query(q);
  REQUIRE(by_code);
  CHECK(by_code->records.size() == 2);
  for (const auto& r : by_code->records) CHECK(r.failure_code == c.failure.code);
  q = {};
  q.categories = {"schema', 'syntax"};  // a value, never SQL
  CHECK(store->query(q)->records.empty());
}

TEST_CASE("sqlite query: pages neither repeat nor lose a record while records are inserted", "[sqlite][query]") {
  llmdlq::test::temp_dir dir;
  auto store = llmdlq::sqlite_store::open(dir.path() / "dlq.db");
  REQUIRE(store);
  std::set<std::string> expected;
  int next = 0;
  const auto insert = [&](llmdlq::timestamp at) {
    // Several letters share a creation time: the dlq_id orders them.
    const auto e = letter("k" + std::to_string(next++), llmdlq::failure_category::syntax, at);
    REQUIRE(store->publish(e));
    expected.insert(e.dlq_id);
  };
  for (int i = 0; i < 20; ++i) insert(t0 + std::chrono::seconds(i / 3));
  llmdlq::moderation_query q;
  q.limit = 6;
  std::vector<std::string> seen;
  for (int pages = 0; pages < 50; ++pages) {
    auto page = store->query(q);
    REQUIRE(page);
    for (const auto& r : page->records) seen.push_back(r.dlq_id);
    if (!page->more) {
      CHECK_FALSE(page->next);
      break;
    }
    REQUIRE(page->next);
    CHECK(page->records.size() == 6);
    q.after = page->next;
    // Reads the cursor back as a command line gives it.
    CHECK(llmdlq::parse_moderation_cursor(llmdlq::to_string(*q.after)) == q.after);
    insert(t0 + 1h + std::chrono::seconds(pages));  // newer than every page so far
  }
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == seen.size());
  CHECK(std::set<std::string>(seen.begin(), seen.end()) == expected);
}

TEST_CASE("sqlite statistics: counts and the oldest pending record", "[sqlite][query]") {
  llmdlq::test::temp_dir dir;
  auto store = llmdlq::sqlite_store::open(dir.path() / "dlq.db");
  REQUIRE(store);
  CHECK_FALSE(store->statistics()->oldest_pending_created_at);
  const auto first = letter("a", llmdlq::failure_category::syntax, t0);
  REQUIRE(store->publish(first));
  REQUIRE(store->publish(letter("b", llmdlq::failure_category::schema, t0 + 5min)));
  CHECK(store->statistics()->oldest_pending_created_at == t0);
  REQUIRE(store->act({.dlq_id = first.dlq_id, .action = llmdlq::moderation_action::discard, .operator_name = "o"}));
  const auto stats = store->statistics();
  REQUIRE(stats);
  CHECK(stats->oldest_pending_created_at == t0 + 5min);
  CHECK(stats->total == 2);
  CHECK(stats->by_status.at("discarded") == 1);
}

TEST_CASE("sqlite statistics set the metrics' backlog gauges", "[sqlite][query][metrics]") {
  llmdlq::test::temp_dir dir;
  auto store = llmdlq::sqlite_store::open(dir.path() / "dlq.db");
  REQUIRE(store);
  llmdlq::metrics m;
  REQUIRE(llmdlq::refresh_pending(m, *store, t0));
  CHECK(m.snapshot().pending_records == 0u);
  CHECK(m.snapshot().oldest_pending_age_seconds == 0.0);

  using fc = llmdlq::failure_category;
  const auto a = letter("a", fc::syntax, t0);
  const auto b = letter("b", fc::schema, t0 + 1min);
  for (const auto& e : {a, b}) REQUIRE(store->publish(e));
  REQUIRE(llmdlq::refresh_pending(m, *store, t0 + 10min));
  CHECK(m.snapshot().pending_records == 2u);
  CHECK(m.snapshot().oldest_pending_age_seconds == 600.0);

  // The oldest is claimed: the gauges follow the one still pending.
  REQUIRE(store->act({.dlq_id = a.dlq_id, .action = llmdlq::moderation_action::claim, .operator_name = "ann"}));
  REQUIRE(llmdlq::refresh_pending(m, *store, t0 + 10min));
  CHECK(m.snapshot().pending_records == 1u);
  CHECK(m.snapshot().oldest_pending_age_seconds == 540.0);
}

TEST_CASE("sqlite timeline: dead letters by category and the recorded traffic, per bucket", "[sqlite][query]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  {
    auto store = llmdlq::sqlite_store::open(path);
    REQUIRE(store);
    REQUIRE(store->publish(letter("a", llmdlq::failure_category::syntax, t0 + 30s)));
    REQUIRE(store->publish(letter("b", llmdlq::failure_category::schema, t0 + 59s)));
    REQUIRE(store->publish(letter("c", llmdlq::failure_category::schema, t0 + 2min)));
    REQUIRE(store->publish(letter("d", llmdlq::failure_category::schema, t0 - 1s)));  // before the timeline
    REQUIRE(store->record_traffic(t0 + 10s, 40, 2));
    REQUIRE(store->record_traffic(t0 + 50s, 10, 0));  // the same minute: added up
    REQUIRE(store->record_traffic(t0 + 125s, 7, 1));
  }
  auto reader = llmdlq::sqlite_store::open(path, {.read_only = true});
  REQUIRE(reader);
  const auto timeline = reader->timeline(t0, t0 + 3min, 1min);
  REQUIRE(timeline);
  REQUIRE(timeline->size() == 3);
  CHECK((*timeline)[0].start == t0);
  CHECK((*timeline)[0].dead_letters_by_category == std::map<std::string, std::uint64_t>{{"syntax", 1}, {"schema", 1}});
  CHECK((*timeline)[0].processed == 50);
  CHECK((*timeline)[0].dead_lettered == 2);
  CHECK((*timeline)[1].dead_letters() == 0);
  CHECK((*timeline)[1].processed == 0);
  CHECK((*timeline)[2].start == t0 + 2min);
  CHECK((*timeline)[2].dead_letters() == 1);
  CHECK((*timeline)[2].processed == 7);
  // Recording needs a writable store.
  CHECK_FALSE(reader->record_traffic(t0, 1, 0));
}

}  // namespace sqlite_query_test
