// SPDX-License-Identifier: MIT
// A pipeline's traffic in its store: what handle() judged reaches
// record_traffic at a flush (the host's, a dead letter's in a new minute, or
// the pipeline's end), and timeline() reads it back per minute.
#include <sqlite3.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <llmdlq/memory_sink.hpp>
#include <llmdlq/pipeline.hpp>
#include <llmdlq/sqlite/store.hpp>
#include <llmdlq/typed_pipeline.hpp>

#include "catch.hpp"
#include "support/temp_dir.hpp"

namespace pipeline_traffic_test {

namespace {

using namespace std::chrono_literals;

const llmdlq::timestamp t0 = *llmdlq::parse_rfc3339("2026-11-30T10:00:00.000Z");

constexpr std::string_view schema_text = R"({"type": "object", "required": ["total"]})";
constexpr std::string_view valid = R"({"total": 3})";
constexpr std::string_view invalid = R"({"sum": 3})";

// A clock the test moves; every copy of the options reads the same time.
struct test_clock {
  std::shared_ptr<std::atomic<llmdlq::timestamp>> now = std::make_shared<std::atomic<llmdlq::timestamp>>(t0 + 10s);
  void set(llmdlq::timestamp t) const { now->store(t); }
  [[nodiscard]] llmdlq::clock_function function() const {
    return [now = now] { return now->load(); };
  }
};

llmdlq::process_options options_at(const test_clock& clock) {
  llmdlq::process_options options;
  options.clock = clock.function();
  return options;
}

llmdlq::schema total_schema() { return *llmdlq::schema::compile(std::string(schema_text)); }

llmdlq::request_context keyed(const std::string& key) {
  llmdlq::request_context context;
  context.idempotency_key = key;
  return context;
}

// The traffic of the minute starting at `minute`, read back as the console reads it.
llmdlq::dlq_timeline_bucket traffic_in(const std::filesystem::path& db, llmdlq::timestamp minute) {
  auto reader = llmdlq::sqlite_store::open(db, {.read_only = true});
  REQUIRE(reader);
  auto timeline = reader->timeline(minute, minute + 1min, 1min);
  REQUIRE(timeline);
  REQUIRE(timeline->size() == 1);
  return timeline->front();
}

// Runs one SQL statement on the file with SQLite directly, as another process would.
void execute(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  const int rc = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(handle);
  REQUIRE(rc == SQLITE_OK);
}

std::string traffic_table_sql(const std::filesystem::path& db) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(handle, "SELECT sql FROM sqlite_master WHERE name = 'llmdlq_traffic'", -1, &stmt,
                             nullptr) == SQLITE_OK);
  std::string sql;
  if (sqlite3_step(stmt) == SQLITE_ROW) sql = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  sqlite3_close(handle);
  REQUIRE_FALSE(sql.empty());
  return sql;
}

}  // namespace

TEST_CASE("pipeline traffic: accepted and dead-lettered responses reach the store's minute at a flush",
          "[pipeline][traffic][sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto db = dir.path() / "dlq.db";
  const test_clock clock;
  const llmdlq::pipeline pipeline{total_schema(), *llmdlq::sqlite_store::open(db), options_at(clock), std::nullopt,
                                  llmdlq::traffic_recording::on};
  REQUIRE(pipeline.records_traffic());

  constexpr int accepted = 7;
  constexpr int dead_lettered = 3;
  for (int i = 0; i < accepted; ++i) REQUIRE(pipeline.handle(valid, keyed("ok:" + std::to_string(i))).accepted);
  for (int i = 0; i < dead_lettered; ++i) {
    const auto d = pipeline.handle(invalid, keyed("bad:" + std::to_string(i)));
    REQUIRE(d.dead_letter);
    REQUIRE(d.should_commit());
  }
  clock.set(t0 + 50s);  // the same minute
  REQUIRE(pipeline.flush_traffic());

  const auto bucket = traffic_in(db, t0);
  CHECK(bucket.processed == accepted + dead_lettered);
  CHECK(bucket.dead_lettered == dead_lettered);
  CHECK(bucket.dead_letters() == dead_lettered);  // the stored letters agree with the traffic

  // A flush with nothing counted since adds nothing.
  REQUIRE(pipeline.flush_traffic());
  CHECK(traffic_in(db, t0).processed == accepted + dead_lettered);
  CHECK(pipeline.traffic().recording);
  CHECK(pipeline.traffic().failed_flushes == 0);
}

TEST_CASE("pipeline traffic: accepted responses are recorded only at a flush or when the pipeline goes",
          "[pipeline][traffic][sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto db = dir.path() / "dlq.db";
  const test_clock clock;
  {
    const llmdlq::pipeline pipeline{total_schema(), *llmdlq::sqlite_store::open(db), options_at(clock),
                                    std::nullopt, llmdlq::traffic_recording::on};
    for (int i = 0; i < 5; ++i) REQUIRE(pipeline.handle(valid, keyed("ok:" + std::to_string(i))).accepted);
    clock.set(t0 + 3min);  // minutes pass, but no success touches the store
    for (int i = 5; i < 9; ++i) REQUIRE(pipeline.handle(valid, keyed("ok:" + std::to_string(i))).accepted);
    CHECK(traffic_in(db, t0).processed == 0);
    CHECK(traffic_in(db, t0 + 3min).processed == 0);

    REQUIRE(pipeline.flush_traffic());
    // Everything since the last flush is the flush's minute.
    CHECK(traffic_in(db, t0).processed == 0);
    CHECK(traffic_in(db, t0 + 3min).processed == 9);

    clock.set(t0 + 4min + 5s);
    const llmdlq::pipeline copy = pipeline;  // copies share the counts
    REQUIRE(copy.handle(valid, keyed("ok:copy")).accepted);
    REQUIRE(pipeline.handle(valid, keyed("ok:last")).accepted);
  }
  const auto bucket = traffic_in(db, t0 + 4min);
  CHECK(bucket.processed == 2);
  CHECK(bucket.dead_lettered == 0);
}

TEST_CASE("pipeline traffic: a dead letter in a new minute flushes what was counted before it",
          "[pipeline][traffic][sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto db = dir.path() / "dlq.db";
  const test_clock clock;
  const llmdlq::pipeline pipeline{total_schema(), *llmdlq::sqlite_store::open(db), options_at(clock), std::nullopt,
                                  llmdlq::traffic_recording::on};
  for (int i = 0; i < 4; ++i) REQUIRE(pipeline.handle(valid, keyed("ok:" + std::to_string(i))).accepted);
  REQUIRE(pipeline.handle(invalid, keyed("bad:0")).should_commit());  // the pipeline's own minute: no flush
  CHECK(traffic_in(db, t0).processed == 0);

  clock.set(t0 + 1min + 20s);
  REQUIRE(pipeline.handle(invalid, keyed("bad:1")).should_commit());
  const auto bucket = traffic_in(db, t0 + 1min);
  CHECK(bucket.processed == 6);
  CHECK(bucket.dead_lettered == 2);

  // An envelope made elsewhere (a transport failure) is a processed response too.
  clock.set(t0 + 2min);
  auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::poison, .message = "context length exceeded"},
                                 "", keyed("transport:0"), options_at(clock));
  REQUIRE(pipeline.dead_letter(std::move(e)).should_commit());
  CHECK(traffic_in(db, t0 + 2min).processed == 1);
  CHECK(traffic_in(db, t0 + 2min).dead_lettered == 1);
}

TEST_CASE("pipeline traffic: a store that cannot record keeps the counts and never fails handle()",
          "[pipeline][traffic][sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto db = dir.path() / "dlq.db";
  const test_clock clock;
  const llmdlq::pipeline pipeline{total_schema(), *llmdlq::sqlite_store::open(db), options_at(clock), std::nullopt,
                                  llmdlq::traffic_recording::on};
  const std::string table = traffic_table_sql(db);
  execute(db, "DROP TABLE llmdlq_traffic");

  REQUIRE(pipeline.handle(valid, keyed("ok:0")).accepted);
  clock.set(t0 + 1min);  // this dead letter's flush fails; the dead letter itself is stored
  const auto d = pipeline.handle(invalid, keyed("bad:0"));
  CHECK(d.should_commit());
  CHECK(d.stored);
  CHECK(pipeline.traffic().failed_flushes == 1);
  CHECK_FALSE(pipeline.flush_traffic());
  CHECK(pipeline.traffic().failed_flushes == 2);
  CHECK(pipeline.traffic().last_error);

  execute(db, table);
  REQUIRE(pipeline.handle(valid, keyed("ok:1")).accepted);
  REQUIRE(pipeline.flush_traffic());
  CHECK_FALSE(pipeline.traffic().last_error);
  const auto bucket = traffic_in(db, t0 + 1min);
  CHECK(bucket.processed == 3);
  CHECK(bucket.dead_lettered == 1);
}

TEST_CASE("pipeline traffic: threads handling and flushing at once lose no count", "[pipeline][traffic][sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto db = dir.path() / "dlq.db";
  const test_clock clock;
  constexpr int threads = 2;
  constexpr int accepted_per_thread = 500;
  constexpr int dead_per_thread = 5;
  {
    const llmdlq::pipeline pipeline{total_schema(), *llmdlq::sqlite_store::open(db), options_at(clock),
                                    std::nullopt, llmdlq::traffic_recording::on};
    std::atomic<bool> done{false};
    std::thread flusher([&] {
      while (!done.load()) {
        (void)pipeline.flush_traffic();
        std::this_thread::yield();
      }
    });
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&pipeline, t] {
        for (int i = 0; i < accepted_per_thread; ++i) {
          (void)pipeline.handle(valid, keyed("ok:" + std::to_string(t) + ":" + std::to_string(i)));
          if (i % (accepted_per_thread / dead_per_thread) == 0) {
            (void)pipeline.handle(invalid, keyed("bad:" + std::to_string(t) + ":" + std::to_string(i)));
          }
        }
      });
    }
    for (auto& w : workers) w.join();
    done = true;
    flusher.join();
  }
  const auto bucket = traffic_in(db, t0);
  CHECK(bucket.processed == threads * (accepted_per_thread + dead_per_thread));
  CHECK(bucket.dead_lettered == threads * dead_per_thread);
}

TEST_CASE("pipeline traffic: on by default, off when told, and a sink that is not a store works unchanged",
          "[pipeline][traffic][sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto db = dir.path() / "dlq.db";
  const test_clock clock;
  CHECK(llmdlq::pipeline{total_schema(), *llmdlq::sqlite_store::open(db), options_at(clock)}.records_traffic());
  {
    const llmdlq::pipeline pipeline{total_schema(), *llmdlq::sqlite_store::open(db), options_at(clock), std::nullopt,
                                    llmdlq::traffic_recording::off};
    CHECK_FALSE(pipeline.records_traffic());
    REQUIRE(pipeline.handle(valid, keyed("ok:0")).accepted);
    REQUIRE(pipeline.handle(invalid, keyed("bad:0")).should_commit());
    CHECK(pipeline.flush_traffic());
  }
  CHECK(traffic_in(db, t0).processed == 0);
  CHECK(traffic_in(db, t0).dead_letters() == 1);

  auto memory = std::make_shared<llmdlq::memory_sink>();
  const llmdlq::pipeline pipeline{total_schema(), memory, options_at(clock), std::nullopt,
                                  llmdlq::traffic_recording::on};
  CHECK_FALSE(pipeline.records_traffic());
  CHECK_FALSE(pipeline.traffic().recording);
  CHECK(pipeline.handle(valid, keyed("ok:0")).accepted);
  const auto d = pipeline.handle(invalid, keyed("bad:0"));
  CHECK(d.should_commit());
  CHECK(memory->size() == 1);
  CHECK(pipeline.flush_traffic());
}

namespace shop {
struct receipt {
  double total = 0;
};
BOOST_DESCRIBE_STRUCT(receipt, (), (total))
}  // namespace shop

TEST_CASE("pipeline traffic: typed_pipeline records as pipeline does", "[pipeline][traffic][sqlite][typed]") {
  llmdlq::test::temp_dir dir;
  const auto db = dir.path() / "dlq.db";
  const test_clock clock;
  {
    const llmdlq::typed_pipeline<shop::receipt> pipeline{*llmdlq::sqlite_store::open(db), options_at(clock),
                                                         std::nullopt, llmdlq::traffic_recording::on};
    REQUIRE(pipeline.records_traffic());
    REQUIRE(pipeline.handle(valid, keyed("ok:0")).value);
    REQUIRE(pipeline.handle(valid, keyed("ok:1")).value);
    REQUIRE(pipeline.handle(R"({"total": "three"})", keyed("bad:0")).should_commit());
  }
  const auto bucket = traffic_in(db, t0);
  CHECK(bucket.processed == 3);
  CHECK(bucket.dead_lettered == 1);
}

}  // namespace pipeline_traffic_test
