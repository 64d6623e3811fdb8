// SPDX-License-Identifier: MIT
// sqlite_replay_state on the SQLite C API: the shared operations
// (detail/store/replay_state_sql.hpp), each in one BEGIN IMMEDIATE
// transaction, under one mutex.
#include "llmdlq/config.hpp"
#include "llmdlq/sqlite/replay_state.hpp"
#include "llmdlq/detail/store/replay_state_sql.hpp"

#include <sqlite3.h>

#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "connection.hpp"
#include "database_mark.hpp"
#include "shared_sql.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

using namespace detail::sqlite;

// The replay state's tables.
std::string table_definitions(std::string_view p) {
  return fmt::format(R"sql(
    CREATE TABLE IF NOT EXISTS {0}_leases (
      name       TEXT PRIMARY KEY,
      owner      TEXT NOT NULL,
      expires_at TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS {0}_cursors (
      name     TEXT PRIMARY KEY,
      position TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS {0}_attempts (
      idempotency_key TEXT PRIMARY KEY,
      count           INTEGER NOT NULL CHECK (count >= 0)
    );
    CREATE TABLE IF NOT EXISTS {0}_ledger (
      idempotency_key TEXT PRIMARY KEY,
      source          TEXT NOT NULL,
      dlq_id          TEXT NOT NULL,
      output          TEXT NOT NULL,
      written_at      TEXT NOT NULL,
      delivered       INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS {0}_ledger_undelivered ON {0}_ledger (written_at) WHERE delivered = 0;
    CREATE TABLE IF NOT EXISTS {0}_holds (
      key        TEXT PRIMARY KEY,
      failures   INTEGER NOT NULL CHECK (failures >= 0),
      not_before TEXT NOT NULL,
      last_error TEXT NOT NULL
    );
  )sql", p);
}

// The tables and the journal settings; `mark`: with llmdlq's application
// id, for a file that lacks it.
std::string create_schema(const std::string& p, bool mark) {
  return "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;" + (mark ? mark_statement() : std::string()) +
         table_definitions(p);
}

using detail::store::replay_refusal;

}  // namespace

namespace detail::sqlite {
std::string replay_state_tables(std::string_view prefix) { return table_definitions(prefix); }
}  // namespace detail::sqlite

struct sqlite_replay_state::impl final : detail::store::replay_session {
  connection owner;
  sqlite3* db = nullptr;  // owner.db
  std::string path;
  statement begin, commit, rollback;
  std::mutex mutex;
  detail::store::replay_state_sql state;

  impl(const std::string& p, clock_function clock)
      : state(*this, sqlite_dialect, {p + "_leases", p + "_cursors", p + "_attempts", p + "_ledger", p + "_holds"},
              std::move(clock)) {}

  replay_state_error failure(std::string_view what) const {
    return replay_refusal(replay_state_errc::store_unavailable, failure_message(db, what));
  }

  bool step_done(statement& s) {
    const int rc = sqlite3_step(s.get());
    sqlite3_reset(s.get());
    return rc == SQLITE_DONE;
  }

  expected<void, replay_state_error> execute(const std::string& sql, std::span<const detail::store::sql_value> values,
                                             const row_handler& on_row, std::string_view what) override {
    auto done = execute_sql(db, sql, values, on_row, what);
    if (!done) return unexpected(replay_refusal(replay_state_errc::store_unavailable, std::move(done.error())));
    return {};
  }

  // One BEGIN IMMEDIATE transaction: committed when body succeeds, rolled
  // back when it fails. Nothing is repeated: the file is there or not.
  expected<void, replay_state_error> operation(std::string_view what, bool, const work& body) override {
    std::lock_guard lock(mutex);
    if (!step_done(begin)) return unexpected(failure(fmt::format("{}: begin", what)));
    auto r = body();
    if (r && !step_done(commit)) r = unexpected(failure(fmt::format("{}: commit", what)));
    if (!r) step_done(rollback);
    return r;
  }
};

sqlite_replay_state::sqlite_replay_state(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
sqlite_replay_state::sqlite_replay_state(sqlite_replay_state&&) noexcept = default;
sqlite_replay_state& sqlite_replay_state::operator=(sqlite_replay_state&&) noexcept = default;
sqlite_replay_state::~sqlite_replay_state() = default;

expected<sqlite_replay_state, replay_state_error> sqlite_replay_state::open(const std::filesystem::path& path,
                                                                            sqlite_replay_state_options options) {
  const std::string& p = options.table_prefix;
  if (!valid_table_name(p) || p.size() > 48) {
    return unexpected(replay_refusal(replay_state_errc::store_unavailable,
                                     "sqlite: invalid table prefix '" + p + "' (letters, digits and _, at most 48)"));
  }
  auto state = std::make_unique<impl>(p, std::move(options.clock));
  state->path = path.string();
  if (auto why = prepare_private_database(state->path)) {
    return unexpected(replay_refusal(replay_state_errc::store_unavailable, "sqlite: " + *why));
  }
  const int opened =
      sqlite3_open_v2(state->path.c_str(), &state->owner.db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX, nullptr);
  state->db = state->owner.db;
  if (opened != SQLITE_OK) return unexpected(state->failure("open " + state->path));
  sqlite3_busy_timeout(state->db, options.busy_timeout_ms);
  // It may share a DLQ's file, marked as llmdlq's alike; another application's database is not written to.
  const auto contents = read_contents(state->db);
  if (!contents) return unexpected(state->failure("read " + state->path));
  if (!contents->foreign.empty()) {
    return unexpected(replay_refusal(replay_state_errc::store_unavailable,
                                     "sqlite: " +
                                         foreign_database_refusal(state->path, "a replay state", contents->foreign)));
  }
  if (sqlite3_exec(state->db, create_schema(p, !contents->marked).c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    return unexpected(state->failure("create the replay tables in " + state->path));
  }
  sqlite3* db = state->db;
  const bool prepared = state->begin.prepare(db, "BEGIN IMMEDIATE") && state->commit.prepare(db, "COMMIT") &&
                        state->rollback.prepare(db, "ROLLBACK");
  if (!prepared) return unexpected(state->failure("prepare"));
  return sqlite_replay_state(std::move(state));
}

replay_state& sqlite_replay_state::target() noexcept { return impl_->state; }

LLMDLQ_END_NAMESPACE
