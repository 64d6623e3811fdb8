// SPDX-License-Identifier: MIT
// Replay state (leases, cursors, attempt counts, the replay ledger) in
// PostgreSQL tables, which may sit beside the moderation store's.
// Part of the llmdlq::postgres library (libpq).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/store/delegating_replay_state.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/replay_state.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct postgres_replay_state_options {
  /// The tables are `<prefix>_leases`, `<prefix>_cursors`,
  /// `<prefix>_attempts` and `<prefix>_ledger`, in the connection's first
  /// search_path schema: letters, digits and underscores, not starting with
  /// a digit, at most 40 characters. Used as written (quoted), so case matters.
  std::string table_prefix = "llmdlq_replay";
  /// Limit on each statement, in milliseconds; 0 keeps the server's setting.
  int statement_timeout_ms = 30000;
  /// The time leases expire by and ledger entries are written at.
  clock_function clock = system_now;
};

/// replay_state in four PostgreSQL tables, created by open() when missing
/// (concurrent opens take turns on an advisory lock):
///
///     <prefix>_leases   (name text PRIMARY KEY, owner text, expires_at timestamptz)
///     <prefix>_cursors  (name text PRIMARY KEY, position text)
///     <prefix>_attempts (idempotency_key text PRIMARY KEY, count bigint)
///     <prefix>_ledger   (idempotency_key text PRIMARY KEY, source text, dlq_id text,
///                        output text, written_at timestamptz, delivered boolean)
///
/// Every change is one conditional statement committed before the call
/// returns (synchronous_commit on, or stricter): `INSERT ... ON CONFLICT DO
/// UPDATE ... WHERE` takes a lease only when it is free, expired or the
/// caller's, and counts an attempt only below the maximum; the ledger keeps
/// the first output (`ON CONFLICT DO NOTHING`); a cursor moves only while
/// its owner's lease is unexpired (the lease row is share-locked meanwhile).
/// A lease whose expiry has passed is held by nobody, as in
/// sqlite_replay_state.
///
/// Texts are stored as PostgreSQL text: a key, name or output holding U+0000
/// or invalid UTF-8 is refused with store_unavailable.
///
/// Connection loss: a call that finds the connection broken resets it once.
/// Reads and the calls that are safe to repeat (leases, cursors,
/// mark_delivered) run again when it breaks during the call; the others
/// (reserve_attempt, release_attempt, record_output) fail with
/// store_unavailable, since their first try may have committed: a
/// reservation then counts once more than was made (never fewer), and a
/// record_output tried again may answer `first = false` with the caller's
/// own output, which undelivered() lists until mark_delivered().
///
/// Thread-safe: one connection, serialised by a mutex. Never throws (but
/// std::bad_alloc), prints nothing.
class postgres_replay_state final : public detail::store::delegating_replay_state {
 public:
  /// Connects with a libpq connection string or URI and creates the tables
  /// when missing.
  [[nodiscard]] static expected<postgres_replay_state, replay_state_error> open(
      std::string_view conninfo, postgres_replay_state_options options = {});

  postgres_replay_state(postgres_replay_state&&) noexcept;
  postgres_replay_state& operator=(postgres_replay_state&&) noexcept;
  ~postgres_replay_state() override;

 private:
  replay_state& target() noexcept override;

  struct impl;
  explicit postgres_replay_state(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
