// SPDX-License-Identifier: MIT
// postgres_replay_target on libpq: one insert per delivery, the conflict on
// the idempotency key doing nothing.
#include "llmdlq/postgres/replay_target.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "libpq.hpp"
#include "llmdlq/detail/deliverable.hpp"

LLMDLQ_BEGIN_NAMESPACE

using namespace detail::postgres;

namespace {

constexpr std::size_t max_identifier = 63;

// The data or the table refuse it for good; anything else may pass later.
replay_error to_replay_error(failure f) {
  const bool refused = f.kind == failure_kind::rejected;
  return {refused ? replay_errc::target_refused : replay_errc::target_unavailable, std::move(f.message), {}, {}};
}

}  // namespace

struct postgres_replay_target::impl {
  std::string conninfo;
  postgres_target_options options;
  std::string qualified;
  std::string insert_sql;
  connection conn;
  bool session_ready = false;

  [[nodiscard]] bool lost() const { return !conn || PQstatus(conn.get()) != CONNECTION_OK; }

  expected<void, failure> command(const std::string& sql, std::string_view what) {
    const result r(PQexec(conn.get(), sql.c_str()));
    if (!r || (PQresultStatus(r.get()) != PGRES_COMMAND_OK && PQresultStatus(r.get()) != PGRES_TUPLES_OK)) {
      auto f = classify(conn.get(), r.get(), what);
      if (!lost() && PQtransactionStatus(conn.get()) != PQTRANS_IDLE) (void)result(PQexec(conn.get(), "ROLLBACK"));
      return unexpected(std::move(f));
    }
    return {};
  }

  // The table, made once by whichever process holds the lock.
  expected<void, failure> migrate() {
    std::string sql = fmt::format("BEGIN; SELECT pg_advisory_xact_lock(hashtext('llmdlq target {}'));\n", qualified);
    if (!options.schema.empty())
      sql += fmt::format("CREATE SCHEMA IF NOT EXISTS {};\n", quote_identifier(options.schema));
    sql += fmt::format(
        "CREATE TABLE IF NOT EXISTS {} (idempotency_key text PRIMARY KEY, source text NOT NULL, dlq_id text, "
        "resolved_by text, note text, output jsonb NOT NULL, delivered_at timestamptz NOT NULL DEFAULT now());\n"
        "COMMIT;",
        qualified);
    return command(sql, "creating the table " + qualified);
  }

  // Plans the insert without running it: a table without the columns or the
  // unique key it needs is refused now, not at the first delivery.
  expected<void, failure> check_table() {
    return command(fmt::format("EXPLAIN {}", insert_sql_with("'', '', NULL, NULL, NULL, 'null'")),
                   "checking the table " + qualified);
  }

  [[nodiscard]] std::string insert_sql_with(std::string_view values) const {
    return fmt::format("INSERT INTO {} (idempotency_key, source, dlq_id, resolved_by, note, output) VALUES ({}) "
                       "ON CONFLICT (idempotency_key) DO NOTHING",
                       qualified, values);
  }

  // A connection with its session set up, reset once when it was lost.
  expected<void, failure> ready() {
    if (lost()) {
      session_ready = false;
      if (conn) {
        PQreset(conn.get());
      } else {
        auto opened = open_connection(conninfo);
        if (!opened) return unexpected(std::move(opened.error()));
        conn = std::move(*opened);
      }
      if (lost()) return unexpected(classify(conn.get(), nullptr, "reconnect"));
    }
    if (!session_ready) {
      if (auto s = set_up_durable_session(conn.get(), options.statement_timeout_ms); !s) return s;
      session_ready = true;
    }
    return {};
  }

  expected<void, failure> insert(const ledger_entry& entry) {
    const auto or_null = [](const std::string& value) { return value.empty() ? nullptr : value.c_str(); };
    const std::array<const char*, 6> values = {entry.idempotency_key.c_str(), entry.source.c_str(),
                                               or_null(entry.dlq_id),         or_null(entry.resolved_by),
                                               or_null(entry.note),           entry.output.c_str()};
    const result r(PQexecParams(conn.get(), insert_sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                                nullptr, nullptr, 0));
    if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) return unexpected(classify(conn.get(), r.get(), "deliver"));
    return {};
  }
};

postgres_replay_target::postgres_replay_target(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
postgres_replay_target::postgres_replay_target(postgres_replay_target&&) noexcept = default;
postgres_replay_target& postgres_replay_target::operator=(postgres_replay_target&&) noexcept = default;
postgres_replay_target::~postgres_replay_target() = default;

const std::string& postgres_replay_target::qualified_table() const noexcept { return impl_->qualified; }

expected<postgres_replay_target, replay_error> postgres_replay_target::open(std::string_view conninfo,
                                                                            postgres_target_options options) {
  if (auto unusable = unusable_names(conninfo, options.table, max_identifier, options.schema, max_identifier)) {
    return detail::target_failure(replay_errc::target_refused, std::move(*unusable));
  }
  auto state = std::make_unique<impl>();
  state->conninfo = std::string(conninfo);
  state->options = std::move(options);
  const auto& o = state->options;
  state->qualified = qualified_name(o.schema, o.table);
  state->insert_sql = state->insert_sql_with("$1, $2, $3, $4, $5, $6::jsonb");
  if (auto r = state->ready(); !r) return unexpected(to_replay_error(std::move(r.error())));
  if (o.migrate) {
    if (auto m = state->migrate(); !m) return unexpected(to_replay_error(std::move(m.error())));
  }
  // A table that is missing or not of this shape is rejected: the operator's to fix.
  if (auto c = state->check_table(); !c) return unexpected(to_replay_error(std::move(c.error())));
  return postgres_replay_target(std::move(state));
}

expected<void, replay_error> postgres_replay_target::deliver(const ledger_entry& entry) {
  if (auto json = detail::deliverable(entry); !json) return json;
  impl& s = *impl_;
  // The insert does nothing the second time: sending it again after a lost connection is safe.
  for (int round = 0;; ++round) {
    if (auto r = s.ready(); !r) return unexpected(to_replay_error(std::move(r.error())));
    auto inserted = s.insert(entry);
    if (inserted) return {};
    if (round > 0 || !s.lost()) return unexpected(to_replay_error(std::move(inserted.error())));
  }
}

LLMDLQ_END_NAMESPACE
