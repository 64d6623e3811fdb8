// SPDX-License-Identifier: MIT
// sqlite_store on the SQLite C API: prepared statements, WAL, one mutex.
#include "llmdlq/config.hpp"
#include "llmdlq/sqlite/store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <mutex>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "llmdlq/detail/store/paging.hpp"
#include "llmdlq/detail/store/record_reader.hpp"
#include "llmdlq/detail/store/request_check.hpp"
#include "llmdlq/detail/store/rewrite.hpp"
#include "llmdlq/detail/store/statistics.hpp"
#include "llmdlq/detail/store/timeline.hpp"
#include "llmdlq/json_parser.hpp"
#include "connection.hpp"
#include "database_mark.hpp"
#include "shared_sql.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

using namespace detail::sqlite;

// Permanent errors (`rejected`) are those a retry of the same envelope cannot cure.
sink_errc classify(int extended_code) {
  switch (extended_code) {
    case SQLITE_READONLY_RECOVERY:  // another connection must recover the WAL first
    case SQLITE_READONLY_CANTLOCK:
    case SQLITE_READONLY_CANTINIT:
      return sink_errc::unavailable;
    default:
      break;
  }
  switch (extended_code & 0xFF) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return sink_errc::timeout;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return sink_errc::rejected;
    case SQLITE_CANTOPEN:
      return sink_errc::unavailable;
    default:
      return sink_errc::io_error;
  }
}

sink_error sqlite_failure(sqlite3* db, std::string_view what) {
  const int code = db ? sqlite3_extended_errcode(db) : SQLITE_CANTOPEN;
  return {classify(code), failure_message(db, what)};
}

// The DLQ's table `name`; its status CHECK allows every moderation_status.
std::string table_definition(std::string_view name) {
  return fmt::format(R"sql(
    CREATE TABLE IF NOT EXISTS {0} (
      dlq_id          TEXT PRIMARY KEY,
      idempotency_key TEXT,
      attempt         INTEGER NOT NULL,
      status          TEXT NOT NULL DEFAULT 'pending'
                      CHECK (status IN ({1})),
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
      operator_log    TEXT NOT NULL DEFAULT '[]',
      claimed_by      TEXT,
      resolution      TEXT
    );
  )sql", name, detail::store::moderation_status_sql_list());
}

std::string index_definitions(const std::string& t) {
  return fmt::format(R"sql(
    CREATE UNIQUE INDEX IF NOT EXISTS {0}_attempt ON {0} (idempotency_key, attempt)
      WHERE idempotency_key IS NOT NULL;
    CREATE INDEX IF NOT EXISTS {0}_status ON {0} (status, category);
    CREATE INDEX IF NOT EXISTS {0}_expires ON {0} (expires_at) WHERE expires_at IS NOT NULL;
    CREATE INDEX IF NOT EXISTS {0}_created ON {0} (created_at, dlq_id);
    CREATE INDEX IF NOT EXISTS {0}_queue ON {0} (status, created_at, dlq_id);
  )sql", t);
}

// The traffic the pipeline recorded, a row per DLQ table and minute
// (RFC 3339 UTC of the minute's start), for the DLQ rate over time.
constexpr std::string_view traffic_definition = R"sql(
    CREATE TABLE IF NOT EXISTS llmdlq_traffic (
      dlq_table     TEXT NOT NULL,
      minute        TEXT NOT NULL,
      processed     INTEGER NOT NULL DEFAULT 0,
      dead_lettered INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (dlq_table, minute)
    );
  )sql";

// The table, its indexes and the journal settings, for a writable DLQ;
// `mark`: with llmdlq's application id, for a file that lacks it.
std::string create_schema(const std::string& t, bool mark) {
  return "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;" + (mark ? mark_statement() : std::string()) +
         table_definition(t) + index_definitions(t) + std::string(traffic_definition);
}

// Every column, for copying a table's rows into its rebuilt form.
constexpr std::string_view all_columns =
    "dlq_id, idempotency_key, attempt, status, category, triage, action, failure_code, message, raw_sha256, "
    "envelope, created_at, updated_at, expires_at, operator_log, claimed_by, resolution";

// Every purge of every DLQ table in the file, one row each.
constexpr std::string_view purge_audit_definition = R"sql(
    CREATE TABLE IF NOT EXISTS llmdlq_purge_audit (
      id                INTEGER PRIMARY KEY,
      purged_table      TEXT NOT NULL,
      operator          TEXT NOT NULL,
      at                TEXT NOT NULL,
      count             INTEGER NOT NULL,
      oldest_expires_at TEXT,
      newest_expires_at TEXT
    );
  )sql";

// Whether `column` holds a time as the store writes it (format_rfc3339:
// UTC, three fraction digits), whose text order is its time order.
std::string stored_time_shape(std::string_view column) {
  return fmt::format("(typeof({0}) = 'text' AND {0} GLOB "
                     "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z')",
                     column);
}

std::string sqlite_placeholder(std::size_t n) { return fmt::format("?{}", n); }
std::string sqlite_version_column(std::string_view field) {
  return fmt::format("json_extract(envelope, '$.versions.{}')", field);
}
std::string sqlite_time_text(std::string_view column) { return std::string(column); }
std::string sqlite_time_bucket(std::string_view column) {
  return fmt::format("((CAST(strftime('%s', {0}) AS INTEGER) * 1000 + CAST(substr({0}, 21, 3) AS INTEGER) - ?1) / ?2)",
                     column);
}

}  // namespace

// Times are RFC 3339 UTC texts with three fraction digits: their text order
// is their time order. raw_response is read from the envelope. Every
// replay operation holds the whole file (BEGIN IMMEDIATE): no row needs a lock.
const detail::store::sql_dialect detail::sqlite::sqlite_dialect{
    {sqlite_placeholder, sqlite_version_column, ""},
    "",
    "",
    sqlite_time_text,
    sqlite_time_bucket,
    "envelope",
    "",
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
    "dlq_id, status, category, triage, failure_code, envelope, created_at, updated_at, operator_log, claimed_by, "
    "resolution",
    false,
    nullptr,
    {"sqlite", "1", "0", "max", "", "rowid"}};

namespace detail::sqlite {
std::string store_tables(std::string_view table) {
  return table_definition(table) + std::string(traffic_definition) + std::string(purge_audit_definition);
}
}  // namespace detail::sqlite

// The store's state, and its connection as the shared algorithms use it
// (the caller holds `mutex`).
struct sqlite_store::impl final : detail::store::sql_session {
  connection owner;
  sqlite3* db = nullptr;  // owner.db
  std::string table;
  std::string path;
  statement insert, stored_id, begin, commit, rollback, find, select_record, update_status;
  std::mutex mutex;

  bool exec(const std::string& sql) { return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK; }

  bool has_column(std::string_view column) {
    statement info;
    if (!info.prepare(db, fmt::format("PRAGMA table_info({})", table))) return false;
    while (sqlite3_step(info.get()) == SQLITE_ROW) {
      const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(info.get(), 1));
      if (name && column == name) return true;
    }
    return false;
  }

  expected<void, moderation_error> execute(const std::string& sql, std::span<const detail::store::sql_value> values,
                                           const row_handler& on_row, std::string_view what) override {
    auto done = execute_sql(db, sql, values, on_row, what);
    if (!done) return unexpected(moderation_error{moderation_errc::store_unavailable, std::move(done.error()), {}});
    return {};
  }

  expected<void, moderation_error> attempt(const work& body) override { return body(); }

  // BEGIN IMMEDIATE: no other writer changes a row between its read and its update.
  expected<void, moderation_error> transaction(const work& body) override {
    if (!step_done(begin)) return unexpected(store_failure("begin"));
    auto r = body();
    if (r && !step_done(commit)) r = unexpected(store_failure("commit"));
    if (!r) step_done(rollback);
    return r;
  }

  detail::store::store_tables tables() const { return {table, "llmdlq_traffic", table}; }

  expected<std::optional<moderation_record>, moderation_error> read(std::string_view dlq_id) {
    sqlite3_stmt* s = select_record.get();
    sqlite3_bind_text(s, 1, dlq_id.data(), static_cast<int>(dlq_id.size()), SQLITE_TRANSIENT);
    const int rc = sqlite3_step(s);
    std::optional<moderation_record> found;
    if (rc == SQLITE_ROW) found = detail::store::read_record(sqlite_row(s), sqlite_dialect);
    sqlite3_reset(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return unexpected(store_failure("read"));
    return found;
  }

  moderation_error store_failure(std::string_view what) {
    return {moderation_errc::store_unavailable, sqlite_failure(db, what).message, std::nullopt};
  }

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
    bind_text_or_null(s, 1, e.dlq_id);
    bind_text_or_null(s, 2, e.idempotency_key);
    sqlite3_bind_int64(s, 3, e.attempts.count);
    bind_text_or_null(s, 4, to_string(e.failure.category));
    bind_text_or_null(s, 5, to_string(e.triage.kind));
    bind_text_or_null(s, 6, to_string(e.triage.action));
    bind_text_or_null(s, 7, e.failure.code);
    sqlite3_bind_text(s, 8, e.failure.message.data(), static_cast<int>(e.failure.message.size()), SQLITE_TRANSIENT);
    bind_text_or_null(s, 9, e.raw_response.sha256);
    bind_text_or_null(s, 10, json);
    bind_text_or_null(s, 11, created);
    bind_text_or_null(s, 12, expires);
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return unexpected(sqlite_failure(db, "insert"));
    if (sqlite3_changes(db) != 0) return receipt{e.dlq_id, false, location()};
    auto stored = stored_dlq_id(e);
    if (!stored) return unexpected(std::move(stored.error()));
    return receipt{std::move(*stored), true, location()};
  }

  // The dlq_id of the row that made `e` a duplicate (same dlq_id, or same
  // idempotency key and attempt). Called inside the insert's transaction.
  expected<std::string, sink_error> stored_dlq_id(const envelope& e) {
    sqlite3_stmt* s = stored_id.get();
    sqlite3_clear_bindings(s);
    bind_text_or_null(s, 1, e.dlq_id);
    bind_text_or_null(s, 2, e.idempotency_key);
    sqlite3_bind_int64(s, 3, e.attempts.count);
    const int rc = sqlite3_step(s);
    std::string id;
    if (rc == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
      id = text ? text : "";
    }
    sqlite3_reset(s);
    if (rc != SQLITE_ROW) return unexpected(sqlite_failure(db, "find the stored duplicate"));
    return id;
  }

  std::string location() const { return fmt::format("sqlite:{}#{}", path, table); }

  // One transaction for all of `batch`: every row is stored, or none.
  expected<std::vector<receipt>, sink_error> insert_all(std::span<const envelope> batch) {
    if (!step_done(begin)) return unexpected(sqlite_failure(db, "begin"));
    std::vector<receipt> receipts;
    receipts.reserve(batch.size());
    for (const auto& e : batch) {
      auto r = insert_row(e);
      if (!r) {
        step_done(rollback);
        return unexpected(std::move(r.error()));
      }
      receipts.push_back(std::move(*r));
    }
    if (!step_done(commit)) {
      auto error = sqlite_failure(db, "commit");
      step_done(rollback);
      return unexpected(std::move(error));
    }
    return receipts;
  }

  // act()'s change to the row, inside its transaction; the request is checked.
  expected<void, moderation_error> apply(const moderation_request& request) {
    auto current = read(request.dlq_id);
    if (!current) return unexpected(std::move(current.error()));
    if (!*current) {
      return unexpected(moderation_error{moderation_errc::not_found, "no dead letter " + request.dlq_id, {}});
    }
    moderation_record& r = **current;
    if (r.defect == record_defect::status) return unexpected(detail::store::unreadable_status(r));
    const auto next = transition(r.status, request.action);
    if (!next) {
      return unexpected(moderation_error{moderation_errc::invalid_transition,
                                         fmt::format("cannot {} a {} dead letter", to_string(request.action),
                                                     to_string(r.status)),
                                         r.status});
    }
    const std::string now = format_rfc3339(system_now());
    boost::json::value log;
    boost::system::error_code ec;
    log = boost::json::parse(r.operator_log, ec);
    if (ec || !log.is_array()) log = boost::json::array();
    log.as_array().push_back(boost::json::object{{"at", now},
                                                 {"operator", request.operator_name},
                                                 {"action", to_string(request.action)},
                                                 {"from", to_string(r.status)},
                                                 {"to", to_string(*next)},
                                                 {"note", request.note}});
    const std::string log_text = boost::json::serialize(log);
    const std::string claimed_by = *next == moderation_status::claimed ? request.operator_name : r.claimed_by;
    const bool corrects = request.action == moderation_action::resolve || request.action == moderation_action::recover;
    sqlite3_stmt* s = update_status.get();
    sqlite3_clear_bindings(s);
    bind_text_or_null(s, 1, r.dlq_id);
    bind_text_or_null(s, 2, to_string(*next));
    bind_text_or_null(s, 3, now);
    bind_text_or_null(s, 4, log_text);
    bind_text_or_null(s, 5, claimed_by);
    if (corrects) {
      bind_text(s, 6, *request.corrected);
    } else if (r.resolution) {
      bind_text(s, 6, *r.resolution);
    }
    bind_text_or_null(s, 7, to_string(r.status));
    if (request.envelope_json) bind_text(s, 8, *request.envelope_json);
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return unexpected(store_failure("update"));
    return {};
  }

  // Whether the table's status CHECK predates some statuses (a table made by
  // an earlier version).
  expected<bool, sink_error> status_check_outdated() {
    statement query;
    if (!query.prepare(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1 AND sql LIKE ?2")) {
      return unexpected(sqlite_failure(db, "read " + path));
    }
    bind_text(query.get(), 1, table);
    bind_text(query.get(), 2, "%CHECK (status IN (%");
    int rc = sqlite3_step(query.get());
    if (rc != SQLITE_ROW) return rc == SQLITE_DONE ? expected<bool, sink_error>(false)
                                                   : unexpected(sqlite_failure(db, "read " + path));
    sqlite3_reset(query.get());
    bind_text(query.get(), 2, fmt::format("%CHECK (status IN ({}))%", detail::store::moderation_status_sql_list()));
    rc = sqlite3_step(query.get());
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return unexpected(sqlite_failure(db, "read " + path));
    return rc == SQLITE_DONE;
  }

  // SQLite cannot alter a CHECK constraint: a table whose status CHECK lacks
  // the newer statuses is rebuilt, rows and indexes, in one transaction.
  expected<void, sink_error> widen_status_check() {
    auto outdated = status_check_outdated();
    if (!outdated || !*outdated) return outdated ? expected<void, sink_error>() : unexpected(outdated.error());
    if (!exec("BEGIN IMMEDIATE")) return unexpected(sqlite_failure(db, "migrate " + table));
    outdated = status_check_outdated();  // another process may have rebuilt it meanwhile
    const std::string rebuilt = table + "_rebuilt";
    const bool done =
        outdated && (!*outdated ||
                     (exec(table_definition(rebuilt)) &&
                      exec(fmt::format("INSERT INTO {0} ({2}) SELECT {2} FROM {1}; DROP TABLE {1}; "
                                       "ALTER TABLE {0} RENAME TO {1};",
                                       rebuilt, table, all_columns)) &&
                      exec(index_definitions(table)))) &&
        exec("COMMIT");
    if (!done) {
      auto error = sqlite_failure(db, "migrate " + table);
      exec("ROLLBACK");
      return unexpected(std::move(error));
    }
    return {};
  }

  // Whether the DLQ's table is there; an error when the file cannot be read as a database.
  expected<bool, sink_error> has_table() {
    statement query;
    if (!query.prepare(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")) {
      return unexpected(sqlite_failure(db, "read " + path));
    }
    bind_text(query.get(), 1, table);
    const int rc = sqlite3_step(query.get());
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return unexpected(sqlite_failure(db, "read " + path));
    return rc == SQLITE_ROW;
  }
};

sqlite_store::sqlite_store(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
sqlite_store::sqlite_store(sqlite_store&&) noexcept = default;
sqlite_store& sqlite_store::operator=(sqlite_store&&) noexcept = default;
sqlite_store::~sqlite_store() = default;

expected<sqlite_store, sink_error> sqlite_store::open(const std::filesystem::path& path, sqlite_store_options options) {
  if (!valid_table_name(options.table)) {
    return unexpected(sink_error{sink_errc::rejected, "sqlite: invalid table name '" + options.table + "'"});
  }
  auto state = std::make_unique<impl>();
  state->table = options.table;
  state->path = path.string();
  // A read-only view is refused in a directory others may write too: SQLite would read a WAL planted there.
  if (auto why = options.read_only ? shared_directory_refusal(state->path) : prepare_private_database(state->path)) {
    return unexpected(sink_error{sink_errc::unsafe_file, "sqlite: " + *why});
  }
  const int mode = options.read_only ? SQLITE_OPEN_READONLY
                                     : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW;
  const int opened = sqlite3_open_v2(state->path.c_str(), &state->owner.db, mode | SQLITE_OPEN_NOMUTEX, nullptr);
  state->db = state->owner.db;
  if (opened != SQLITE_OK) return unexpected(sqlite_failure(state->db, "open " + state->path));
  sqlite3_busy_timeout(state->db, options.busy_timeout_ms);
  // Another application's database is neither read as a DLQ nor written to.
  const auto contents = read_contents(state->db);
  if (!contents) return unexpected(sqlite_failure(state->db, "read " + state->path));
  if (!contents->foreign.empty()) {
    return unexpected(sink_error{sink_errc::rejected,
                                 "sqlite: " + foreign_database_refusal(state->path, "a DLQ", contents->foreign)});
  }
  const std::string& t = state->table;
  if (options.read_only) {
    const auto found = state->has_table();
    if (!found) return unexpected(found.error());
    if (!*found) {
      return unexpected(sink_error{sink_errc::rejected,
                                   fmt::format("sqlite: {} is not a DLQ: it has no table {}", state->path, t)});
    }
  } else {
    if (!state->exec(create_schema(t, !contents->marked))) return unexpected(sqlite_failure(state->db, "create " + t));
    // Tables created before operator actions existed get their columns.
    for (const char* column : {"claimed_by", "resolution"}) {
      if (!state->has_column(column) &&
          !state->exec(fmt::format("ALTER TABLE {} ADD COLUMN {} TEXT", t, column))) {
        return unexpected(sqlite_failure(state->db, "migrate " + t));
      }
    }
    if (auto widened = state->widen_status_check(); !widened) return unexpected(widened.error());
  }
  const bool prepared =
      state->insert.prepare(state->db, fmt::format(
          "INSERT INTO {} (dlq_id, idempotency_key, attempt, category, triage, action, failure_code, message, "
          "raw_sha256, envelope, created_at, updated_at, expires_at) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12) ON CONFLICT DO NOTHING", t)) &&
      state->stored_id.prepare(state->db, fmt::format(
          "SELECT dlq_id FROM {0} WHERE dlq_id = ?1 UNION ALL "
          "SELECT dlq_id FROM {0} WHERE idempotency_key = ?2 AND attempt = ?3 LIMIT 1", t)) &&
      state->begin.prepare(state->db, "BEGIN IMMEDIATE") && state->commit.prepare(state->db, "COMMIT") &&
      state->rollback.prepare(state->db, "ROLLBACK") &&
      state->find.prepare(state->db, fmt::format("SELECT envelope FROM {} WHERE dlq_id = ?1", t)) &&
      state->select_record.prepare(state->db,
                                   fmt::format("SELECT {} FROM {} WHERE dlq_id = ?1", sqlite_dialect.record_columns, t)) &&
      state->update_status.prepare(state->db, fmt::format(
          "UPDATE {} SET status = ?2, updated_at = ?3, operator_log = ?4, claimed_by = ?5, resolution = ?6, "
          "envelope = COALESCE(?8, envelope) WHERE dlq_id = ?1 AND status = ?7", t));
  if (!prepared) return unexpected(sqlite_failure(state->db, "prepare"));
  return sqlite_store(std::move(state));
}

expected<receipt, sink_error> sqlite_store::publish(const envelope& e) {
  std::lock_guard lock(impl_->mutex);
  // A transaction even for one row: a duplicate's lookup sees what the insert saw.
  auto receipts = impl_->insert_all(std::span(&e, 1));
  if (!receipts) return unexpected(std::move(receipts.error()));
  return std::move(receipts->front());
}

expected<std::vector<receipt>, sink_error> sqlite_store::publish_batch(std::span<const envelope> batch) {
  std::lock_guard lock(impl_->mutex);
  return impl_->insert_all(batch);
}

expected<purge_report, sink_error> sqlite_store::purge(const purge_request& request) {
  if (request.operator_name.empty()) {
    return unexpected(sink_error{sink_errc::rejected, "sqlite: a purge needs an operator name for its audit"});
  }
  std::lock_guard lock(impl_->mutex);
  sqlite3* db = impl_->db;
  const std::string& t = impl_->table;
  // expires_at is RFC 3339 UTC with three fraction digits: its text order is its time order.
  const std::string now = format_rfc3339(request.now);
  auto report = purge_report::for_request(request);
  const auto fail = [&](std::string_view what) {
    auto error = sqlite_failure(db, what);
    impl_->exec("ROLLBACK");
    return unexpected(std::move(error));
  };
  if (!impl_->exec(request.dry_run ? "BEGIN" : "BEGIN IMMEDIATE")) return unexpected(sqlite_failure(db, "purge: begin"));
  // Only an expiry as the store writes it compares as a time: one that is
  // not (a number, other text) is kept, counted and named, never taken as expired.
  statement unreadable;
  if (!unreadable.prepare(db, fmt::format("SELECT dlq_id, expires_at FROM {} WHERE expires_at IS NOT NULL AND NOT {} "
                                          "ORDER BY dlq_id", t, stored_time_shape("expires_at")))) {
    return fail("purge: read");
  }
  int rc;
  while ((rc = sqlite3_step(unreadable.get())) == SQLITE_ROW) {
    report.add_unreadable(column_text(unreadable.get(), 0),
                          "expires_at is not an RFC 3339 time: " +
                              detail::store::quoted_value(column_text(unreadable.get(), 1)));
  }
  if (rc != SQLITE_DONE) return fail("purge: read");
  statement range;
  if (!range.prepare(db, fmt::format("SELECT count(*), min(expires_at), max(expires_at) FROM {} "
                                     "WHERE expires_at IS NOT NULL AND {} AND expires_at <= ?1", t,
                                     stored_time_shape("expires_at")))) {
    return fail("purge: count");
  }
  bind_text(range.get(), 1, now);
  if (sqlite3_step(range.get()) != SQLITE_ROW) return fail("purge: count");
  report.count = static_cast<std::uint64_t>(sqlite3_column_int64(range.get(), 0));
  if (report.count > 0) {
    report.oldest_expires_at = parse_rfc3339(column_text(range.get(), 1));
    report.newest_expires_at = parse_rfc3339(column_text(range.get(), 2));
  }
  sqlite3_reset(range.get());
  if (request.dry_run) {
    impl_->exec("COMMIT");  // a read transaction: nothing to make durable
    return report;
  }
  statement remove, audit;
  if (!remove.prepare(db, fmt::format("DELETE FROM {} WHERE expires_at IS NOT NULL AND {} AND expires_at <= ?1", t,
                                      stored_time_shape("expires_at")))) {
    return fail("purge: delete");
  }
  bind_text(remove.get(), 1, now);
  if (sqlite3_step(remove.get()) != SQLITE_DONE) return fail("purge: delete");
  if (!impl_->exec(std::string(purge_audit_definition)) ||
      !audit.prepare(db, "INSERT INTO llmdlq_purge_audit (purged_table, operator, at, count, oldest_expires_at, "
                         "newest_expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")) {
    return fail("purge: audit");
  }
  bind_text(audit.get(), 1, t);
  bind_text(audit.get(), 2, request.operator_name);
  bind_text(audit.get(), 3, now);
  sqlite3_bind_int64(audit.get(), 4, static_cast<sqlite3_int64>(report.count));
  bind_text_or_null(audit.get(), 5, report.oldest_expires_at ? format_rfc3339(*report.oldest_expires_at) : "");
  bind_text_or_null(audit.get(), 6, report.newest_expires_at ? format_rfc3339(*report.newest_expires_at) : "");
  if (sqlite3_step(audit.get()) != SQLITE_DONE) return fail("purge: audit");
  if (!impl_->exec("COMMIT")) return fail("purge: commit");
  return report;
}

expected<dlq_statistics, moderation_error> sqlite_store::statistics() {
  std::lock_guard lock(impl_->mutex);
  return detail::store::statistics(*impl_, sqlite_dialect, impl_->table);
}

expected<std::optional<envelope>, moderation_error> sqlite_store::find(std::string_view dlq_id) {
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
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return unexpected(impl_->store_failure("find"));
  return found;
}

expected<std::size_t, moderation_error> sqlite_store::rewrite_envelopes(const envelope_rewrite& change,
                                                                        std::size_t batch) {
  std::lock_guard lock(impl_->mutex);
  return detail::store::rewrite_envelopes(*impl_, sqlite_dialect, impl_->table, change, batch);
}


expected<std::optional<moderation_record>, moderation_error> sqlite_store::get(std::string_view dlq_id) {
  std::lock_guard lock(impl_->mutex);
  return detail::store::get_record(*impl_, sqlite_dialect, impl_->table, dlq_id);
}

expected<std::vector<moderation_record>, moderation_error> sqlite_store::list(moderation_status status,
                                                                             std::size_t limit) {
  return list_after(status, {}, {}, limit);
}

expected<std::vector<moderation_record>, moderation_error> sqlite_store::list_after(moderation_status status,
                                                                                   std::string_view after_created_at,
                                                                                   std::string_view after_dlq_id,
                                                                                   std::size_t limit) {
  std::lock_guard lock(impl_->mutex);
  return detail::store::list_after(*impl_, sqlite_dialect, impl_->table, status, after_created_at, after_dlq_id,
                                   limit);
}

expected<moderation_record, moderation_error> sqlite_store::act(const moderation_request& request) {
  if (auto refused = detail::store::check_moderation_request(request)) return unexpected(std::move(*refused));
  std::lock_guard lock(impl_->mutex);
  // One transaction from the read to the update: two actions that keep the
  // status (record_attempt) cannot lose each other's log entry.
  auto r = impl_->transaction([&] { return impl_->apply(request); });
  if (!r) return unexpected(std::move(r.error()));
  auto updated = impl_->read(request.dlq_id);
  if (!updated) return unexpected(std::move(updated.error()));
  if (!*updated) return unexpected(moderation_error{moderation_errc::not_found, "the dead letter vanished", {}});
  return std::move(**updated);
}

expected<moderation_page, moderation_error> sqlite_store::query(const moderation_query& q) {
  std::lock_guard lock(impl_->mutex);
  return detail::store::query_page(*impl_, sqlite_dialect, impl_->table, q);
}

expected<std::vector<dlq_timeline_bucket>, moderation_error> sqlite_store::timeline(timestamp since, timestamp until,
                                                                                  std::chrono::seconds width) {
  std::lock_guard lock(impl_->mutex);
  return detail::store::timeline(*impl_, sqlite_dialect, impl_->tables(), since, until, width);
}

expected<void, moderation_error> sqlite_store::record_traffic(timestamp at, std::uint64_t processed,
                                                              std::uint64_t dead_lettered) {
  std::lock_guard lock(impl_->mutex);
  return detail::store::record_traffic(*impl_, sqlite_dialect, impl_->tables(), at, processed, dead_lettered);
}

LLMDLQ_END_NAMESPACE
