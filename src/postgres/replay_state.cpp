// SPDX-License-Identifier: MIT
// postgres_replay_state on libpq: the shared operations
// (detail/store/replay_state_sql.hpp), one conditional statement per
// change, on one connection, under one mutex.
#include "llmdlq/config.hpp"
#include "llmdlq/postgres/replay_state.hpp"
#include "llmdlq/detail/store/replay_state_sql.hpp"

#include <libpq-fe.h>

#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "libpq.hpp"
#include "shared_sql.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

using namespace detail::postgres;

// The longest prefix: `<prefix>_ledger_undelivered` must fit in 63 bytes.
constexpr std::size_t max_prefix = 40;

using detail::store::replay_refusal;

replay_state_error to_error(failure f) {
  return replay_refusal(replay_state_errc::store_unavailable, std::move(f.message));
}

}  // namespace

struct postgres_replay_state::impl final : detail::store::replay_session {
  std::string conninfo;
  postgres_replay_state_options options;
  detail::store::replay_tables tables;  // quoted
  connection conn;
  bool session_ready = false;
  std::mutex mutex;
  detail::store::replay_state_sql state;

  explicit impl(postgres_replay_state_options o)
      : options(std::move(o)),
        tables{quote_identifier(options.table_prefix + "_leases"), quote_identifier(options.table_prefix + "_cursors"),
               quote_identifier(options.table_prefix + "_attempts"), quote_identifier(options.table_prefix + "_ledger"),
               quote_identifier(options.table_prefix + "_holds")},
        state(*this, postgres_dialect, tables, options.clock) {}

  bool lost() const { return PQstatus(conn.get()) != CONNECTION_OK; }

  expected<void, replay_state_error> execute(const std::string& sql, std::span<const detail::store::sql_value> values,
                                             const row_handler& on_row, std::string_view what) override {
    auto done = execute_sql(conn.get(), sql, values, on_row, what);
    if (!done) return unexpected(to_error(std::move(done.error())));
    return {};
  }

  expected<void, replay_state_error> ready() {
    if (lost()) {
      session_ready = false;
      PQreset(conn.get());
      if (lost()) return unexpected(to_error(classify(conn.get(), nullptr, "reconnect")));
    }
    if (PQtransactionStatus(conn.get()) != PQTRANS_IDLE) PQclear(PQexec(conn.get(), "ROLLBACK"));
    if (!session_ready) {
      if (auto s = set_up_durable_session(conn.get(), options.statement_timeout_ms); !s) {
        return unexpected(to_error(std::move(s.error())));
      }
      session_ready = true;
    }
    return {};
  }

  // Runs body on a ready connection, statement by statement. When the
  // connection breaks during body and body is `repeatable`, it is reset and
  // body runs again.
  expected<void, replay_state_error> operation(std::string_view, bool repeatable, const work& body) override {
    std::lock_guard lock(mutex);
    for (int round = 0;; ++round) {
      if (auto r = ready(); !r) return unexpected(std::move(r.error()));
      auto r = body();
      if (r || !repeatable || round > 0 || !lost()) return r;
    }
  }

  expected<void, replay_state_error> create_tables() {
    const std::string ddl = fmt::format(R"sql(
      BEGIN;
      SELECT pg_advisory_xact_lock(hashtext('llmdlq replay tables ' || {5}));
      CREATE TABLE IF NOT EXISTS {0} (
        name       text PRIMARY KEY,
        owner      text NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE TABLE IF NOT EXISTS {1} (
        name     text PRIMARY KEY,
        position text NOT NULL
      );
      CREATE TABLE IF NOT EXISTS {2} (
        idempotency_key text PRIMARY KEY,
        count           bigint NOT NULL CHECK (count >= 0)
      );
      CREATE TABLE IF NOT EXISTS {3} (
        idempotency_key text PRIMARY KEY,
        source          text NOT NULL,
        dlq_id          text NOT NULL,
        output          text NOT NULL,
        written_at      timestamptz NOT NULL,
        delivered       boolean NOT NULL DEFAULT false
      );
      CREATE INDEX IF NOT EXISTS {4} ON {3} (written_at) WHERE NOT delivered;
      CREATE TABLE IF NOT EXISTS {6} (
        key        text PRIMARY KEY,
        failures   bigint NOT NULL CHECK (failures >= 0),
        not_before timestamptz NOT NULL,
        last_error text NOT NULL
      );
      COMMIT;
    )sql",
                                        tables.leases, tables.cursors, tables.attempts, tables.ledger,
                                        quote_identifier(options.table_prefix + "_ledger_undelivered"),
                                        fmt::format("'{}'", options.table_prefix), tables.holds);
    const result r(PQexec(conn.get(), ddl.c_str()));
    if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      auto error = to_error(classify(conn.get(), r.get(), "create the replay tables"));
      if (!lost()) PQclear(PQexec(conn.get(), "ROLLBACK"));
      return unexpected(std::move(error));
    }
    return {};
  }
};

postgres_replay_state::postgres_replay_state(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
postgres_replay_state::postgres_replay_state(postgres_replay_state&&) noexcept = default;
postgres_replay_state& postgres_replay_state::operator=(postgres_replay_state&&) noexcept = default;
postgres_replay_state::~postgres_replay_state() = default;

expected<postgres_replay_state, replay_state_error> postgres_replay_state::open(std::string_view conninfo,
                                                                                postgres_replay_state_options options) {
  const std::string& p = options.table_prefix;
  if (!valid_identifier(p, max_prefix)) {
    return unexpected(replay_refusal(replay_state_errc::store_unavailable,
                                     "postgres: invalid table prefix '" + p + "' (letters, digits and _, at most 40)"));
  }
  if (conninfo.find('\0') != std::string_view::npos) {
    return unexpected(replay_refusal(replay_state_errc::store_unavailable,
                                     "postgres: the connection string holds a NUL byte"));
  }
  auto state = std::make_unique<impl>(std::move(options));
  state->conninfo = std::string(conninfo);
  auto opened = open_connection(state->conninfo);
  if (!opened) return unexpected(to_error(std::move(opened.error())));
  state->conn = std::move(*opened);
  if (auto r = state->ready(); !r) return unexpected(std::move(r.error()));
  if (auto c = state->create_tables(); !c) return unexpected(std::move(c.error()));
  return postgres_replay_state(std::move(state));
}

replay_state& postgres_replay_state::target() noexcept { return impl_->state; }

LLMDLQ_END_NAMESPACE
