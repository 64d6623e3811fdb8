// SPDX-License-Identifier: MIT
// Replay state (leases, cursors, attempt counts, the replay ledger) in a
// SQLite database, which may be the dead-letter store's own file.
// Part of the llmdlq::sqlite library.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
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

struct sqlite_replay_state_options {
  /// The tables are `<prefix>_leases`, `<prefix>_cursors`,
  /// `<prefix>_attempts` and `<prefix>_ledger`: letters, digits and
  /// underscores, not starting with a digit.
  std::string table_prefix = "llmdlq_replay";
  int busy_timeout_ms = 5000;  ///< how long to wait for another writer's lock
  /// The time leases expire by and ledger entries are written at.
  clock_function clock = system_now;
};

/// replay_state in a SQLite file, created when missing (readable by its
/// owner only, 0600, like sqlite_store, refused as sqlite_store refuses a
/// file or its directory, and marked with llmdlq's application id as a
/// store's file is: the two may share it) with its tables:
///
///     <prefix>_leases   (name PRIMARY KEY, owner, expires_at)
///     <prefix>_cursors  (name PRIMARY KEY, position)
///     <prefix>_attempts (idempotency_key PRIMARY KEY, count)
///     <prefix>_ledger   (idempotency_key PRIMARY KEY, source, dlq_id, output,
///                        written_at, delivered)
///
/// Each operation is one `BEGIN IMMEDIATE` transaction, committed durably
/// (WAL, synchronous=FULL) before it returns: processes sharing the file
/// take turns on SQLite's write lock, waiting up to `busy_timeout_ms`.
/// Times are RFC 3339 text. A lease is held while its expiry is later than
/// the clock: store_cursor() by an owner whose lease expired fails with
/// lease_lost even before another owner takes it (acquiring it again renews
/// it). Errors: lease_held, lease_lost, attempts_exhausted as replay_state
/// says, store_unavailable for anything the file or SQLite refused. Never
/// throws (but std::bad_alloc).
///
/// Thread-safe (one connection, serialized). A process that forks opens its
/// own instance in the child.
class sqlite_replay_state final : public detail::store::delegating_replay_state {
 public:
  [[nodiscard]] static expected<sqlite_replay_state, replay_state_error> open(
      const std::filesystem::path& path, sqlite_replay_state_options options = {});

  sqlite_replay_state(sqlite_replay_state&&) noexcept;
  sqlite_replay_state& operator=(sqlite_replay_state&&) noexcept;
  ~sqlite_replay_state() override;

 private:
  replay_state& target() noexcept override;

  struct impl;
  explicit sqlite_replay_state(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
