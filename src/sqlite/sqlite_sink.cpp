// SPDX-License-Identifier: MIT
// sqlite_sink on the SQLite C API: prepared statements, WAL, one mutex.
#include "llmdlq/sqlite_sink.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <mutex>

#include <fmt/format.h>

namespace llmdlq {

namespace {

sink_error sqlite_failure(sqlite3* db, std::string_view what) {
  const int code = db ? sqlite3_extended_errcode(db) : SQLITE_CANTOPEN;
  const int primary = code & 0xFF;
  const sink_errc kind = primary == SQLITE_BUSY || primary == SQLITE_LOCKED ? sink_errc::timeout
                         : primary == SQLITE_CONSTRAINT || primary == SQLITE_TOOBIG || primary == SQLITE_READONLY ||
                                 primary == SQLITE_PERM
                             ? sink_errc::rejected
                         : primary == SQLITE_CANTOPEN ? sink_errc::unavailable
                                                      : sink_errc::io_error;
  return {kind, fmt::format("sqlite: {}: {}", what, db ? sqlite3_errmsg(db) : "cannot open")};
}

bool valid_table_name(std::string_view name) {
  return !name.empty() && name.size() <= 63 && !(name[0] >= '0' && name[0] <= '9') &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
         });
}

// A prepared statement that resets itself after each use.
class statement {
 public:
  statement() = default;
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  ~statement() { sqlite3_finalize(stmt_); }

  bool prepare(sqlite3* db, const std::string& sql) {
    return sqlite3_prepare_v3(db, sql.c_str(), static_cast<int>(sql.size() + 1), SQLITE_PREPARE_PERSISTENT, &stmt_,
                              nullptr) == SQLITE_OK;
  }
  sqlite3_stmt* get() const noexcept { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

void bind_text(sqlite3_stmt* stmt, int index, std::string_view text) {
  if (text.empty()) {
    sqlite3_bind_null(stmt, index);
  } else {
    sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
}

// Declared before the statements, so destroyed after them: sqlite3_close
// refuses while a statement is alive.
struct connection {
  sqlite3* db = nullptr;
  connection() = default;
  connection(const connection&) = delete;
  ~connection() { sqlite3_close(db); }
};

}  // namespace

struct sqlite_sink::impl {
  connection owner;
  sqlite3* db = nullptr;  // owner.db
  std::string table;
  std::string path;
  statement insert, begin, commit, rollback, find;
  std::mutex mutex;

  bool exec(const std::string& sql) { return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK; }

  bool step_done(statement& s) {
    const int rc = sqlite3_step(s.get());
    sqlite3_reset(s.get());
    return rc == SQLITE_DONE;
  }

  // Inserts one row; nothing when the row was already there.
  expected<receipt, sink_error> insert_row(const envelope& e) {
    sqlite3_stmt* s = insert.get();
    sqlite3_clear_bindings(s);
    const std::string json = serialize(e);
    const std::string created = format_rfc3339(e.created_at);
    const std::string expires = e.expires_at ? format_rfc3339(*e.expires_at) : std::string();
    bind_text(s, 1, e.dlq_id);
    bind_text(s, 2, e.idempotency_key);
    sqlite3_bind_int64(s, 3, e.attempts.count);
    bind_text(s, 4, to_string(e.failure.category));
    bind_text(s, 5, to_string(e.triage.kind));
    bind_text(s, 6, to_string(e.triage.action));
    bind_text(s, 7, e.failure.code);
    sqlite3_bind_text(s, 8, e.failure.message.data(), static_cast<int>(e.failure.message.size()), SQLITE_TRANSIENT);
    bind_text(s, 9, e.raw_response.sha256);
    bind_text(s, 10, json);
    bind_text(s, 11, created);
    bind_text(s, 12, expires);
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return unexpected(sqlite_failure(db, "insert"));
    const bool duplicate = sqlite3_changes(db) == 0;
    return receipt{e.dlq_id, duplicate, fmt::format("sqlite:{}#{}", path, table)};
  }
};

sqlite_sink::sqlite_sink(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
sqlite_sink::sqlite_sink(sqlite_sink&&) noexcept = default;
sqlite_sink& sqlite_sink::operator=(sqlite_sink&&) noexcept = default;
sqlite_sink::~sqlite_sink() = default;

expected<sqlite_sink, sink_error> sqlite_sink::open(const std::filesystem::path& path, sqlite_sink_options options) {
  if (!valid_table_name(options.table)) {
    return unexpected(sink_error{sink_errc::rejected, "sqlite: invalid table name '" + options.table + "'"});
  }
  auto state = std::make_unique<impl>();
  state->table = options.table;
  state->path = path.string();
  const int opened = sqlite3_open_v2(state->path.c_str(), &state->owner.db,
                                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  state->db = state->owner.db;
  if (opened != SQLITE_OK) return unexpected(sqlite_failure(state->db, "open " + state->path));
  sqlite3_busy_timeout(state->db, options.busy_timeout_ms);
  const std::string& t = state->table;
  const std::string schema = fmt::format(R"sql(
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = FULL;
    CREATE TABLE IF NOT EXISTS {0} (
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
    CREATE UNIQUE INDEX IF NOT EXISTS {0}_attempt ON {0} (idempotency_key, attempt)
      WHERE idempotency_key IS NOT NULL;
    CREATE INDEX IF NOT EXISTS {0}_status ON {0} (status, category);
  )sql", t);
  if (!state->exec(schema)) return unexpected(sqlite_failure(state->db, "create " + t));
  const bool prepared =
      state->insert.prepare(state->db, fmt::format(
          "INSERT INTO {} (dlq_id, idempotency_key, attempt, category, triage, action, failure_code, message, "
          "raw_sha256, envelope, created_at, updated_at, expires_at) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12) ON CONFLICT DO NOTHING", t)) &&
      state->begin.prepare(state->db, "BEGIN IMMEDIATE") && state->commit.prepare(state->db, "COMMIT") &&
      state->rollback.prepare(state->db, "ROLLBACK") &&
      state->find.prepare(state->db, fmt::format("SELECT envelope FROM {} WHERE dlq_id = ?1", t));
  if (!prepared) return unexpected(sqlite_failure(state->db, "prepare"));
  return sqlite_sink(std::move(state));
}

expected<receipt, sink_error> sqlite_sink::publish(const envelope& e) {
  std::lock_guard lock(impl_->mutex);
  return impl_->insert_row(e);  // autocommit: durable when sqlite3_step returns
}

expected<std::vector<receipt>, sink_error> sqlite_sink::publish_batch(std::span<const envelope> batch) {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->step_done(impl_->begin)) return unexpected(sqlite_failure(impl_->db, "begin"));
  std::vector<receipt> receipts;
  receipts.reserve(batch.size());
  for (const auto& e : batch) {
    auto r = impl_->insert_row(e);
    if (!r) {
      impl_->step_done(impl_->rollback);
      return unexpected(std::move(r.error()));
    }
    receipts.push_back(std::move(*r));
  }
  if (!impl_->step_done(impl_->commit)) {
    auto error = sqlite_failure(impl_->db, "commit");
    impl_->step_done(impl_->rollback);
    return unexpected(std::move(error));
  }
  return receipts;
}

expected<dlq_statistics, sink_error> sqlite_sink::statistics() {
  std::lock_guard lock(impl_->mutex);
  dlq_statistics stats;
  for (const auto& [column, counts] : {std::pair{"category", &stats.by_category}, std::pair{"triage", &stats.by_triage},
                                       std::pair{"status", &stats.by_status}, std::pair{"failure_code", &stats.by_code}}) {
    statement query;
    if (!query.prepare(impl_->db, fmt::format("SELECT {0}, count(*) FROM {1} GROUP BY {0} ORDER BY {0}", column,
                                              impl_->table))) {
      return unexpected(sqlite_failure(impl_->db, "statistics"));
    }
    int rc;
    while ((rc = sqlite3_step(query.get())) == SQLITE_ROW) {
      const auto* key = reinterpret_cast<const char*>(sqlite3_column_text(query.get(), 0));
      (*counts)[key ? key : ""] = static_cast<std::uint64_t>(sqlite3_column_int64(query.get(), 1));
    }
    if (rc != SQLITE_DONE) return unexpected(sqlite_failure(impl_->db, "statistics"));
  }
  for (const auto& [status, count] : stats.by_status) stats.total += count;
  return stats;
}

expected<std::optional<envelope>, sink_error> sqlite_sink::find(std::string_view dlq_id) {
  std::lock_guard lock(impl_->mutex);
  sqlite3_stmt* s = impl_->find.get();
  sqlite3_bind_text(s, 1, dlq_id.data(), static_cast<int>(dlq_id.size()), SQLITE_TRANSIENT);
  const int rc = sqlite3_step(s);
  std::optional<envelope> found;
  if (rc == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    auto parsed = parse_envelope(text ? text : "");
    if (parsed) found = std::move(*parsed);
  }
  sqlite3_reset(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return unexpected(sqlite_failure(impl_->db, "find"));
  return found;
}

}  // namespace llmdlq
