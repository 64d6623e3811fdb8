// SPDX-License-Identifier: MIT
// The replay state's operations (leases, cursors, attempts, holds and the
// ledger) in SQL, once for every back-end: each gives its session, its
// dialect and its tables' names.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/store/ledger_entry.hpp"
#include "llmdlq/detail/store/replay_session.hpp"
#include "llmdlq/detail/store/sql_dialect.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/replay_state.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

[[nodiscard]] inline replay_state_error replay_refusal(replay_state_errc code, std::string message) {
  return {code, std::move(message), {}, {}};
}

/// The replay state's tables, as the SQL names them (quoted as needed).
struct replay_tables {
  std::string leases, cursors, attempts, ledger, holds;
};

/// Every operation of a replay_state, on a back-end's session. Each is one
/// operation() of the session, made of statements that are each conditional
/// (an upsert with its condition, a write that says whether it applied), so
/// that two processes sharing the store cannot both take a lease, both
/// spend a payload's last attempt or both write its result first.
class replay_state_sql final : public replay_state {
 public:
  using error = replay_state_error;

  replay_state_sql(replay_session& session, const sql_dialect& dialect, replay_tables tables, clock_function clock)
      : session_(session), d_(dialect), t_(std::move(tables)), clock_(std::move(clock)) {}

  expected<void, error> acquire_lease(std::string_view name, std::string_view owner,
                                      std::chrono::seconds ttl) override {
    return run<void>("acquire_lease", true, [&]() -> expected<void, error> {
      // A holder that releases between the two statements lets the next round take it.
      for (int round = 0; round < 3; ++round) {
        const timestamp at = now();
        // Taken when free, expired, or already this owner's (a renewal).
        auto taken = rows(fmt::format("INSERT INTO {0} AS l (name, owner, expires_at) VALUES ({1}, {2}, {3}{5}) "
                                      "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, "
                                      "expires_at = excluded.expires_at "
                                      "WHERE l.owner = excluded.owner OR l.expires_at <= {4}{5} RETURNING 1",
                                      t_.leases, p(1), p(2), p(3), p(4), d_.time_cast),
                          {text(name), text(owner), format_rfc3339(at + ttl), format_rfc3339(at)}, "acquire_lease");
        if (!taken) return unexpected(std::move(taken.error()));
        if (*taken == 1) return {};
        std::optional<error> held;
        auto read = execute(fmt::format("SELECT owner, {} FROM {} WHERE name = {}", d_.time_text("expires_at"),
                                        t_.leases, p(1)),
                            {text(name)}, "acquire_lease", [&](const sql_row& row) {
                              held = replay_refusal(replay_state_errc::lease_held, {});
                              held->holder = row.text(0);
                              held->expires_at = parse_rfc3339(row.text(1));
                              held->message = fmt::format("the lease {} is held by {} until {}", name, held->holder,
                                                          held->expires_at ? format_rfc3339(*held->expires_at) : "?");
                            });
        if (!read) return unexpected(std::move(read.error()));
        if (held) return unexpected(std::move(*held));
      }
      return unexpected(replay_refusal(replay_state_errc::store_unavailable,
                                       fmt::format("{}: acquire_lease: the lease {} keeps changing hands",
                                                   d_.replay.backend, name)));
    });
  }

  expected<void, error> release_lease(std::string_view name, std::string_view owner) override {
    return run<void>("release_lease", true, [&] {
      return execute(fmt::format("DELETE FROM {} WHERE name = {} AND owner = {}", t_.leases, p(1), p(2)),
                     {text(name), text(owner)}, "release_lease");
    });
  }

  expected<void, error> release_all(std::string_view owner) override {
    return run<void>("release_all", true, [&] {
      return execute(fmt::format("DELETE FROM {} WHERE owner = {}", t_.leases, p(1)), {text(owner)}, "release_all");
    });
  }

  expected<std::optional<std::string>, error> load_cursor(std::string_view name) override {
    return run<std::optional<std::string>>("load_cursor", true, [&]() -> expected<std::optional<std::string>, error> {
      std::optional<std::string> position;
      auto read = execute(fmt::format("SELECT position FROM {} WHERE name = {}", t_.cursors, p(1)), {text(name)},
                          "load_cursor", [&](const sql_row& row) { position = row.text(0); });
      if (!read) return unexpected(std::move(read.error()));
      return position;
    });
  }

  expected<void, error> store_cursor(std::string_view lease, std::string_view owner, std::string_view name,
                                     std::string_view position) override {
    return run<void>("store_cursor", true, [&]() -> expected<void, error> {
      // The lease's row is locked until the cursor moved (that row, or the
      // whole store): it cannot change hands meanwhile. `WHERE true` keeps
      // SQLite from reading ON CONFLICT as a join's ON.
      auto moved = rows(fmt::format("WITH held AS (SELECT 1 FROM {0} WHERE name = {2} AND owner = {3} "
                                    "AND expires_at > {5}{7}{8}) "
                                    "INSERT INTO {1} (name, position) SELECT {6}, {4} FROM held WHERE true "
                                    "ON CONFLICT (name) DO UPDATE SET position = excluded.position RETURNING 1",
                                    t_.leases, t_.cursors, p(1), p(2), p(3), p(4), p(5), d_.time_cast,
                                    d_.replay.share_rows),
                        {text(lease), text(owner), text(position), format_rfc3339(now()), text(name)}, "store_cursor");
      if (!moved) return unexpected(std::move(moved.error()));
      if (*moved == 0) {
        return unexpected(replay_refusal(replay_state_errc::lease_lost,
                                         fmt::format("{} does not hold the lease {}: the cursor {} stays", owner, lease,
                                                     name)));
      }
      return {};
    });
  }

  expected<std::uint32_t, error> attempts(std::string_view idempotency_key) override {
    return run<std::uint32_t>("attempts", true, [&]() -> expected<std::uint32_t, error> {
      std::uint32_t count = 0;
      auto read = execute(fmt::format("SELECT count FROM {} WHERE idempotency_key = {}", t_.attempts, p(1)),
                          {text(idempotency_key)}, "attempts",
                          [&](const sql_row& row) { count = static_cast<std::uint32_t>(row.count(0)); });
      if (!read) return unexpected(std::move(read.error()));
      return count;
    });
  }

  expected<std::uint32_t, error> reserve_attempt(std::string_view idempotency_key,
                                                 std::uint32_t max_attempts) override {
    const auto exhausted = [&] {
      return replay_refusal(replay_state_errc::attempts_exhausted,
                            fmt::format("{} had its {} automated attempts", idempotency_key, max_attempts));
    };
    if (max_attempts == 0) return unexpected(exhausted());
    return run<std::uint32_t>("reserve_attempt", false, [&]() -> expected<std::uint32_t, error> {
      std::optional<std::uint32_t> number;
      auto done = execute(fmt::format("INSERT INTO {} AS a (idempotency_key, count) VALUES ({}, 1) "
                                      "ON CONFLICT (idempotency_key) DO UPDATE SET count = a.count + 1 "
                                      "WHERE a.count < {}{} RETURNING count",
                                      t_.attempts, p(1), p(2), d_.integer_cast),
                          {text(idempotency_key), std::int64_t{max_attempts}}, "reserve_attempt",
                          [&](const sql_row& row) { number = static_cast<std::uint32_t>(row.count(0)); });
      if (!done) return unexpected(std::move(done.error()));
      if (!number) return unexpected(exhausted());
      return *number;
    });
  }

  expected<void, error> release_attempt(std::string_view idempotency_key) override {
    return run<void>("release_attempt", false, [&] {
      return execute(fmt::format("UPDATE {} SET count = count - 1 WHERE idempotency_key = {} AND count > 0",
                                 t_.attempts, p(1)),
                     {text(idempotency_key)}, "release_attempt");
    });
  }

  expected<call_hold, error> record_call_failure(std::string_view key, timestamp not_before,
                                                 std::string_view why) override {
    return run<call_hold>("record_call_failure", false, [&]() -> expected<call_hold, error> {
      // The later wait stays (times kept as text are RFC 3339 UTC of one
      // width, which order as their times do).
      auto noted = execute(fmt::format("INSERT INTO {0} AS h (key, failures, not_before, last_error) "
                                       "VALUES ({1}, 1, {2}{4}, {3}) ON CONFLICT (key) DO UPDATE "
                                       "SET failures = h.failures + 1, "
                                       "not_before = {5}(h.not_before, excluded.not_before), "
                                       "last_error = excluded.last_error",
                                       t_.holds, p(1), p(2), p(3), d_.time_cast, d_.replay.greatest),
                           {text(key), format_rfc3339(not_before), text(why)}, "record_call_failure");
      if (!noted) return unexpected(std::move(noted.error()));
      return hold_of(key);
    });
  }

  expected<call_hold, error> hold(std::string_view key) override {
    return run<call_hold>("hold", true, [&] { return hold_of(key); });
  }

  expected<void, error> clear_hold(std::string_view key) override {
    return run<void>("clear_hold", true, [&] {
      return execute(fmt::format("DELETE FROM {} WHERE key = {}", t_.holds, p(1)), {text(key)}, "clear_hold");
    });
  }

  expected<ledger_entry, error> record_output(std::string_view idempotency_key, std::string_view source,
                                              std::string_view dlq_id, std::string_view output) override {
    return run<ledger_entry>("record_output", false, [&]() -> expected<ledger_entry, error> {
      const timestamp at = now();
      auto written = rows(fmt::format("INSERT INTO {} (idempotency_key, source, dlq_id, output, written_at) "
                                      "VALUES ({}, {}, {}, {}, {}{}) "
                                      "ON CONFLICT (idempotency_key) DO NOTHING RETURNING 1",
                                      t_.ledger, p(1), p(2), p(3), p(4), p(5), d_.time_cast),
                          {text(idempotency_key), text(source), text(dlq_id), text(output), format_rfc3339(at)},
                          "record_output");
      if (!written) return unexpected(std::move(written.error()));
      if (*written == 1) return written_first(idempotency_key, source, dlq_id, output, at);
      // A new statement, a new snapshot: it sees the entry that conflicted.
      auto earlier = entry(idempotency_key);
      if (!earlier) return unexpected(std::move(earlier.error()));
      if (!*earlier) {
        return unexpected(replay_refusal(replay_state_errc::store_unavailable,
                                         fmt::format("{}: record_output: the earlier entry vanished",
                                                     d_.replay.backend)));
      }
      return std::move(**earlier);
    });
  }

  expected<std::optional<ledger_entry>, error> find_output(std::string_view idempotency_key) override {
    return run<std::optional<ledger_entry>>("find_output", true, [&] { return entry(idempotency_key); });
  }

  expected<void, error> mark_delivered(std::string_view idempotency_key) override {
    return run<void>("mark_delivered", true, [&] {
      return execute(fmt::format("UPDATE {} SET delivered = {} WHERE idempotency_key = {}", t_.ledger,
                                 d_.replay.true_literal, p(1)),
                     {text(idempotency_key)}, "mark_delivered");
    });
  }

  expected<std::vector<ledger_entry>, error> undelivered(std::string_view source, std::size_t limit) override {
    const auto count = static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX));
    return run<std::vector<ledger_entry>>("undelivered", true, [&]() -> expected<std::vector<ledger_entry>, error> {
      std::vector<ledger_entry> entries;
      auto read = execute(fmt::format("SELECT {} FROM {} WHERE delivered = {} AND source = {} "
                                      "ORDER BY written_at, {} LIMIT {}{}",
                                      ledger_columns(), t_.ledger, d_.replay.false_literal, p(2),
                                      d_.replay.ledger_tie_break, p(1), d_.integer_cast),
                          {count, text(source)}, "undelivered",
                          [&](const sql_row& row) { entries.push_back(read_entry(row)); });
      if (!read) return unexpected(std::move(read.error()));
      return entries;
    });
  }

 private:
  static sql_value text(std::string_view value) { return std::string(value); }
  std::string p(std::size_t number) const { return d_.placeholder(number); }
  timestamp now() const { return clock_ ? clock_() : system_now(); }

  // body() as one operation of the session, its result taken out.
  template <class T, class Body>
  expected<T, error> run(std::string_view what, bool repeatable, Body&& body) {
    if constexpr (std::is_void_v<T>) {
      return session_.operation(what, repeatable, body);
    } else {
      std::optional<T> result;
      auto done = session_.operation(what, repeatable, [&]() -> expected<void, error> {
        auto r = body();
        if (!r) return unexpected(std::move(r.error()));
        result = std::move(*r);
        return {};
      });
      if (!done) return unexpected(std::move(done.error()));
      return std::move(*result);
    }
  }

  expected<void, error> execute(const std::string& sql, std::initializer_list<sql_value> values, std::string_view what,
                                const replay_session::row_handler& on_row = {}) {
    return session_.execute(sql, std::span<const sql_value>(values.begin(), values.size()), on_row, what);
  }

  // How many rows `sql` yields (a write's RETURNING: whether it applied).
  expected<std::size_t, error> rows(const std::string& sql, std::initializer_list<sql_value> values,
                                    std::string_view what) {
    std::size_t count = 0;
    auto done = execute(sql, values, what, [&](const sql_row&) { ++count; });
    if (!done) return unexpected(std::move(done.error()));
    return count;
  }

  // delivered is read as 1 or 0, whatever the back-end's boolean.
  std::string ledger_columns() const {
    return fmt::format("idempotency_key, source, dlq_id, output, {}, CASE WHEN delivered THEN 1 ELSE 0 END",
                       d_.time_text("written_at"));
  }

  static ledger_entry read_entry(const sql_row& row) {
    ledger_entry e;
    e.idempotency_key = row.text(0);
    e.source = row.text(1);
    e.dlq_id = row.text(2);
    e.output = row.text(3);
    e.written_at = parse_rfc3339(row.text(4)).value_or(timestamp{});
    e.delivered = row.integer(5) != 0;
    return e;
  }

  expected<call_hold, error> hold_of(std::string_view key) {
    call_hold found;
    auto read = execute(fmt::format("SELECT failures, {}, last_error FROM {} WHERE key = {}",
                                    d_.time_text("not_before"), t_.holds, p(1)),
                        {text(key)}, "hold", [&](const sql_row& row) {
                          found.failures = static_cast<std::uint32_t>(row.count(0));
                          found.not_before = parse_rfc3339(row.text(1));
                          found.last_error = row.text(2);
                        });
    if (!read) return unexpected(std::move(read.error()));
    return found;
  }

  expected<std::optional<ledger_entry>, error> entry(std::string_view idempotency_key) {
    std::optional<ledger_entry> found;
    auto read = execute(fmt::format("SELECT {} FROM {} WHERE idempotency_key = {}", ledger_columns(), t_.ledger, p(1)),
                        {text(idempotency_key)}, "find_output", [&](const sql_row& row) { found = read_entry(row); });
    if (!read) return unexpected(std::move(read.error()));
    return found;
  }

  replay_session& session_;
  const sql_dialect& d_;
  replay_tables t_;
  clock_function clock_;
};

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
