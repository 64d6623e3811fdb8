// SPDX-License-Identifier: MIT
// sqlite_replay_state on the SQLite C API: prepared statements, one
// BEGIN IMMEDIATE transaction per operation, one mutex.
#include "llmdlq/config.hpp"
#include "llmdlq/sqlite/replay_state.hpp"
#include "llmdlq/detail/store/ledger_entry.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "connection.hpp"
#include "database_mark.hpp"

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

constexpr std::string_view ledger_columns = "idempotency_key, source, dlq_id, output, written_at, delivered";

ledger_entry read_entry(sqlite3_stmt* s) {
  ledger_entry e;
  e.idempotency_key = column_text(s, 0);
  e.source = column_text(s, 1);
  e.dlq_id = column_text(s, 2);
  e.output = column_text(s, 3);
  e.written_at = parse_rfc3339(column_text(s, 4)).value_or(timestamp{});
  e.delivered = sqlite3_column_int(s, 5) != 0;
  return e;
}

replay_state_error refused(replay_state_errc code, std::string message) { return {code, std::move(message), {}, {}}; }

}  // namespace

namespace detail::sqlite {
std::string replay_state_tables(std::string_view prefix) { return table_definitions(prefix); }
}  // namespace detail::sqlite

struct sqlite_replay_state::impl {
  connection owner;
  sqlite3* db = nullptr;  // owner.db
  std::string path;
  clock_function clock;
  statement begin, commit, rollback;
  statement take_lease, lease_holder, drop_lease;
  statement get_cursor, put_cursor;
  statement get_attempts, reserve, unreserve;
  statement insert_output, select_output, deliver, pending_outputs;
  statement note_failure, select_hold, drop_hold;
  std::mutex mutex;

  replay_state_error failure(std::string_view what) const {
    return refused(replay_state_errc::store_unavailable,
                   fmt::format("sqlite: {}: {}", what, db ? sqlite3_errmsg(db) : "cannot open"));
  }

  timestamp now() const { return clock ? clock() : system_now(); }

  bool step_done(statement& s) {
    const int rc = sqlite3_step(s.get());
    sqlite3_reset(s.get());
    return rc == SQLITE_DONE;
  }

  // Runs op() in one BEGIN IMMEDIATE transaction: committed when it
  // succeeds, rolled back when it fails.
  template <class Op>
  auto transaction(std::string_view what, Op&& op) -> decltype(op()) {
    std::lock_guard lock(mutex);
    if (!step_done(begin)) return unexpected(failure(fmt::format("{}: begin", what)));
    auto r = op();
    if (r && !step_done(commit)) r = unexpected(failure(fmt::format("{}: commit", what)));
    if (!r) step_done(rollback);
    return r;
  }

  // Steps `s` (with its bindings made) to its end, calling on_row(stmt) for
  // each row; resets it. False when SQLite failed.
  template <class OnRow>
  bool run(statement& s, OnRow&& on_row) {
    int rc;
    while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) on_row(s.get());
    sqlite3_reset(s.get());
    sqlite3_clear_bindings(s.get());
    return rc == SQLITE_DONE;
  }
  bool run(statement& s) {
    return run(s, [](sqlite3_stmt*) {});
  }

  expected<call_hold, replay_state_error> hold_of(std::string_view key) {
    bind_text(select_hold.get(), 1, key);
    call_hold found;
    const bool read = run(select_hold, [&](sqlite3_stmt* row) {
      found.failures = static_cast<std::uint32_t>(sqlite3_column_int64(row, 0));
      found.not_before = parse_rfc3339(column_text(row, 1));
      found.last_error = column_text(row, 2);
    });
    if (!read) return unexpected(failure("hold"));
    return found;
  }

  expected<std::optional<ledger_entry>, replay_state_error> entry(std::string_view key) {
    bind_text(select_output.get(), 1, key);
    std::optional<ledger_entry> found;
    if (!run(select_output, [&](sqlite3_stmt* s) { found = read_entry(s); })) return unexpected(failure("find_output"));
    return found;
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
    return unexpected(refused(replay_state_errc::store_unavailable,
                              "sqlite: invalid table prefix '" + p + "' (letters, digits and _, at most 48)"));
  }
  auto state = std::make_unique<impl>();
  state->path = path.string();
  state->clock = std::move(options.clock);
  if (auto why = prepare_private_database(state->path)) {
    return unexpected(refused(replay_state_errc::store_unavailable, "sqlite: " + *why));
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
    return unexpected(refused(replay_state_errc::store_unavailable,
                              "sqlite: " + foreign_database_refusal(state->path, "a replay state", contents->foreign)));
  }
  if (sqlite3_exec(state->db, create_schema(p, !contents->marked).c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    return unexpected(state->failure("create the replay tables in " + state->path));
  }
  sqlite3* db = state->db;
  const bool prepared =
      state->begin.prepare(db, "BEGIN IMMEDIATE") && state->commit.prepare(db, "COMMIT") &&
      state->rollback.prepare(db, "ROLLBACK") &&
      // Taken when free, expired, or already this owner's (a renewal).
      state->take_lease.prepare(db, fmt::format(
          "INSERT INTO {0}_leases (name, owner, expires_at) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO UPDATE "
          "SET owner = excluded.owner, expires_at = excluded.expires_at WHERE owner = excluded.owner "
          "OR expires_at <= ?4", p)) &&
      state->lease_holder.prepare(db, fmt::format("SELECT owner, expires_at FROM {}_leases WHERE name = ?1", p)) &&
      state->drop_lease.prepare(db, fmt::format("DELETE FROM {}_leases WHERE name = ?1 AND owner = ?2", p)) &&
      state->get_cursor.prepare(db, fmt::format("SELECT position FROM {}_cursors WHERE name = ?1", p)) &&
      state->put_cursor.prepare(db, fmt::format(
          "INSERT INTO {0}_cursors (name, position) SELECT ?5, ?3 WHERE EXISTS (SELECT 1 FROM {0}_leases "
          "WHERE name = ?1 AND owner = ?2 AND expires_at > ?4) ON CONFLICT (name) DO UPDATE "
          "SET position = excluded.position", p)) &&
      state->get_attempts.prepare(db, fmt::format(
          "SELECT count FROM {}_attempts WHERE idempotency_key = ?1", p)) &&
      state->reserve.prepare(db, fmt::format(
          "INSERT INTO {0}_attempts (idempotency_key, count) VALUES (?1, 1) ON CONFLICT (idempotency_key) "
          "DO UPDATE SET count = count + 1 WHERE count < ?2 RETURNING count", p)) &&
      state->unreserve.prepare(db, fmt::format(
          "UPDATE {}_attempts SET count = count - 1 WHERE idempotency_key = ?1 AND count > 0", p)) &&
      state->insert_output.prepare(db, fmt::format(
          "INSERT INTO {}_ledger (idempotency_key, source, dlq_id, output, written_at) "
          "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (idempotency_key) DO NOTHING", p)) &&
      state->select_output.prepare(db, fmt::format(
          "SELECT {} FROM {}_ledger WHERE idempotency_key = ?1", ledger_columns, p)) &&
      state->deliver.prepare(db, fmt::format(
          "UPDATE {}_ledger SET delivered = 1 WHERE idempotency_key = ?1", p)) &&
      state->pending_outputs.prepare(db, fmt::format(
          "SELECT {} FROM {}_ledger WHERE delivered = 0 AND source = ?2 ORDER BY written_at, rowid LIMIT ?1", ledger_columns, p)) &&
      // RFC 3339 UTC texts of one width order as their times do: max() keeps the later wait.
      state->note_failure.prepare(db, fmt::format(
          "INSERT INTO {0}_holds (key, failures, not_before, last_error) VALUES (?1, 1, ?2, ?3) "
          "ON CONFLICT (key) DO UPDATE SET failures = failures + 1, not_before = max(not_before, excluded.not_before), "
          "last_error = excluded.last_error", p)) &&
      state->select_hold.prepare(db, fmt::format(
          "SELECT failures, not_before, last_error FROM {}_holds WHERE key = ?1", p)) &&
      state->drop_hold.prepare(db, fmt::format("DELETE FROM {}_holds WHERE key = ?1", p));
  if (!prepared) return unexpected(state->failure("prepare"));
  return sqlite_replay_state(std::move(state));
}

expected<void, replay_state_error> sqlite_replay_state::acquire_lease(std::string_view name, std::string_view owner,
                                                                      std::chrono::seconds ttl) {
  return impl_->transaction("acquire_lease", [&]() -> expected<void, replay_state_error> {
    const timestamp now = impl_->now();
    const std::string at = format_rfc3339(now);
    const std::string until = format_rfc3339(now + ttl);
    sqlite3_stmt* s = impl_->take_lease.get();
    bind_text(s, 1, name);
    bind_text(s, 2, owner);
    bind_text(s, 3, until);
    bind_text(s, 4, at);
    if (!impl_->run(impl_->take_lease)) return unexpected(impl_->failure("acquire_lease"));
    if (sqlite3_changes(impl_->db) != 0) return {};
    auto held = refused(replay_state_errc::lease_held, fmt::format("the lease {} is held", name));
    bind_text(impl_->lease_holder.get(), 1, name);
    const bool read = impl_->run(impl_->lease_holder, [&](sqlite3_stmt* row) {
      held.holder = column_text(row, 0);
      held.expires_at = parse_rfc3339(column_text(row, 1));
    });
    if (!read) return unexpected(impl_->failure("acquire_lease"));
    held.message = fmt::format("the lease {} is held by {} until {}", name, held.holder,
                               held.expires_at ? format_rfc3339(*held.expires_at) : "?");
    return unexpected(std::move(held));
  });
}

expected<void, replay_state_error> sqlite_replay_state::release_lease(std::string_view name, std::string_view owner) {
  return impl_->transaction("release_lease", [&]() -> expected<void, replay_state_error> {
    bind_text(impl_->drop_lease.get(), 1, name);
    bind_text(impl_->drop_lease.get(), 2, owner);
    if (!impl_->run(impl_->drop_lease)) return unexpected(impl_->failure("release_lease"));
    return {};
  });
}

expected<std::optional<std::string>, replay_state_error> sqlite_replay_state::load_cursor(std::string_view name) {
  return impl_->transaction("load_cursor", [&]() -> expected<std::optional<std::string>, replay_state_error> {
    bind_text(impl_->get_cursor.get(), 1, name);
    std::optional<std::string> position;
    if (!impl_->run(impl_->get_cursor, [&](sqlite3_stmt* row) { position = column_text(row, 0); })) {
      return unexpected(impl_->failure("load_cursor"));
    }
    return position;
  });
}

expected<void, replay_state_error> sqlite_replay_state::store_cursor(std::string_view lease, std::string_view owner,
                                                                     std::string_view name,
                                                                     std::string_view position) {
  return impl_->transaction("store_cursor", [&]() -> expected<void, replay_state_error> {
    const std::string at = format_rfc3339(impl_->now());
    sqlite3_stmt* s = impl_->put_cursor.get();
    bind_text(s, 1, lease);
    bind_text(s, 2, owner);
    bind_text(s, 3, position);
    bind_text(s, 4, at);
    bind_text(s, 5, name);
    if (!impl_->run(impl_->put_cursor)) return unexpected(impl_->failure("store_cursor"));
    if (sqlite3_changes(impl_->db) == 0) {
      return unexpected(refused(replay_state_errc::lease_lost,
                                fmt::format("{} does not hold the lease {}: the cursor {} stays", owner, lease, name)));
    }
    return {};
  });
}

expected<std::uint32_t, replay_state_error> sqlite_replay_state::attempts(std::string_view idempotency_key) {
  return impl_->transaction("attempts", [&]() -> expected<std::uint32_t, replay_state_error> {
    bind_text(impl_->get_attempts.get(), 1, idempotency_key);
    std::uint32_t count = 0;
    const bool read = impl_->run(impl_->get_attempts, [&](sqlite3_stmt* row) {
      count = static_cast<std::uint32_t>(sqlite3_column_int64(row, 0));
    });
    if (!read) return unexpected(impl_->failure("attempts"));
    return count;
  });
}

expected<std::uint32_t, replay_state_error> sqlite_replay_state::reserve_attempt(std::string_view idempotency_key,
                                                                                 std::uint32_t max_attempts) {
  const auto exhausted = [&] {
    return refused(replay_state_errc::attempts_exhausted,
                   fmt::format("{} had its {} automated attempts", idempotency_key, max_attempts));
  };
  if (max_attempts == 0) return unexpected(exhausted());
  return impl_->transaction("reserve_attempt", [&]() -> expected<std::uint32_t, replay_state_error> {
    sqlite3_stmt* s = impl_->reserve.get();
    bind_text(s, 1, idempotency_key);
    sqlite3_bind_int64(s, 2, max_attempts);
    std::optional<std::uint32_t> number;
    const bool done = impl_->run(impl_->reserve, [&](sqlite3_stmt* row) {
      number = static_cast<std::uint32_t>(sqlite3_column_int64(row, 0));
    });
    if (!done) return unexpected(impl_->failure("reserve_attempt"));
    if (!number) return unexpected(exhausted());
    return *number;
  });
}

expected<void, replay_state_error> sqlite_replay_state::release_attempt(std::string_view idempotency_key) {
  return impl_->transaction("release_attempt", [&]() -> expected<void, replay_state_error> {
    bind_text(impl_->unreserve.get(), 1, idempotency_key);
    if (!impl_->run(impl_->unreserve)) return unexpected(impl_->failure("release_attempt"));
    return {};
  });
}

expected<call_hold, replay_state_error> sqlite_replay_state::record_call_failure(std::string_view key,
                                                                               timestamp not_before,
                                                                               std::string_view error) {
  return impl_->transaction("record_call_failure", [&]() -> expected<call_hold, replay_state_error> {
    const std::string until = format_rfc3339(not_before);
    sqlite3_stmt* s = impl_->note_failure.get();
    bind_text(s, 1, key);
    bind_text(s, 2, until);
    bind_text(s, 3, error);
    if (!impl_->run(impl_->note_failure)) return unexpected(impl_->failure("record_call_failure"));
    return impl_->hold_of(key);
  });
}

expected<call_hold, replay_state_error> sqlite_replay_state::hold(std::string_view key) {
  return impl_->transaction("hold", [&] { return impl_->hold_of(key); });
}

expected<void, replay_state_error> sqlite_replay_state::clear_hold(std::string_view key) {
  return impl_->transaction("clear_hold", [&]() -> expected<void, replay_state_error> {
    bind_text(impl_->drop_hold.get(), 1, key);
    if (!impl_->run(impl_->drop_hold)) return unexpected(impl_->failure("clear_hold"));
    return {};
  });
}

expected<ledger_entry, replay_state_error> sqlite_replay_state::record_output(std::string_view idempotency_key,
                                                                              std::string_view source,
                                                                              std::string_view dlq_id,
                                                                              std::string_view output) {
  return impl_->transaction("record_output", [&]() -> expected<ledger_entry, replay_state_error> {
    const timestamp now = impl_->now();
    const std::string at = format_rfc3339(now);
    sqlite3_stmt* s = impl_->insert_output.get();
    bind_text(s, 1, idempotency_key);
    bind_text(s, 2, source);
    bind_text(s, 3, dlq_id);
    bind_text(s, 4, output);
    bind_text(s, 5, at);
    if (!impl_->run(impl_->insert_output)) return unexpected(impl_->failure("record_output"));
    if (sqlite3_changes(impl_->db) != 0) {
      return detail::store::written_first(idempotency_key, source, dlq_id, output, now);
    }
    auto earlier = impl_->entry(idempotency_key);
    if (!earlier) return unexpected(std::move(earlier.error()));
    if (!*earlier) return unexpected(impl_->failure("record_output: the earlier entry vanished"));
    return std::move(**earlier);
  });
}

expected<std::optional<ledger_entry>, replay_state_error> sqlite_replay_state::find_output(
    std::string_view idempotency_key) {
  return impl_->transaction("find_output", [&] { return impl_->entry(idempotency_key); });
}

expected<void, replay_state_error> sqlite_replay_state::mark_delivered(std::string_view idempotency_key) {
  return impl_->transaction("mark_delivered", [&]() -> expected<void, replay_state_error> {
    bind_text(impl_->deliver.get(), 1, idempotency_key);
    if (!impl_->run(impl_->deliver)) return unexpected(impl_->failure("mark_delivered"));
    return {};
  });
}

expected<std::vector<ledger_entry>, replay_state_error> sqlite_replay_state::undelivered(std::string_view source,
                                                                                          std::size_t limit) {
  return impl_->transaction("undelivered", [&]() -> expected<std::vector<ledger_entry>, replay_state_error> {
    sqlite3_bind_int64(impl_->pending_outputs.get(), 1,
                       static_cast<sqlite3_int64>(std::min<std::size_t>(limit, INT64_MAX)));
    sqlite3_bind_text(impl_->pending_outputs.get(), 2, source.empty() ? "" : source.data(),
                      static_cast<int>(source.size()), SQLITE_TRANSIENT);
    std::vector<ledger_entry> entries;
    if (!impl_->run(impl_->pending_outputs, [&](sqlite3_stmt* row) { entries.push_back(read_entry(row)); })) {
      return unexpected(impl_->failure("undelivered"));
    }
    return entries;
  });
}

LLMDLQ_END_NAMESPACE
