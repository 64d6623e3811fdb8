// SPDX-License-Identifier: MIT
// How sqlite_store and sqlite_replay_state know a database as llmdlq's: its
// application id (0x4C444C51, "LDLQ"), set when they make their tables; a
// file without it is taken only when it is empty or holds nothing but
// llmdlq's tables in their layouts (one an earlier version made), and is
// marked then. Anything else is refused before a byte is written.
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <llmdlq/envelope.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"
#include "support/temp_dir.hpp"

namespace sqlite_database_mark_test {

using llmdlq::test::slurp;
using llmdlq::test::temp_dir;

namespace {

constexpr std::int64_t llmdlq_id = 0x4C444C51;

llmdlq::envelope sample(std::string key) {
  llmdlq::request_context context;
  context.idempotency_key = std::move(key);
  return llmdlq::test::check_envelope(
      llmdlq::make_envelope({.category = llmdlq::failure_category::syntax, .message = "test failure"}, "raw text",
                            context, {}));
}

// Runs `sql` on `path` through a connection of its own.
void run_sql(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  INFO((error ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
  ::chmod(path.c_str(), 0600);
}

// The first integer `sql` reads from `path`.
std::int64_t number(const std::filesystem::path& path, const char* sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(s) == SQLITE_ROW);
  const auto value = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return value;
}

std::int64_t application_id(const std::filesystem::path& path) { return number(path, "PRAGMA application_id"); }

// The journal mode of `path`, as SQLite names it ("delete", "wal").
std::string journal_mode(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(s) == SQLITE_ROW);
  std::string mode = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return mode;
}

// The DLQ table as the first version made it: no claimed_by, no resolution, a narrower status CHECK.
constexpr const char* first_version_table = R"sql(
  CREATE TABLE dead_letters (
    dlq_id          TEXT PRIMARY KEY,
    idempotency_key TEXT,
    attempt         INTEGER NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'claimed', 'resolved', 'discarded', 'requeued')),
    category        TEXT NOT NULL,
    triage          TEXT NOT NULL,
    action          TEXT NOT NULL,
    failure_code    TEXT NOT NULL,
    message         TEXT NOT NULL,
    raw_sha256      TEXT NOT NULL,
    envelope        TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    expires_at      TEXT,
    operator_log    TEXT NOT NULL DEFAULT '[]'
  );
  CREATE UNIQUE INDEX dead_letters_attempt ON dead_letters (idempotency_key, attempt)
    WHERE idempotency_key IS NOT NULL;
  CREATE INDEX dead_letters_status ON dead_letters (status, category);
)sql";

}  // namespace

TEST_CASE("sqlite database mark: a new store or replay state marks its file as llmdlq's", "[sqlite][mark]") {
  temp_dir dir;
  REQUIRE(llmdlq::sqlite_store::open(dir.path() / "dlq.db").has_value());
  CHECK(application_id(dir.path() / "dlq.db") == llmdlq_id);
  REQUIRE(llmdlq::sqlite_replay_state::open(dir.path() / "state.db").has_value());
  CHECK(application_id(dir.path() / "state.db") == llmdlq_id);
}

TEST_CASE("sqlite database mark: a store and a replay state share a file, whichever opens it first",
          "[sqlite][mark]") {
  temp_dir dir;
  const auto path = dir.path() / "shared.db";
  const bool state_first = GENERATE(false, true);
  CAPTURE(state_first);
  const auto open_state = [&] {
    auto state = llmdlq::sqlite_replay_state::open(path, {.table_prefix = "nightly"});
    INFO((state ? "" : state.error().message));
    REQUIRE(state.has_value());
    REQUIRE(state->reserve_attempt("key", 100).has_value());
  };
  const auto open_store = [&] {
    auto store = llmdlq::sqlite_store::open(path, {.table = "letters"});
    INFO((store ? "" : store.error().message));
    REQUIRE(store.has_value());
    REQUIRE(store->publish(sample("shared")).has_value());
  };
  if (state_first) open_state();
  open_store();
  if (!state_first) open_state();
  open_state();
  CHECK(application_id(path) == llmdlq_id);

  // Unmarked, as an earlier version left it, it is still llmdlq's: its
  // tables are. A read-only view reads it as it is, and marks nothing.
  run_sql(path, "PRAGMA application_id = 0");
  {
    auto view = llmdlq::sqlite_store::open(path, {.table = "letters", .read_only = true});
    INFO((view ? "" : view.error().message));
    REQUIRE(view.has_value());
    CHECK(view->statistics()->total == 1);
  }
  CHECK(application_id(path) == 0);
  open_store();
  CHECK(application_id(path) == llmdlq_id);
  run_sql(path, "PRAGMA application_id = 0");
  open_state();
  CHECK(application_id(path) == llmdlq_id);
  auto store = llmdlq::sqlite_store::open(path, {.table = "letters", .read_only = true});
  REQUIRE(store.has_value());
  CHECK(store->statistics()->total == 1);  // the same letter each time: a duplicate
}

TEST_CASE("sqlite database mark: a DLQ the first version made is taken, migrated and marked", "[sqlite][mark]") {
  temp_dir dir;
  const auto path = dir.path() / "old.db";
  run_sql(path, first_version_table);
  CHECK(application_id(path) == 0);

  auto store = llmdlq::sqlite_store::open(path);
  INFO((store ? "" : store.error().message));
  REQUIRE(store.has_value());
  CHECK(application_id(path) == llmdlq_id);
  REQUIRE(store->publish(sample("after")).has_value());
  CHECK(number(path, "SELECT count(*) FROM pragma_table_info('dead_letters') WHERE name = 'resolution'") == 1);
}

TEST_CASE("sqlite database mark: another application's database is refused untouched", "[sqlite][mark]") {
  temp_dir dir;
  const auto path = dir.path() / "app.db";
  struct variant {
    const char* name;
    std::string sql;
    std::string says;
  };
  const auto v = GENERATE(
      variant{"an unrelated table", "CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)",
              "it holds the table orders (id INTEGER, total REAL), which llmdlq did not make"},
      variant{"a dead_letters table of another layout", "CREATE TABLE dead_letters (id INTEGER, body TEXT)",
              "it holds the table dead_letters (id INTEGER, body TEXT), which llmdlq did not make"},
      variant{"a DLQ's table beside another", std::string(first_version_table) + "CREATE TABLE notes (t TEXT);",
              "it holds the table notes (t TEXT), which llmdlq did not make"},
      variant{"a view", std::string(first_version_table) + "CREATE VIEW pending AS SELECT * FROM dead_letters;",
              "it holds the view pending, which llmdlq did not make"},
      variant{"another application's id on a DLQ's table",
              std::string(first_version_table) + "PRAGMA application_id = 7;",
              "its application id is 0x00000007, another application's (a DLQ's is 0x4c444c51)"},
      variant{"a user_version", "PRAGMA user_version = 3;", "its user_version is 3, which llmdlq never sets"});
  CAPTURE(v.name);
  run_sql(path, v.sql);
  const std::string before = slurp(path);

  auto store = llmdlq::sqlite_store::open(path);
  REQUIRE_FALSE(store.has_value());
  CHECK(store.error().code == llmdlq::sink_errc::rejected);
  CHECK(store.error().message == "sqlite: " + path.string() + " is not a DLQ: " + v.says +
                                     "; nothing was written to it (give the path of a DLQ, or of a file that is not "
                                     "there yet)");
  auto view = llmdlq::sqlite_store::open(path, {.read_only = true});
  REQUIRE_FALSE(view.has_value());
  CHECK(view.error().code == llmdlq::sink_errc::rejected);
  auto state = llmdlq::sqlite_replay_state::open(path);
  REQUIRE_FALSE(state.has_value());
  CHECK(state.error().code == llmdlq::replay_state_errc::store_unavailable);
  CHECK(state.error().message.find(path.string() + " is not a replay state: " + v.says) != std::string::npos);

  CHECK(slurp(path) == before);
  for (const char* beside : {"-wal", "-shm", "-journal"}) {
    CHECK_FALSE(std::filesystem::exists(path.string() + beside));
  }
  CHECK(journal_mode(path) == "delete");  // not switched to WAL
}

}  // namespace sqlite_database_mark_test
