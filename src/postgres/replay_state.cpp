// SPDX-License-Identifier: MIT
// postgres_replay_state on libpq: one connection, one conditional statement
// per change, one mutex.
#include "llmdlq/config.hpp"
#include "llmdlq/postgres/replay_state.hpp"
#include "llmdlq/detail/store/ledger_entry.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "libpq.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

using namespace detail::postgres;

// The longest prefix: `<prefix>_ledger_undelivered` must fit in 63 bytes.
constexpr std::size_t max_prefix = 40;

replay_state_error refused(replay_state_errc code, std::string message) { return {code, std::move(message), {}, {}}; }

replay_state_error to_error(failure f) { return refused(replay_state_errc::store_unavailable, std::move(f.message)); }

// A timestamptz column read as milliseconds since the epoch.
std::string epoch_ms(std::string_view column) {
  return fmt::format("(extract(epoch FROM {}) * 1000)::bigint", column);
}

timestamp read_time(const PGresult* r, int row, int column) {
  const char* text = PQgetvalue(r, row, column);
  std::int64_t ms = 0;
  std::from_chars(text, text + PQgetlength(r, row, column), ms);
  return timestamp{std::chrono::milliseconds(ms)};
}

ledger_entry read_entry(const PGresult* r, int row) {
  const auto text = [&](int column) { return std::string(PQgetvalue(r, row, column), PQgetlength(r, row, column)); };
  ledger_entry e;
  e.idempotency_key = text(0);
  e.source = text(1);
  e.dlq_id = text(2);
  e.output = text(3);
  e.written_at = read_time(r, row, 4);
  e.delivered = text(5) == "t";
  return e;
}

}  // namespace

struct postgres_replay_state::impl {
  std::string conninfo;
  postgres_replay_state_options options;
  std::string leases, cursors, attempts, ledger, holds;  // quoted table names
  std::string ledger_columns;
  connection conn;
  bool session_ready = false;
  std::mutex mutex;

  timestamp now() const { return options.clock ? options.clock() : system_now(); }
  bool lost() const { return PQstatus(conn.get()) != CONNECTION_OK; }

  // Runs `sql` with text parameters; the result when its status is `want`.
  template <std::size_t N>
  expected<result, replay_state_error> query(const std::string& sql, const std::array<const char*, N>& values,
                                             std::string_view what, ExecStatusType want = PGRES_TUPLES_OK) {
    result r(PQexecParams(conn.get(), sql.c_str(), static_cast<int>(N), nullptr, values.data(), nullptr, nullptr, 0));
    if (!r || PQresultStatus(r.get()) != want) return unexpected(to_error(classify(conn.get(), r.get(), what)));
    return r;
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

  // Runs op() on a ready connection, under the mutex. When the connection
  // breaks during op and op is `repeatable`, it is reset and op runs again.
  template <class Op>
  auto run(bool repeatable, Op&& op) -> decltype(op()) {
    std::lock_guard lock(mutex);
    for (int round = 0;; ++round) {
      if (auto r = ready(); !r) return unexpected(std::move(r.error()));
      auto r = op();
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
        leases, cursors, attempts, ledger, quote_identifier(options.table_prefix + "_ledger_undelivered"),
        fmt::format("'{}'", options.table_prefix), holds);
    const result r(PQexec(conn.get(), ddl.c_str()));
    if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      auto error = to_error(classify(conn.get(), r.get(), "create the replay tables"));
      if (!lost()) PQclear(PQexec(conn.get(), "ROLLBACK"));
      return unexpected(std::move(error));
    }
    return {};
  }

  expected<call_hold, replay_state_error> hold_of(const std::string& key) {
    auto r = query(fmt::format("SELECT failures, {}, last_error FROM {} WHERE key = $1", epoch_ms("not_before"), holds),
                   std::array<const char*, 1>{key.c_str()}, "hold");
    if (!r) return unexpected(std::move(r.error()));
    call_hold found;
    if (PQntuples(r->get()) == 0) return found;
    found.failures = static_cast<std::uint32_t>(std::strtoull(PQgetvalue(r->get(), 0, 0), nullptr, 10));
    found.not_before = read_time(r->get(), 0, 1);
    found.last_error = std::string(PQgetvalue(r->get(), 0, 2), PQgetlength(r->get(), 0, 2));
    return found;
  }

  expected<std::optional<ledger_entry>, replay_state_error> entry(const std::string& key) {
    auto r = query(fmt::format("SELECT {} FROM {} WHERE idempotency_key = $1", ledger_columns, ledger),
                   std::array<const char*, 1>{key.c_str()}, "find_output");
    if (!r) return unexpected(std::move(r.error()));
    if (PQntuples(r->get()) == 0) return std::optional<ledger_entry>{};
    return std::optional<ledger_entry>(read_entry(r->get(), 0));
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
    return unexpected(refused(replay_state_errc::store_unavailable,
                              "postgres: invalid table prefix '" + p + "' (letters, digits and _, at most 40)"));
  }
  if (conninfo.find('\0') != std::string_view::npos) {
    return unexpected(refused(replay_state_errc::store_unavailable, "postgres: the connection string holds a NUL byte"));
  }
  auto state = std::make_unique<impl>();
  state->conninfo = std::string(conninfo);
  state->leases = quote_identifier(p + "_leases");
  state->cursors = quote_identifier(p + "_cursors");
  state->attempts = quote_identifier(p + "_attempts");
  state->ledger = quote_identifier(p + "_ledger");
  state->holds = quote_identifier(p + "_holds");
  state->ledger_columns =
      fmt::format("idempotency_key, source, dlq_id, output, {}, delivered", epoch_ms("written_at"));
  state->options = std::move(options);
  auto opened = open_connection(state->conninfo);
  if (!opened) return unexpected(to_error(std::move(opened.error())));
  state->conn = std::move(*opened);
  if (auto r = state->ready(); !r) return unexpected(std::move(r.error()));
  if (auto c = state->create_tables(); !c) return unexpected(std::move(c.error()));
  return postgres_replay_state(std::move(state));
}

expected<void, replay_state_error> postgres_replay_state::acquire_lease(std::string_view name, std::string_view owner,
                                                                        std::chrono::seconds ttl) {
  const std::string lease(name), who(owner);
  auto& s = *impl_;
  return s.run(true, [&]() -> expected<void, replay_state_error> {
    // A holder that releases between the two statements lets the next round take it.
    for (int round = 0; round < 3; ++round) {
      const timestamp now = s.now();
      const std::string at = format_rfc3339(now), until = format_rfc3339(now + ttl);
      // Taken when free, expired, or already this owner's (a renewal).
      auto taken = s.query(fmt::format("INSERT INTO {} AS l (name, owner, expires_at) VALUES ($1, $2, $3) "
                                       "ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, "
                                       "expires_at = EXCLUDED.expires_at "
                                       "WHERE l.owner = EXCLUDED.owner OR l.expires_at <= $4::timestamptz RETURNING 1",
                                       s.leases),
                           std::array<const char*, 4>{lease.c_str(), who.c_str(), until.c_str(), at.c_str()},
                           "acquire_lease");
      if (!taken) return unexpected(std::move(taken.error()));
      if (PQntuples(taken->get()) == 1) return {};
      auto holder = s.query(fmt::format("SELECT owner, {} FROM {} WHERE name = $1", epoch_ms("expires_at"), s.leases),
                            std::array<const char*, 1>{lease.c_str()}, "acquire_lease");
      if (!holder) return unexpected(std::move(holder.error()));
      if (PQntuples(holder->get()) == 1) {
        auto held = refused(replay_state_errc::lease_held, {});
        held.holder = PQgetvalue(holder->get(), 0, 0);
        held.expires_at = read_time(holder->get(), 0, 1);
        held.message = fmt::format("the lease {} is held by {} until {}", name, held.holder,
                                   format_rfc3339(*held.expires_at));
        return unexpected(std::move(held));
      }
    }
    return unexpected(refused(replay_state_errc::store_unavailable,
                              fmt::format("postgres: acquire_lease: the lease {} keeps changing hands", name)));
  });
}

expected<void, replay_state_error> postgres_replay_state::release_lease(std::string_view name, std::string_view owner) {
  const std::string lease(name), who(owner);
  auto& s = *impl_;
  return s.run(true, [&]() -> expected<void, replay_state_error> {
    auto r = s.query(fmt::format("DELETE FROM {} WHERE name = $1 AND owner = $2", s.leases),
                     std::array<const char*, 2>{lease.c_str(), who.c_str()}, "release_lease", PGRES_COMMAND_OK);
    if (!r) return unexpected(std::move(r.error()));
    return {};
  });
}

expected<std::optional<std::string>, replay_state_error> postgres_replay_state::load_cursor(std::string_view name) {
  const std::string cursor(name);
  auto& s = *impl_;
  return s.run(true, [&]() -> expected<std::optional<std::string>, replay_state_error> {
    auto r = s.query(fmt::format("SELECT position FROM {} WHERE name = $1", s.cursors),
                     std::array<const char*, 1>{cursor.c_str()}, "load_cursor");
    if (!r) return unexpected(std::move(r.error()));
    if (PQntuples(r->get()) == 0) return std::optional<std::string>{};
    return std::optional<std::string>(std::string(PQgetvalue(r->get(), 0, 0), PQgetlength(r->get(), 0, 0)));
  });
}

expected<void, replay_state_error> postgres_replay_state::store_cursor(std::string_view lease, std::string_view owner,
                                                                       std::string_view name,
                                                                       std::string_view position) {
  const std::string held_lease(lease), cursor(name), who(owner), where(position);
  auto& s = *impl_;
  return s.run(true, [&]() -> expected<void, replay_state_error> {
    const std::string at = format_rfc3339(s.now());
    // The lease row is share-locked until the cursor moved: it cannot change hands meanwhile.
    auto r = s.query(fmt::format("WITH held AS (SELECT 1 FROM {} WHERE name = $1 AND owner = $2 "
                                 "AND expires_at > $4::timestamptz FOR SHARE) "
                                 "INSERT INTO {} (name, position) SELECT $5, $3 FROM held "
                                 "ON CONFLICT (name) DO UPDATE SET position = EXCLUDED.position RETURNING 1",
                                 s.leases, s.cursors),
                     std::array<const char*, 5>{held_lease.c_str(), who.c_str(), where.c_str(), at.c_str(),
                                                cursor.c_str()},
                     "store_cursor");
    if (!r) return unexpected(std::move(r.error()));
    if (PQntuples(r->get()) == 0) {
      return unexpected(refused(replay_state_errc::lease_lost,
                                fmt::format("{} does not hold the lease {}: the cursor {} stays", owner, lease, name)));
    }
    return {};
  });
}

expected<std::uint32_t, replay_state_error> postgres_replay_state::attempts(std::string_view idempotency_key) {
  const std::string key(idempotency_key);
  auto& s = *impl_;
  return s.run(true, [&]() -> expected<std::uint32_t, replay_state_error> {
    auto r = s.query(fmt::format("SELECT count FROM {} WHERE idempotency_key = $1", s.attempts),
                     std::array<const char*, 1>{key.c_str()}, "attempts");
    if (!r) return unexpected(std::move(r.error()));
    if (PQntuples(r->get()) == 0) return 0U;
    return static_cast<std::uint32_t>(std::strtoull(PQgetvalue(r->get(), 0, 0), nullptr, 10));
  });
}

expected<std::uint32_t, replay_state_error> postgres_replay_state::reserve_attempt(std::string_view idempotency_key,
                                                                                   std::uint32_t max_attempts) {
  const auto exhausted = [&] {
    return refused(replay_state_errc::attempts_exhausted,
                   fmt::format("{} had its {} automated attempts", idempotency_key, max_attempts));
  };
  if (max_attempts == 0) return unexpected(exhausted());
  const std::string key(idempotency_key), max = std::to_string(max_attempts);
  auto& s = *impl_;
  return s.run(false, [&]() -> expected<std::uint32_t, replay_state_error> {
    auto r = s.query(fmt::format("INSERT INTO {} AS a (idempotency_key, count) VALUES ($1, 1) "
                                 "ON CONFLICT (idempotency_key) DO UPDATE SET count = a.count + 1 "
                                 "WHERE a.count < $2::bigint RETURNING count",
                                 s.attempts),
                     std::array<const char*, 2>{key.c_str(), max.c_str()}, "reserve_attempt");
    if (!r) return unexpected(std::move(r.error()));
    if (PQntuples(r->get()) == 0) return unexpected(exhausted());
    return static_cast<std::uint32_t>(std::strtoull(PQgetvalue(r->get(), 0, 0), nullptr, 10));
  });
}

expected<void, replay_state_error> postgres_replay_state::release_attempt(std::string_view idempotency_key) {
  const std::string key(idempotency_key);
  auto& s = *impl_;
  return s.run(false, [&]() -> expected<void, replay_state_error> {
    auto r = s.query(fmt::format("UPDATE {} SET count = count - 1 WHERE idempotency_key = $1 AND count > 0",
                                 s.attempts),
                     std::array<const char*, 1>{key.c_str()}, "release_attempt", PGRES_COMMAND_OK);
    if (!r) return unexpected(std::move(r.error()));
    return {};
  });
}

expected<call_hold, replay_state_error> postgres_replay_state::record_call_failure(std::string_view key,
                                                                                 timestamp not_before,
                                                                                 std::string_view error) {
  const std::string k(key), until = format_rfc3339(not_before), what(error);
  auto& s = *impl_;
  return s.run(false, [&]() -> expected<call_hold, replay_state_error> {
    auto r = s.query(fmt::format("INSERT INTO {} AS h (key, failures, not_before, last_error) "
                                 "VALUES ($1, 1, $2::timestamptz, $3) ON CONFLICT (key) DO UPDATE "
                                 "SET failures = h.failures + 1, not_before = GREATEST(h.not_before, "
                                 "EXCLUDED.not_before), last_error = EXCLUDED.last_error",
                                 s.holds),
                     std::array<const char*, 3>{k.c_str(), until.c_str(), what.c_str()}, "record_call_failure",
                     PGRES_COMMAND_OK);
    if (!r) return unexpected(std::move(r.error()));
    return s.hold_of(k);
  });
}

expected<call_hold, replay_state_error> postgres_replay_state::hold(std::string_view key) {
  const std::string k(key);
  auto& s = *impl_;
  return s.run(true, [&] { return s.hold_of(k); });
}

expected<void, replay_state_error> postgres_replay_state::clear_hold(std::string_view key) {
  const std::string k(key);
  auto& s = *impl_;
  return s.run(true, [&]() -> expected<void, replay_state_error> {
    auto r = s.query(fmt::format("DELETE FROM {} WHERE key = $1", s.holds), std::array<const char*, 1>{k.c_str()},
                     "clear_hold", PGRES_COMMAND_OK);
    if (!r) return unexpected(std::move(r.error()));
    return {};
  });
}

expected<ledger_entry, replay_state_error> postgres_replay_state::record_output(std::string_view idempotency_key,
                                                                                std::string_view source,
                                                                                std::string_view dlq_id,
                                                                                std::string_view output) {
  const std::string key(idempotency_key), from(source), id(dlq_id), document(output);
  auto& s = *impl_;
  return s.run(false, [&]() -> expected<ledger_entry, replay_state_error> {
    const timestamp now = s.now();
    const std::string at = format_rfc3339(now);
    auto r = s.query(fmt::format("INSERT INTO {} (idempotency_key, source, dlq_id, output, written_at) "
                                 "VALUES ($1, $2, $3, $4, $5::timestamptz) "
                                 "ON CONFLICT (idempotency_key) DO NOTHING RETURNING 1",
                                 s.ledger),
                     std::array<const char*, 5>{key.c_str(), from.c_str(), id.c_str(), document.c_str(), at.c_str()},
                     "record_output");
    if (!r) return unexpected(std::move(r.error()));
    if (PQntuples(r->get()) == 1) return detail::store::written_first(key, from, id, document, now);
    // A new statement, a new snapshot: it sees the entry that conflicted.
    auto earlier = s.entry(key);
    if (!earlier) return unexpected(std::move(earlier.error()));
    if (!*earlier) {
      return unexpected(refused(replay_state_errc::store_unavailable,
                                "postgres: record_output: the earlier entry vanished"));
    }
    return std::move(**earlier);
  });
}

expected<std::optional<ledger_entry>, replay_state_error> postgres_replay_state::find_output(
    std::string_view idempotency_key) {
  const std::string key(idempotency_key);
  auto& s = *impl_;
  return s.run(true, [&] { return s.entry(key); });
}

expected<void, replay_state_error> postgres_replay_state::mark_delivered(std::string_view idempotency_key) {
  const std::string key(idempotency_key);
  auto& s = *impl_;
  return s.run(true, [&]() -> expected<void, replay_state_error> {
    auto r = s.query(fmt::format("UPDATE {} SET delivered = true WHERE idempotency_key = $1", s.ledger),
                     std::array<const char*, 1>{key.c_str()}, "mark_delivered", PGRES_COMMAND_OK);
    if (!r) return unexpected(std::move(r.error()));
    return {};
  });
}

expected<std::vector<ledger_entry>, replay_state_error> postgres_replay_state::undelivered(std::string_view source,
                                                                                          std::size_t limit) {
  const std::string count = std::to_string(std::min<std::size_t>(limit, static_cast<std::size_t>(INT64_MAX)));
  const std::string by(source);
  auto& s = *impl_;
  return s.run(true, [&]() -> expected<std::vector<ledger_entry>, replay_state_error> {
    auto r = s.query(fmt::format("SELECT {} FROM {} WHERE NOT delivered AND source = $2 "
                                 "ORDER BY written_at, idempotency_key LIMIT $1::bigint",
                                 s.ledger_columns, s.ledger),
                     std::array<const char*, 2>{count.c_str(), by.c_str()}, "undelivered");
    if (!r) return unexpected(std::move(r.error()));
    std::vector<ledger_entry> entries;
    for (int row = 0; row < PQntuples(r->get()); ++row) entries.push_back(read_entry(r->get(), row));
    return entries;
  });
}

LLMDLQ_END_NAMESPACE
