// SPDX-License-Identifier: MIT
// postgres_store on libpq: one connection, prepared statements, one mutex.
#include "llmdlq/config.hpp"
#include "llmdlq/postgres/store.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>

#include <boost/json/value.hpp>
#include <fmt/format.h>
#include <simdjson.h>

#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/detail/store/paging.hpp"
#include "llmdlq/detail/store/record_reader.hpp"
#include "llmdlq/detail/store/request_check.hpp"
#include "llmdlq/detail/store/rewrite.hpp"
#include "llmdlq/detail/store/statistics.hpp"
#include "llmdlq/detail/store/timeline.hpp"
#include "llmdlq/json_parser.hpp"
#include "libpq.hpp"
#include "shared_sql.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

using namespace detail::postgres;

// The longest table name: its index names (`<table>_key_attempt`) must fit
// in PostgreSQL's 63 bytes, or they would be truncated and could collide.
constexpr std::size_t max_table_name = 48;
constexpr std::size_t max_schema_name = 63;

// ---------------------------------------------------------------------------
// Text that PostgreSQL can hold: valid UTF-8 without U+0000.

constexpr std::string_view replacement_character = "\xEF\xBF\xBD";  // U+FFFD

bool storable_text(std::string_view text) noexcept {
  return text.find('\0') == std::string_view::npos && simdjson::validate_utf8(text.data(), text.size());
}

// Length of the valid UTF-8 sequence at text[i], or 0 when there is none.
std::size_t utf8_sequence(std::string_view text, std::size_t i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;  // range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) low = 0x90;   // no overlong forms
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

// `text` with U+0000 and each byte that starts no valid UTF-8 sequence replaced by U+FFFD.
std::string storable_copy(std::string_view text) {
  if (storable_text(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = text[i] == '\0' ? 0 : utf8_sequence(text, i);
    if (n == 0) {
      out.append(replacement_character);
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

void make_storable(boost::json::value& v) {
  if (auto* s = v.if_string()) {
    if (!storable_text(*s)) *s = storable_copy(*s);
  } else if (auto* a = v.if_array()) {
    for (auto& item : *a) make_storable(item);
  } else if (auto* o = v.if_object()) {
    const bool keys_ok = std::all_of(o->begin(), o->end(), [](const auto& kv) { return storable_text(kv.key()); });
    if (!keys_ok) {
      boost::json::object fixed;
      for (auto& kv : *o) fixed[storable_copy(kv.key())] = std::move(kv.value());
      *o = std::move(fixed);
    }
    for (auto& kv : *o) make_storable(kv.value());
  }
}

// `e` as PostgreSQL can store it (see the class comment): stored texts that
// are not storable go to base64, other strings get U+FFFD. Nothing when the
// envelope does not survive its own round trip (it always should).
std::optional<envelope> storable_envelope(const envelope& e) {
  envelope copy = e;
  const auto encode = [](captured_text& c) {
    if (c.text && !c.base64 && !storable_text(*c.text)) {
      c.text = detail::base64(*c.text);
      c.base64 = true;
    }
  };
  encode(copy.raw_response);
  if (copy.original_input) encode(*copy.original_input);
  boost::json::value json = to_json(copy);
  make_storable(json);
  auto back = envelope_from_json(json);
  if (!back) return std::nullopt;
  return std::move(*back);
}

// Whether an envelope's JSON goes into jsonb as it is.
bool storable_as_is(std::string_view json) {
  return storable_text(json) && json.find("\\u0000") == std::string_view::npos;
}

// `e`'s JSON as PostgreSQL can store it; nothing when it cannot be.
std::optional<std::string> storable_json(const envelope& e) {
  std::string json = serialize(e);
  if (storable_as_is(json)) return json;
  auto fixed = storable_envelope(e);
  if (!fixed) return std::nullopt;
  return serialize(*fixed);
}

// ---------------------------------------------------------------------------
// Failures in the store's error domains.

sink_error to_sink_error(failure f) {
  sink_errc code = sink_errc::io_error;
  switch (f.kind) {
    case failure_kind::unavailable: code = sink_errc::unavailable; break;
    case failure_kind::timeout: code = sink_errc::timeout; break;
    case failure_kind::rejected: code = sink_errc::rejected; break;
    case failure_kind::io_error: code = sink_errc::io_error; break;
  }
  return {code, std::move(f.message)};
}

moderation_error to_moderation_error(failure f) {
  return {moderation_errc::store_unavailable, std::move(f.message), std::nullopt};
}

// ---------------------------------------------------------------------------
// Statements.

// An RFC 3339 column, NULL-safe, as format_rfc3339 writes it.
std::string utc_text(std::string_view column) {
  return fmt::format("to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')", column);
}

std::string postgres_placeholder(std::size_t n) { return fmt::format("${}", n); }
std::string postgres_version_column(std::string_view field) {
  return fmt::format("(envelope -> 'versions' ->> '{}')", field);
}
std::string postgres_time_bucket(std::string_view column) {
  return fmt::format("floor((extract(epoch FROM {}) * 1000 - $1::bigint) / $2::bigint)::bigint", column);
}

}  // namespace

// Texts compared with stored ones go through storable_copy: PostgreSQL
// refuses what it cannot hold.
const detail::store::sql_dialect detail::postgres::postgres_dialect{
    {postgres_placeholder, postgres_version_column, "::timestamptz"},
    "::bigint",
    "::jsonb",
    utc_text,
    postgres_time_bucket,
    "envelope::text",
    " FOR UPDATE",
    "SELECT (to_regclass($1) IS NOT NULL)::int",
    "dlq_id, status, category, triage, failure_code, raw_response, envelope::text, "
    "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "
    "to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "
    "operator_log::text, claimed_by, resolution::text",
    true,
    storable_copy,
    {"postgres", "true", "false", "GREATEST", " FOR SHARE", "idempotency_key"}};

namespace {

moderation_record read_record(const PGresult* r, int row) {
  return detail::store::read_record(postgres_row(r, row), postgres_dialect);
}

// The error a unit of work reports when its connection cannot be made ready.
template <class Error>
Error as_error(failure f) {
  if constexpr (std::is_same_v<Error, failure>) {
    return f;
  } else {
    return to_moderation_error(std::move(f));
  }
}

// The prepared statements' names.
constexpr const char* insert_statement = "llmdlq_insert";
constexpr const char* get_statement = "llmdlq_get";
constexpr const char* act_statement = "llmdlq_act";
constexpr const char* state_statement = "llmdlq_state";

// The DLQ table as the purge audit and the traffic table name it: `schema.table` or `table`.
std::string options_table_name(const postgres_store_options& o) {
  return o.schema.empty() ? o.table : o.schema + "." + o.table;
}

// A PostgreSQL array literal of status names (which need no quoting).
std::string status_array(const std::vector<moderation_status>& statuses) {
  std::string out = "{";
  for (const auto s : statuses) {
    if (out.size() > 1) out.push_back(',');
    out.append(to_string(s));
  }
  out.push_back('}');
  return out;
}

}  // namespace

// The store's state, and its connection as the shared algorithms use it
// (the caller holds `mutex`).
struct postgres_store::impl final : detail::store::sql_session {
  std::string conninfo;
  postgres_store_options options;
  std::string qualified;  // "schema"."table" or "table"
  std::string location;   // for receipts
  connection conn;
  bool session_ready = false;  // this connection's settings are made
  bool prepared = false;       // and its statements prepared
  std::mutex mutex;

  timestamp now() const { return options.clock ? options.clock() : system_now(); }

  // The purge audit table, in the DLQ table's schema.
  std::string audit_table() const {
    return options.schema.empty()
               ? quote_identifier("llmdlq_purge_audit")
               : fmt::format("{}.{}", quote_identifier(options.schema), quote_identifier("llmdlq_purge_audit"));
  }

  // The traffic table, in the DLQ table's schema.
  std::string traffic_table() const {
    return options.schema.empty()
               ? quote_identifier("llmdlq_traffic")
               : fmt::format("{}.{}", quote_identifier(options.schema), quote_identifier("llmdlq_traffic"));
  }

  bool lost() const { return PQstatus(conn.get()) != CONNECTION_OK; }

  expected<void, moderation_error> execute(const std::string& sql, std::span<const detail::store::sql_value> values,
                                           const row_handler& on_row, std::string_view what) override {
    auto done = execute_sql(conn.get(), sql, values, on_row, what);
    if (!done) return unexpected(to_moderation_error(std::move(done.error())));
    return {};
  }

  // Both prepare the statements after a reconnection, so that a later call
  // never meets a connection it must prepare again.
  expected<void, moderation_error> attempt(const work& body) override {
    return run([&](bool) { return body(); });
  }

  expected<void, moderation_error> transaction(const work& body) override {
    return run([&](bool) -> expected<void, moderation_error> {
      if (auto b = command("BEGIN", "begin"); !b) return unexpected(to_moderation_error(std::move(b.error())));
      auto r = body();
      if (r) {
        if (auto c = command("COMMIT", "commit"); !c) r = unexpected(to_moderation_error(std::move(c.error())));
      }
      if (!r) rollback();
      return r;
    });
  }

  detail::store::store_tables tables() const { return {qualified, traffic_table(), options_table_name(options)}; }

  result exec(const char* sql) { return result(PQexec(conn.get(), sql)); }

  template <std::size_t N>
  result exec_params(const char* sql, const std::array<const char*, N>& values) {
    return result(PQexecParams(conn.get(), sql, static_cast<int>(N), nullptr, values.data(), nullptr, nullptr, 0));
  }

  template <std::size_t N>
  result exec_prepared(const char* name, const std::array<const char*, N>& values) {
    return result(PQexecPrepared(conn.get(), name, static_cast<int>(N), values.data(), nullptr, nullptr, 0));
  }

  static bool ok(const result& r, ExecStatusType expected_status) {
    return r && PQresultStatus(r.get()) == expected_status;
  }

  expected<void, failure> command(const char* sql, std::string_view what) {
    auto r = exec(sql);
    if (!ok(r, PGRES_COMMAND_OK)) return unexpected(classify(conn.get(), r.get(), what));
    return {};
  }

  // Ends a failed transaction, if the connection still has one.
  void rollback() {
    if (!lost() && PQtransactionStatus(conn.get()) != PQTRANS_IDLE) exec("ROLLBACK");
  }

  expected<void, failure> connect() {
    auto opened = open_connection(conninfo);
    if (!opened) return unexpected(std::move(opened.error()));
    conn = std::move(*opened);
    return {};
  }

  expected<void, failure> set_up_session() {
    if (auto s = set_up_durable_session(conn.get(), options.statement_timeout_ms); !s) return s;
    session_ready = true;
    return {};
  }

  expected<void, failure> prepare() {
    const std::string& t = qualified;
    const std::array<std::pair<const char*, std::string>, 4> statements = {{
        // One row: the new dlq_id and true, or, on a conflict, the stored
        // record's dlq_id and false (the outer SELECT sees the table as it
        // was before the INSERT, so it finds only the row that conflicted).
        {insert_statement,
         fmt::format("WITH inserted AS (INSERT INTO {0} (dlq_id, idempotency_key, attempt, category, triage, "
                     "action, failure_code, message, raw_response, raw_sha256, envelope, created_at, updated_at, "
                     "expires_at) VALUES ($1, $2, $3::bigint, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, "
                     "$12::timestamptz, $13::timestamptz, $14::timestamptz) ON CONFLICT DO NOTHING RETURNING dlq_id) "
                     "SELECT dlq_id, true FROM inserted UNION ALL "
                     "(SELECT dlq_id, false FROM {0} WHERE NOT EXISTS (SELECT 1 FROM inserted) AND "
                     "(dlq_id = $1 OR (idempotency_key = $2 AND attempt = $3::bigint)) LIMIT 1)",
                     t)},
        {get_statement, fmt::format("SELECT {} FROM {} WHERE dlq_id = $1", postgres_dialect.record_columns, t)},
        // $2: the statuses the action leaves, $3: where each leads (transition()).
        {act_statement,
         fmt::format("UPDATE {0} SET status = ($3::text[])[array_position($2::text[], status)], "
                     "updated_at = $4::timestamptz, "
                     "operator_log = operator_log || jsonb_build_array(jsonb_build_object("
                     "'at', $4::text, 'operator', $5::text, 'action', $6::text, 'from', status, "
                     "'to', ($3::text[])[array_position($2::text[], status)], 'note', $7::text)), "
                     "claimed_by = CASE WHEN ($3::text[])[array_position($2::text[], status)] = 'claimed' "
                     "THEN $5::text ELSE claimed_by END, "
                     "resolution = COALESCE($8::jsonb, resolution), envelope = COALESCE($9::jsonb, envelope) "
                     "WHERE dlq_id = $1 AND status = ANY($2::text[]) RETURNING {1}",
                     t, postgres_dialect.record_columns)},
        // Why an action found no row, and whether the log ends with that action.
        {state_statement,
         fmt::format("SELECT status, COALESCE((operator_log -> -1) @> jsonb_build_object("
                     "'at', $2::text, 'operator', $3::text, 'action', $4::text, 'note', $5::text), false) "
                     "FROM {} WHERE dlq_id = $1",
                     t)},
    }};
    // A prepare that failed half-way left some behind.
    if (auto d = command("DEALLOCATE ALL", "prepare"); !d) return d;
    // The act statement's $4 (the time) is both a timestamptz and the log's
    // text: declared text (OID 25) so that the log keeps the RFC 3339 form.
    constexpr std::array<Oid, 4> act_types = {0, 0, 0, 25};
    for (const auto& [name, sql] : statements) {
      const bool act = std::string_view(name) == act_statement;
      result r(PQprepare(conn.get(), name, sql.c_str(), act ? static_cast<int>(act_types.size()) : 0,
                         act ? act_types.data() : nullptr));
      if (!ok(r, PGRES_COMMAND_OK)) return unexpected(classify(conn.get(), r.get(), fmt::format("prepare {}", name)));
    }
    prepared = true;
    return {};
  }

  // A connection ready for statements: resets a broken one when `may_reset`
  // (which it then clears), sets the session up, prepares when asked.
  expected<void, failure> ready(bool& may_reset, bool statements) {
    if (lost()) {
      if (!may_reset) return unexpected(classify(conn.get(), nullptr, "connection lost"));
      may_reset = false;
      session_ready = prepared = false;  // a new session: settings and statements are gone
      PQreset(conn.get());
      if (lost()) return unexpected(classify(conn.get(), nullptr, "reconnect"));
    }
    if (PQtransactionStatus(conn.get()) != PQTRANS_IDLE) rollback();
    if (!session_ready) {
      if (auto s = set_up_session(); !s) return s;
    }
    if (statements && !prepared) return prepare();
    return {};
  }

  // Runs op(retried) on a ready connection. When the connection turns out
  // broken, before or during op, it is reset once and op runs again: every
  // op is safe to repeat (idempotent, or checks whether it was applied).
  template <class Op>
  auto run(Op&& op, bool statements = true) -> decltype(op(false)) {
    using error = typename decltype(op(false))::error_type;
    bool may_reset = true;
    if (auto r = ready(may_reset, statements); !r) return unexpected(as_error<error>(std::move(r.error())));
    auto first = op(false);
    if (first || !lost() || !may_reset) return first;
    if (auto r = ready(may_reset, statements); !r) return unexpected(as_error<error>(std::move(r.error())));
    return op(true);
  }

  // The schema, tables, indexes and status check migrate() makes, if missing.
  std::string migration() const {
    static_assert(to_string(all_moderation_statuses[std::size(all_moderation_statuses) - 1]) == "redriven",
                  "the status CHECK is widened when it lacks the newest status");
    const std::string& t = qualified;
    const std::string& table = options.table;
    std::string ddl;
    if (!options.schema.empty())
      ddl = fmt::format("CREATE SCHEMA IF NOT EXISTS {};\n", quote_identifier(options.schema));
    ddl += fmt::format(R"sql(
      CREATE TABLE IF NOT EXISTS {0} (
        dlq_id          text PRIMARY KEY,
        idempotency_key text,
        attempt         bigint NOT NULL,
        status          text NOT NULL DEFAULT 'pending' CONSTRAINT {4} CHECK (status IN ({5})),
        category        text NOT NULL,
        triage          text NOT NULL,
        action          text NOT NULL,
        failure_code    text NOT NULL,
        message         text NOT NULL,
        raw_response    text,
        raw_sha256      text NOT NULL,
        envelope        jsonb NOT NULL,
        created_at      timestamptz NOT NULL,
        updated_at      timestamptz NOT NULL,
        expires_at      timestamptz,
        operator_log    jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(operator_log) = 'array'),
        claimed_by      text,
        resolution      jsonb
      );
      CREATE UNIQUE INDEX IF NOT EXISTS {1} ON {0} (idempotency_key, attempt)
        WHERE idempotency_key IS NOT NULL;
      CREATE INDEX IF NOT EXISTS {2} ON {0} (status, category);
      CREATE INDEX IF NOT EXISTS {3} ON {0} (status, created_at);
      CREATE INDEX IF NOT EXISTS {7} ON {0} (expires_at) WHERE expires_at IS NOT NULL;
      CREATE INDEX IF NOT EXISTS {9} ON {0} (created_at, dlq_id);
      CREATE TABLE IF NOT EXISTS {10} (
        dlq_table     text NOT NULL,
        minute        timestamptz NOT NULL,
        processed     bigint NOT NULL DEFAULT 0,
        dead_lettered bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (dlq_table, minute)
      );
      CREATE TABLE IF NOT EXISTS {8} (
        id                bigserial PRIMARY KEY,
        purged_table      text NOT NULL,
        operator          text NOT NULL,
        at                timestamptz NOT NULL,
        count             bigint NOT NULL DEFAULT 0,
        oldest_expires_at timestamptz,
        newest_expires_at timestamptz
      );
      -- A table made before the newest status: its status CHECK is replaced.
      DO $widen$
      DECLARE old record;
      BEGIN
        FOR old IN SELECT conname FROM pg_constraint
                   WHERE conrelid = '{0}'::regclass AND contype = 'c'
                     AND pg_get_constraintdef(oid) LIKE '%status%'
                     AND pg_get_constraintdef(oid) NOT LIKE '%''redriven''%'
        LOOP
          EXECUTE format('ALTER TABLE {0} DROP CONSTRAINT %I', old.conname);
        END LOOP;
        IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = '{0}'::regclass AND conname = '{6}') THEN
          ALTER TABLE {0} ADD CONSTRAINT {4} CHECK (status IN ({5}));
        END IF;
      END $widen$;
    )sql",
                       t, quote_identifier(table + "_key_attempt"), quote_identifier(table + "_status"),
                       quote_identifier(table + "_queue"), quote_identifier(table + "_status_check"),
                       detail::store::moderation_status_sql_list(), table + "_status_check",
                       quote_identifier(table + "_expires"), audit_table(), quote_identifier(table + "_created"),
                       traffic_table());
    return ddl;
  }

  expected<void, failure> migrate() {
    const std::string ddl = migration();
    return run(
        [&](bool) -> expected<void, failure> {
          if (auto b = command("BEGIN", "migrate"); !b) return b;
          // CREATE ... IF NOT EXISTS races with itself: migrations take turns.
          auto locked = exec_params("SELECT pg_advisory_xact_lock(hashtext($1))",
                                    std::array<const char*, 1>{qualified.c_str()});
          if (!ok(locked, PGRES_TUPLES_OK)) {
            auto f = classify(conn.get(), locked.get(), "migrate");
            rollback();
            return unexpected(std::move(f));
          }
          if (auto created = command(ddl.c_str(), "migrate"); !created) {
            rollback();
            return created;
          }
          if (auto c = command("COMMIT", "migrate"); !c) {
            rollback();
            return c;
          }
          return {};
        },
        /*statements=*/false);
  }

  // Inserts one envelope (in the caller's transaction, if any).
  expected<receipt, failure> insert(const envelope& original, const std::string& updated_at) {
    std::string json = serialize(original);
    std::optional<envelope> fixed;
    if (!storable_as_is(json)) {
      fixed = storable_envelope(original);
      if (!fixed)
        return unexpected(failure{
            failure_kind::rejected, "postgres: the envelope cannot be stored", {}, "unstorable envelope"});
      json = serialize(*fixed);
    }
    const envelope& e = fixed ? *fixed : original;
    const std::string attempt = std::to_string(e.attempts.count);
    const std::string created = format_rfc3339(e.created_at);
    const std::string expires = e.expires_at ? format_rfc3339(*e.expires_at) : std::string();
    const std::string category(to_string(e.failure.category));
    const std::string triage(to_string(e.triage.kind));
    const std::string action(to_string(e.triage.action));
    auto r = exec_prepared(insert_statement, std::array<const char*, 14>{
                                                 e.dlq_id.c_str(),
                                                 e.idempotency_key.empty() ? nullptr : e.idempotency_key.c_str(),
                                                 attempt.c_str(),
                                                 category.c_str(),
                                                 triage.c_str(),
                                                 action.c_str(),
                                                 e.failure.code.c_str(),
                                                 e.failure.message.c_str(),
                                                 e.raw_response.text ? e.raw_response.text->c_str() : nullptr,
                                                 e.raw_response.sha256.c_str(),
                                                 json.c_str(),
                                                 created.c_str(),
                                                 updated_at.c_str(),
                                                 e.expires_at ? expires.c_str() : nullptr,
                                             });
    if (!ok(r, PGRES_TUPLES_OK)) return unexpected(classify(conn.get(), r.get(), "insert"));
    if (PQntuples(r.get()) != 1) {
      return unexpected(failure{
          failure_kind::rejected, "postgres: insert: the row neither went in nor conflicted", {}, "insert"});
    }
    const bool duplicate = std::string_view(PQgetvalue(r.get(), 0, 1)) != "t";
    return receipt{PQgetvalue(r.get(), 0, 0), duplicate, location};
  }

  // The record with this dlq_id, by the prepared get statement (inside act()'s attempt).
  expected<std::optional<moderation_record>, failure> record(const std::string& dlq_id) {
    const std::array<const char*, 1> values = {dlq_id.c_str()};
    auto r = exec_prepared(get_statement, values);
    if (!ok(r, PGRES_TUPLES_OK)) return unexpected(classify(conn.get(), r.get(), "get"));
    if (PQntuples(r.get()) != 1) return std::optional<moderation_record>{};
    return std::optional<moderation_record>(read_record(r.get(), 0));
  }
};

postgres_store::postgres_store(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
postgres_store::postgres_store(postgres_store&&) noexcept = default;
postgres_store& postgres_store::operator=(postgres_store&&) noexcept = default;
postgres_store::~postgres_store() = default;

expected<postgres_store, sink_error> postgres_store::open(std::string_view conninfo, postgres_store_options options) {
  if (auto unusable = unusable_names(conninfo, options.table, max_table_name, options.schema, max_schema_name)) {
    return unexpected(sink_error{sink_errc::rejected, std::move(*unusable)});
  }
  auto state = std::make_unique<impl>();
  state->conninfo = std::string(conninfo);
  state->options = std::move(options);
  const auto& o = state->options;
  state->qualified = qualified_name(o.schema, o.table);
  if (auto c = state->connect(); !c) return unexpected(to_sink_error(std::move(c.error())));
  state->location = fmt::format("postgres:{}#{}", PQdb(state->conn.get()),
                                o.schema.empty() ? o.table : o.schema + "." + o.table);
  if (o.migrate) {
    if (auto m = state->migrate(); !m) return unexpected(to_sink_error(std::move(m.error())));
  }
  // Prepares the statements now: a missing or unusable table fails open().
  bool may_reset = true;
  if (auto r = state->ready(may_reset, true); !r) return unexpected(to_sink_error(std::move(r.error())));
  return postgres_store(std::move(state));
}

const std::string& postgres_store::qualified_table() const noexcept {
  static const std::string none;
  return impl_ ? impl_->qualified : none;
}

namespace {
sink_error closed_sink() { return {sink_errc::closed, "postgres: the store was moved from"}; }
moderation_error closed_store() {
  return {moderation_errc::store_unavailable, "postgres: the store was moved from", {}};
}
}  // namespace

expected<void, sink_error> postgres_store::migrate() {
  if (!impl_) return unexpected(closed_sink());
  std::lock_guard lock(impl_->mutex);
  auto m = impl_->migrate();
  if (!m) return unexpected(to_sink_error(std::move(m.error())));
  return {};
}

expected<receipt, sink_error> postgres_store::publish(const envelope& e) {
  if (!impl_) return unexpected(closed_sink());
  std::lock_guard lock(impl_->mutex);
  const std::string updated_at = format_rfc3339(impl_->now());
  auto r = impl_->run([&](bool) { return impl_->insert(e, updated_at); });  // autocommit: durable on return
  if (!r) return unexpected(to_sink_error(std::move(r.error())));
  return std::move(*r);
}

expected<std::vector<receipt>, sink_error> postgres_store::publish_batch(std::span<const envelope> batch) {
  if (!impl_) return unexpected(closed_sink());
  if (batch.empty()) return std::vector<receipt>{};
  std::lock_guard lock(impl_->mutex);
  const std::string updated_at = format_rfc3339(impl_->now());
  auto r = impl_->run([&](bool) -> expected<std::vector<receipt>, failure> {
    if (auto b = impl_->command("BEGIN", "begin"); !b) return unexpected(std::move(b.error()));
    std::vector<receipt> receipts;
    receipts.reserve(batch.size());
    for (const auto& e : batch) {
      auto one = impl_->insert(e, updated_at);
      if (!one) {
        impl_->rollback();
        return unexpected(std::move(one.error()));
      }
      receipts.push_back(std::move(*one));
    }
    if (auto c = impl_->command("COMMIT", "commit"); !c) {
      impl_->rollback();
      return unexpected(std::move(c.error()));
    }
    return receipts;
  });
  if (!r) return unexpected(to_sink_error(std::move(r.error())));
  return std::move(*r);
}

namespace {
// The report of a purge from a row of (count, oldest, newest).
purge_report report_of(const purge_request& request, const PGresult* r) {
  auto report = purge_report::for_request(request);
  report.count = std::strtoull(PQgetvalue(r, 0, 0), nullptr, 10);
  if (!PQgetisnull(r, 0, 1)) report.oldest_expires_at = parse_rfc3339(PQgetvalue(r, 0, 1));
  if (!PQgetisnull(r, 0, 2)) report.newest_expires_at = parse_rfc3339(PQgetvalue(r, 0, 2));
  return report;
}
}  // namespace

expected<purge_report, sink_error> postgres_store::purge(const purge_request& request) {
  if (!impl_) return unexpected(closed_sink());
  if (request.operator_name.empty()) {
    return unexpected(sink_error{sink_errc::rejected, "postgres: a purge needs an operator name for its audit"});
  }
  const std::string now = format_rfc3339(request.now);
  const std::string& t = impl_->qualified;
  const std::string audit = impl_->audit_table();
  std::lock_guard lock(impl_->mutex);
  using outcome = expected<purge_report, failure>;
  const auto query = [&](const std::string& sql, const auto& values, const char* what) -> expected<result, failure> {
    auto r = impl_->exec_params(sql.c_str(), values);
    if (!impl::ok(r, PGRES_TUPLES_OK) || PQntuples(r.get()) != 1) {
      return unexpected(classify(impl_->conn.get(), r.get(), what));
    }
    return r;
  };
  if (request.dry_run) {
    const std::string sql = fmt::format("SELECT count(*), {}, {} FROM {} WHERE expires_at <= $1::timestamptz",
                                        utc_text("min(expires_at)"), utc_text("max(expires_at)"), t);
    auto r = impl_->run(
        [&](bool) -> outcome {
          auto counted = query(sql, std::array<const char*, 1>{now.c_str()}, "purge: count");
          if (!counted) return unexpected(std::move(counted.error()));
          return report_of(request, counted->get());
        },
        /*statements=*/false);
    if (!r) return unexpected(to_sink_error(std::move(r.error())));
    return std::move(*r);
  }
  const std::string operator_name = storable_copy(request.operator_name);
  const std::string table_name = options_table_name(impl_->options);
  auto id = impl_->run(
      [&](bool) -> expected<std::string, failure> {
        auto r = query(fmt::format("INSERT INTO {} (purged_table, operator, at) VALUES ($1, $2, $3::timestamptz) "
                                   "RETURNING id",
                                   audit),
                       std::array<const char*, 3>{table_name.c_str(), operator_name.c_str(), now.c_str()},
                       "purge: audit");
        if (!r) return unexpected(std::move(r.error()));
        return std::string(PQgetvalue(r->get(), 0, 0));
      },
      /*statements=*/false);
  if (!id) return unexpected(to_sink_error(std::move(id.error())));
  const std::string batch = std::to_string(std::max<std::size_t>(impl_->options.purge_batch, 1));
  const std::string delete_batch = fmt::format(
      "WITH doomed AS (SELECT ctid FROM {0} WHERE expires_at <= $1::timestamptz LIMIT $2::bigint "
      "FOR UPDATE SKIP LOCKED), "
      "gone AS (DELETE FROM {0} WHERE ctid = ANY(ARRAY(SELECT ctid FROM doomed)) RETURNING expires_at), "
      "summary AS (SELECT count(*) AS n, min(expires_at) AS oldest, max(expires_at) AS newest FROM gone) "
      "UPDATE {1} SET count = {1}.count + summary.n, "
      "oldest_expires_at = LEAST({1}.oldest_expires_at, summary.oldest), "
      "newest_expires_at = GREATEST({1}.newest_expires_at, summary.newest) "
      "FROM summary WHERE {1}.id = $3::bigint RETURNING summary.n",
      t, audit);
  for (;;) {  // each statement is its own short transaction
    auto deleted = impl_->run(
        [&](bool) -> expected<std::uint64_t, failure> {
          auto r = query(delete_batch, std::array<const char*, 3>{now.c_str(), batch.c_str(), id->c_str()},
                         "purge: delete");
          if (!r) return unexpected(std::move(r.error()));
          return std::strtoull(PQgetvalue(r->get(), 0, 0), nullptr, 10);
        },
        /*statements=*/false);
    if (!deleted) return unexpected(to_sink_error(std::move(deleted.error())));
    if (*deleted == 0) break;
  }
  const std::string read_audit = fmt::format("SELECT count, {}, {} FROM {} WHERE id = $1::bigint",
                                             utc_text("oldest_expires_at"), utc_text("newest_expires_at"), audit);
  auto r = impl_->run(
      [&](bool) -> outcome {
        auto row = query(read_audit, std::array<const char*, 1>{id->c_str()}, "purge: read the audit");
        if (!row) return unexpected(std::move(row.error()));
        return report_of(request, row->get());
      },
      /*statements=*/false);
  if (!r) return unexpected(to_sink_error(std::move(r.error())));
  return std::move(*r);
}

expected<moderation_record, moderation_error> postgres_store::act(const moderation_request& request) {
  if (!impl_) return unexpected(closed_store());
  if (auto refused = detail::store::check_moderation_request(request)) return unexpected(std::move(*refused));
  std::optional<std::string> corrected;
  if (request.action == moderation_action::resolve || request.action == moderation_action::recover) {
    corrected = *request.corrected;
  }
  std::optional<std::string> replaced_envelope;  // the replayer's, as PostgreSQL can store it
  if (request.envelope_json) {
    auto e = parse_envelope(*request.envelope_json);
    if (e) replaced_envelope = storable_json(*e);
    if (!replaced_envelope) {
      return unexpected(moderation_error{moderation_errc::invalid_resolution,
                                         "PostgreSQL cannot store the updated envelope", std::nullopt});
    }
  }
  std::vector<moderation_status> from = statuses_allowing(request.action);
  std::vector<moderation_status> to;
  for (const auto s : from) to.push_back(*transition(s, request.action));
  const std::string from_array = status_array(from);
  const std::string to_array = status_array(to);
  const std::string dlq_id = storable_copy(request.dlq_id);
  const std::string operator_name = storable_copy(request.operator_name);
  const std::string note = storable_copy(request.note);
  const std::string action(to_string(request.action));

  std::lock_guard lock(impl_->mutex);
  const std::string at = format_rfc3339(impl_->now());
  using outcome = expected<moderation_record, moderation_error>;
  auto r = impl_->run([&](bool retried) -> expected<outcome, failure> {
    result updated = impl_->exec_prepared(act_statement, std::array<const char*, 9>{
                                                             dlq_id.c_str(), from_array.c_str(), to_array.c_str(),
                                                             at.c_str(), operator_name.c_str(), action.c_str(),
                                                             note.c_str(), corrected ? corrected->c_str() : nullptr,
                                                             replaced_envelope ? replaced_envelope->c_str() : nullptr});
    if (!impl::ok(updated, PGRES_TUPLES_OK)) {
      auto f = classify(impl_->conn.get(), updated.get(), "act");
      // jsonb refused the corrected JSON (\u0000, a number beyond numeric's
      // range, bad UTF-8): every other parameter is storable text.
      if (corrected && !impl_->lost() &&
          (f.sqlstate == "22P02" || f.sqlstate == "22P05" || f.sqlstate == "22003" || f.sqlstate == "22021")) {
        return outcome(unexpected(moderation_error{moderation_errc::invalid_resolution,
                                                   "PostgreSQL cannot store the corrected JSON: " + f.reason,
                                                   std::nullopt}));
      }
      return unexpected(std::move(f));
    }
    if (PQntuples(updated.get()) == 1) return outcome(read_record(updated.get(), 0));
    // No row changed: absent, or in a status the action does not leave.
    result state = impl_->exec_prepared(state_statement,
                                        std::array<const char*, 5>{dlq_id.c_str(), at.c_str(), operator_name.c_str(),
                                                                   action.c_str(), note.c_str()});
    if (!impl::ok(state, PGRES_TUPLES_OK)) return unexpected(classify(impl_->conn.get(), state.get(), "act"));
    if (PQntuples(state.get()) == 0) {
      return outcome(unexpected(moderation_error{moderation_errc::not_found,
                                                 fmt::format("no record {}", request.dlq_id), std::nullopt}));
    }
    const auto current = parse_moderation_status(PQgetvalue(state.get(), 0, 0));
    if (!current) {  // a status no action leaves: named, nothing changed
      moderation_record unknown;
      unknown.dlq_id = request.dlq_id;
      detail::store::check_status(unknown, PQgetvalue(state.get(), 0, 0));
      return outcome(unexpected(detail::store::unreadable_status(unknown)));
    }
    if (retried && std::string_view(PQgetvalue(state.get(), 0, 1)) == "t") {
      // The first try committed before its connection broke: this action is done.
      auto done = impl_->record(dlq_id);
      if (!done) return unexpected(std::move(done.error()));
      if (*done) return outcome(std::move(**done));
    }
    return outcome(unexpected(moderation_error{
        moderation_errc::invalid_transition,
        fmt::format("cannot {} record {}: it is {}", action, request.dlq_id, to_string(*current)), *current}));
  });
  if (!r) return unexpected(to_moderation_error(std::move(r.error())));
  return std::move(*r);
}

expected<std::optional<moderation_record>, moderation_error> postgres_store::get(std::string_view dlq_id) {
  if (!impl_) return unexpected(closed_store());
  std::lock_guard lock(impl_->mutex);
  return detail::store::get_record(*impl_, postgres_dialect, impl_->qualified, dlq_id);
}

expected<std::vector<moderation_record>, moderation_error> postgres_store::list(moderation_status status,
                                                                                std::size_t limit) {
  return list_after(status, {}, {}, limit);
}

expected<std::vector<moderation_record>, moderation_error> postgres_store::list_after(
    moderation_status status, std::string_view after_created_at, std::string_view after_dlq_id, std::size_t limit) {
  if (!impl_) return unexpected(closed_store());
  std::lock_guard lock(impl_->mutex);
  return detail::store::list_after(*impl_, postgres_dialect, impl_->qualified, status, after_created_at, after_dlq_id,
                                   limit);
}

// Keyset pages of rows, each locked, read and rewritten in one transaction.
expected<std::size_t, moderation_error> postgres_store::rewrite_envelopes(const envelope_rewrite& change,
                                                                          std::size_t batch) {
  if (!impl_) return unexpected(closed_store());
  std::lock_guard lock(impl_->mutex);
  return detail::store::rewrite_envelopes(*impl_, postgres_dialect, impl_->qualified, change, batch);
}

expected<moderation_page, moderation_error> postgres_store::query(const moderation_query& q) {
  if (!impl_) return unexpected(closed_store());
  std::lock_guard lock(impl_->mutex);
  return detail::store::query_page(*impl_, postgres_dialect, impl_->qualified, q);
}

expected<dlq_statistics, moderation_error> postgres_store::statistics() {
  if (!impl_) return unexpected(closed_store());
  std::lock_guard lock(impl_->mutex);
  return detail::store::statistics(*impl_, postgres_dialect, impl_->qualified);
}

expected<std::vector<dlq_timeline_bucket>, moderation_error> postgres_store::timeline(timestamp since, timestamp until,
                                                                                      std::chrono::seconds width) {
  if (!impl_) return unexpected(closed_store());
  std::lock_guard lock(impl_->mutex);
  return detail::store::timeline(*impl_, postgres_dialect, impl_->tables(), since, until, width);
}

expected<void, moderation_error> postgres_store::record_traffic(timestamp at, std::uint64_t processed,
                                                                std::uint64_t dead_lettered) {
  if (!impl_) return unexpected(closed_store());
  std::lock_guard lock(impl_->mutex);
  // Not idempotent: a lost connection is not retried, or the counts could be added twice.
  bool may_reset = true;
  if (auto ready = impl_->ready(may_reset, false); !ready)
    return unexpected(to_moderation_error(std::move(ready.error())));
  return detail::store::record_traffic(*impl_, postgres_dialect, impl_->tables(), at, processed, dead_lettered);
}

LLMDLQ_END_NAMESPACE
