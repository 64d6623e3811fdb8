// SPDX-License-Identifier: MIT
// sqlite_store on the SQLite C API: prepared statements, WAL, one mutex.
#include "llmdlq/config.hpp"
#include "llmdlq/sqlite/store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <mutex>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "llmdlq/detail/moderation_check.hpp"
#include "llmdlq/detail/moderation_query_sql.hpp"
#include "llmdlq/json_parser.hpp"
#include "connection.hpp"

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
  return {classify(code), fmt::format("sqlite: {}: {}", what, db ? sqlite3_errmsg(db) : "cannot open")};
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
  )sql", name, detail::moderation_status_sql_list());
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

// The table, its indexes and the journal settings, for a writable DLQ.
std::string create_schema(const std::string& t) {
  return "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;" + table_definition(t) + index_definitions(t) +
         std::string(traffic_definition);
}

std::string sqlite_placeholder(std::size_t n) { return fmt::format("?{}", n); }
std::string sqlite_version_column(std::string_view field) {
  return fmt::format("json_extract(envelope, '$.versions.{}')", field);
}
constexpr detail::moderation_sql_dialect sqlite_dialect{sqlite_placeholder, sqlite_version_column, ""};

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

constexpr std::string_view record_columns =
    "dlq_id, status, category, triage, failure_code, envelope, created_at, updated_at, operator_log, claimed_by, "
    "resolution";

}  // namespace

struct sqlite_store::impl {
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

  // The row selected by select_record, as a moderation record.
  static moderation_record read_record(sqlite3_stmt* s) {
    auto text = [&](int column) {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
      return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s, column))) : std::string();
    };
    moderation_record r;
    r.dlq_id = text(0);
    r.status = parse_moderation_status(text(1)).value_or(moderation_status::pending);
    r.category = text(2);
    r.triage = text(3);
    r.failure_code = text(4);
    r.envelope_json = text(5);
    r.created_at = text(6);
    r.updated_at = text(7);
    r.operator_log = text(8);
    r.claimed_by = text(9);
    if (sqlite3_column_type(s, 10) != SQLITE_NULL) r.resolution = text(10);
    if (auto e = parse_envelope(r.envelope_json); e && e->raw_response.text) r.raw_response = *e->raw_response.text;
    return r;
  }

  expected<std::optional<moderation_record>, moderation_error> read(std::string_view dlq_id) {
    sqlite3_stmt* s = select_record.get();
    sqlite3_bind_text(s, 1, dlq_id.data(), static_cast<int>(dlq_id.size()), SQLITE_TRANSIENT);
    const int rc = sqlite3_step(s);
    std::optional<moderation_record> found;
    if (rc == SQLITE_ROW) found = read_record(s);
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
    bind_text(query.get(), 2, fmt::format("%CHECK (status IN ({}))%", detail::moderation_status_sql_list()));
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

  // Whether the DLQ's table (or `name`) is there; an error when the file cannot be read as a database.
  expected<bool, sink_error> has_table(std::string_view name = {}) {
    statement query;
    if (!query.prepare(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")) {
      return unexpected(sqlite_failure(db, "read " + path));
    }
    bind_text_or_null(query.get(), 1, name.empty() ? std::string_view(table) : name);
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
  if (!options.read_only) {
    if (auto why = prepare_private_database(state->path)) {
      return unexpected(sink_error{sink_errc::unsafe_file, "sqlite: " + *why});
    }
  }
  const int mode = options.read_only ? SQLITE_OPEN_READONLY
                                     : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW;
  const int opened = sqlite3_open_v2(state->path.c_str(), &state->owner.db, mode | SQLITE_OPEN_NOMUTEX, nullptr);
  state->db = state->owner.db;
  if (opened != SQLITE_OK) return unexpected(sqlite_failure(state->db, "open " + state->path));
  sqlite3_busy_timeout(state->db, options.busy_timeout_ms);
  const std::string& t = state->table;
  if (options.read_only) {
    const auto found = state->has_table();
    if (!found) return unexpected(found.error());
    if (!*found) {
      return unexpected(sink_error{sink_errc::rejected,
                                   fmt::format("sqlite: {} is not a DLQ: it has no table {}", state->path, t)});
    }
  } else {
    if (!state->exec(create_schema(t))) return unexpected(sqlite_failure(state->db, "create " + t));
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
      state->select_record.prepare(state->db, fmt::format("SELECT {} FROM {} WHERE dlq_id = ?1", record_columns, t)) &&
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
  statement range;
  if (!range.prepare(db, fmt::format("SELECT count(*), min(expires_at), max(expires_at) FROM {} "
                                     "WHERE expires_at IS NOT NULL AND expires_at <= ?1", t))) {
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
  if (!remove.prepare(db, fmt::format("DELETE FROM {} WHERE expires_at IS NOT NULL AND expires_at <= ?1", t))) {
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
  dlq_statistics stats;
  for (const auto& [column, counts] : {std::pair{"category", &stats.by_category}, std::pair{"triage", &stats.by_triage},
                                       std::pair{"status", &stats.by_status}, std::pair{"failure_code", &stats.by_code}}) {
    statement query;
    if (!query.prepare(impl_->db, fmt::format("SELECT {0}, count(*) FROM {1} GROUP BY {0} ORDER BY {0}", column,
                                              impl_->table))) {
      return unexpected(impl_->store_failure("statistics"));
    }
    int rc;
    while ((rc = sqlite3_step(query.get())) == SQLITE_ROW) {
      const auto* key = reinterpret_cast<const char*>(sqlite3_column_text(query.get(), 0));
      (*counts)[key ? key : ""] = static_cast<std::uint64_t>(sqlite3_column_int64(query.get(), 1));
    }
    if (rc != SQLITE_DONE) return unexpected(impl_->store_failure("statistics"));
  }
  for (const auto& [status, count] : stats.by_status) stats.total += count;
  statement oldest;
  if (!oldest.prepare(impl_->db, fmt::format("SELECT min(created_at) FROM {} WHERE status = 'pending'", impl_->table))) {
    return unexpected(impl_->store_failure("statistics"));
  }
  if (sqlite3_step(oldest.get()) != SQLITE_ROW) return unexpected(impl_->store_failure("statistics"));
  if (sqlite3_column_type(oldest.get(), 0) != SQLITE_NULL) {
    stats.oldest_pending_created_at = parse_rfc3339(column_text(oldest.get(), 0));
  }
  return stats;
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

// Keyset pages of rows, each read and rewritten inside one write transaction
// (BEGIN IMMEDIATE), so that no other writer changes a row between its read
// and its update.
expected<std::size_t, moderation_error> sqlite_store::rewrite_envelopes(const envelope_rewrite& change,
                                                                        std::size_t batch) {
  std::lock_guard lock(impl_->mutex);
  sqlite3* db = impl_->db;
  statement page;
  statement update;
  if (!page.prepare(db, fmt::format("SELECT dlq_id, envelope FROM {} WHERE dlq_id > ?1 ORDER BY dlq_id LIMIT ?2",
                                    impl_->table)) ||
      !update.prepare(db, fmt::format("UPDATE {} SET envelope = ?2 WHERE dlq_id = ?1", impl_->table))) {
    return unexpected(impl_->store_failure("prepare the rewrite"));
  }
  std::size_t changed = 0;
  std::string after;
  for (bool more = true; more;) {
    if (!impl_->step_done(impl_->begin)) return unexpected(impl_->store_failure("begin"));
    const auto fail = [&](std::string_view what) {
      auto error = impl_->store_failure(what);
      impl_->step_done(impl_->rollback);
      return unexpected(std::move(error));
    };
    bind_text(page.get(), 1, after);
    sqlite3_bind_int64(page.get(), 2, static_cast<sqlite3_int64>(std::max<std::size_t>(batch, 1)));
    std::size_t rows = 0;
    std::size_t changed_here = 0;
    int rc;
    while ((rc = sqlite3_step(page.get())) == SQLITE_ROW) {
      ++rows;
      after = column_text(page.get(), 0);
      const std::string json = column_text(page.get(), 1);
      if (auto replaced = change(after, json); replaced && *replaced != json) {
        bind_text(update.get(), 1, after);
        bind_text(update.get(), 2, *replaced);
        const int updated = sqlite3_step(update.get());
        sqlite3_reset(update.get());
        if (updated != SQLITE_DONE) {
          sqlite3_reset(page.get());
          return fail("rewrite " + after);
        }
        ++changed_here;
      }
    }
    sqlite3_reset(page.get());
    if (rc != SQLITE_DONE) return fail("read");
    if (!impl_->step_done(impl_->commit)) return fail("commit");
    changed += changed_here;
    more = rows == std::max<std::size_t>(batch, 1);
  }
  return changed;
}

LLMDLQ_END_NAMESPACE

LLMDLQ_BEGIN_NAMESPACE

expected<std::optional<moderation_record>, moderation_error> sqlite_store::get(std::string_view dlq_id) {
  std::lock_guard lock(impl_->mutex);
  return impl_->read(dlq_id);
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
  statement query;
  // created_at is RFC 3339 UTC with three fraction digits: its text order is its time order.
  if (!query.prepare(impl_->db, fmt::format("SELECT {} FROM {} WHERE status = ?1 AND (created_at > ?3 OR "
                                            "(created_at = ?3 AND dlq_id > ?4)) ORDER BY created_at, dlq_id LIMIT ?2",
                                            record_columns, impl_->table))) {
    return unexpected(impl_->store_failure("list"));
  }
  bind_text_or_null(query.get(), 1, to_string(status));
  sqlite3_bind_int64(query.get(), 2, static_cast<sqlite3_int64>(std::min<std::size_t>(limit, INT64_MAX)));
  // An empty position is "" (before every row), never NULL (which compares with nothing).
  const auto bind_position = [&](int index, std::string_view text) {
    sqlite3_bind_text(query.get(), index, text.empty() ? "" : text.data(), static_cast<int>(text.size()),
                      SQLITE_TRANSIENT);
  };
  bind_position(3, after_created_at);
  bind_position(4, after_dlq_id);
  std::vector<moderation_record> records;
  int rc;
  while ((rc = sqlite3_step(query.get())) == SQLITE_ROW) records.push_back(impl::read_record(query.get()));
  if (rc != SQLITE_DONE) return unexpected(impl_->store_failure("list"));
  return records;
}

expected<moderation_record, moderation_error> sqlite_store::act(const moderation_request& request) {
  if (auto refused = detail::check_moderation_request(request)) return unexpected(std::move(*refused));
  std::lock_guard lock(impl_->mutex);
  // One transaction from the read to the update: two actions that keep the
  // status (record_attempt) cannot lose each other's log entry.
  if (!impl_->step_done(impl_->begin)) return unexpected(impl_->store_failure("begin"));
  auto r = impl_->apply(request);
  if (r && !impl_->step_done(impl_->commit)) r = unexpected(impl_->store_failure("commit"));
  if (!r) {
    impl_->step_done(impl_->rollback);
    return unexpected(std::move(r.error()));
  }
  auto updated = impl_->read(request.dlq_id);
  if (!updated) return unexpected(std::move(updated.error()));
  if (!*updated) return unexpected(moderation_error{moderation_errc::not_found, "the dead letter vanished", {}});
  return std::move(**updated);
}

expected<moderation_page, moderation_error> sqlite_store::query(const moderation_query& q) {
  if (q.limit == 0) return moderation_page{};
  const auto filter = detail::moderation_query_filter(q, sqlite_dialect);
  std::lock_guard lock(impl_->mutex);
  statement select;
  // created_at is RFC 3339 UTC with three fraction digits: its text order is its time order.
  if (!select.prepare(impl_->db, fmt::format("SELECT {} FROM {} WHERE {} ORDER BY created_at, dlq_id LIMIT ?{}",
                                             record_columns, impl_->table, filter.where, filter.values.size() + 1))) {
    return unexpected(impl_->store_failure("query"));
  }
  for (std::size_t i = 0; i < filter.values.size(); ++i) {
    bind_text(select.get(), static_cast<int>(i + 1), filter.values[i]);
  }
  const std::size_t wanted = std::min<std::size_t>(q.limit, INT64_MAX - 1) + 1;
  sqlite3_bind_int64(select.get(), static_cast<int>(filter.values.size() + 1), static_cast<sqlite3_int64>(wanted));
  std::vector<moderation_record> records;
  int rc;
  while ((rc = sqlite3_step(select.get())) == SQLITE_ROW) records.push_back(impl::read_record(select.get()));
  if (rc != SQLITE_DONE) return unexpected(impl_->store_failure("query"));
  return detail::make_moderation_page(std::move(records), q.limit);
}

expected<std::vector<dlq_timeline_bucket>, moderation_error> sqlite_store::timeline(timestamp since, timestamp until,
                                                                                  std::chrono::seconds width) {
  auto buckets = detail::empty_timeline(since, until, width);
  if (buckets.empty()) return buckets;
  const auto width_ms = std::chrono::milliseconds(width).count();
  const auto since_ms = since.time_since_epoch().count();
  const std::string from = format_rfc3339(since);
  const std::string to = format_rfc3339(until);
  std::lock_guard lock(impl_->mutex);
  // The bucket of an RFC 3339 text: its milliseconds since `since` (?1) over the width (?2).
  const auto bucket_of = [](std::string_view column) {
    return fmt::format("((CAST(strftime('%s', {0}) AS INTEGER) * 1000 + CAST(substr({0}, 21, 3) AS INTEGER) - ?1) / ?2)",
                       column);
  };
  const auto read = [&](const std::string& sql, auto&& add) -> expected<void, moderation_error> {
    statement s;
    if (!s.prepare(impl_->db, sql)) return unexpected(impl_->store_failure("timeline"));
    sqlite3_bind_int64(s.get(), 1, since_ms);
    sqlite3_bind_int64(s.get(), 2, width_ms);
    bind_text(s.get(), 3, from);
    bind_text(s.get(), 4, to);
    if (sqlite3_bind_parameter_count(s.get()) >= 5) bind_text(s.get(), 5, impl_->table);
    int rc;
    while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
      const auto index = sqlite3_column_int64(s.get(), 0);
      if (index >= 0 && static_cast<std::size_t>(index) < buckets.size()) add(buckets[static_cast<std::size_t>(index)], s.get());
    }
    if (rc != SQLITE_DONE) return unexpected(impl_->store_failure("timeline"));
    return {};
  };
  auto letters = read(fmt::format("SELECT {0} AS bucket, category, count(*) FROM {1} WHERE created_at >= ?3 AND "
                                  "created_at < ?4 GROUP BY bucket, category",
                                  bucket_of("created_at"), impl_->table),
                      [](dlq_timeline_bucket& b, sqlite3_stmt* row) {
                        b.dead_letters_by_category[column_text(row, 1)] +=
                            static_cast<std::uint64_t>(sqlite3_column_int64(row, 2));
                      });
  if (!letters) return unexpected(std::move(letters.error()));
  const auto traffic = impl_->has_table("llmdlq_traffic");
  if (!traffic) return unexpected(impl_->store_failure("timeline"));
  if (*traffic) {
    auto counted = read(fmt::format("SELECT {0} AS bucket, sum(processed), sum(dead_lettered) FROM llmdlq_traffic "
                                    "WHERE dlq_table = ?5 AND minute >= ?3 AND minute < ?4 GROUP BY bucket",
                                    bucket_of("minute")),
                        [](dlq_timeline_bucket& b, sqlite3_stmt* row) {
                          b.processed += static_cast<std::uint64_t>(sqlite3_column_int64(row, 1));
                          b.dead_lettered += static_cast<std::uint64_t>(sqlite3_column_int64(row, 2));
                        });
    if (!counted) return unexpected(std::move(counted.error()));
  }
  return buckets;
}

expected<void, moderation_error> sqlite_store::record_traffic(timestamp at, std::uint64_t processed,
                                                              std::uint64_t dead_lettered) {
  const std::string minute = format_rfc3339(std::chrono::floor<std::chrono::minutes>(at));
  std::lock_guard lock(impl_->mutex);
  statement upsert;
  if (!upsert.prepare(impl_->db, "INSERT INTO llmdlq_traffic (dlq_table, minute, processed, dead_lettered) "
                                 "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (dlq_table, minute) DO UPDATE SET "
                                 "processed = processed + excluded.processed, "
                                 "dead_lettered = dead_lettered + excluded.dead_lettered")) {
    return unexpected(impl_->store_failure("record traffic"));
  }
  bind_text(upsert.get(), 1, impl_->table);
  bind_text(upsert.get(), 2, minute);
  sqlite3_bind_int64(upsert.get(), 3, static_cast<sqlite3_int64>(std::min<std::uint64_t>(processed, INT64_MAX)));
  sqlite3_bind_int64(upsert.get(), 4, static_cast<sqlite3_int64>(std::min<std::uint64_t>(dead_lettered, INT64_MAX)));
  if (sqlite3_step(upsert.get()) != SQLITE_DONE) return unexpected(impl_->store_failure("record traffic"));
  return {};
}

LLMDLQ_END_NAMESPACE
