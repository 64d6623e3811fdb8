// SPDX-License-Identifier: MIT
// A PostgreSQL table as a replay's target: one row per recovered or
// corrected payload, inserted once by its idempotency key.
// Part of the llmdlq::postgres library (libpq).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/replay_error.hpp"
#include "llmdlq/replay_target.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct postgres_target_options {
  std::string table = "llmdlq_deliveries";  ///< letters, digits and _; at most 63
  std::string schema;                       ///< empty: the search_path's first
  /// Create the schema and the table when missing (under an advisory lock,
  /// so two processes opening at once both succeed). Without it the table
  /// must exist.
  bool migrate = true;
  int statement_timeout_ms = 30000;
};

/// Inserts each payload as a row of
///
///   idempotency_key text PRIMARY KEY, source text NOT NULL,
///   dlq_id text, resolved_by text, note text,
///   output jsonb NOT NULL, delivered_at timestamptz NOT NULL DEFAULT now()
///
/// with `INSERT ... ON CONFLICT (idempotency_key) DO NOTHING`: a payload
/// delivered again (after a replay was killed between the target and the
/// ledger) leaves the first row as it is. The output is stored as jsonb
/// (its numbers keep their digits, 2920.00 stays 2920.00; its members'
/// order and duplicates go as jsonb keeps them). An output jsonb refuses
/// (a `\u0000` in a string) is target_refused.
///
/// Commits are durable before deliver() returns (`synchronous_commit` on
/// for the session). A lost connection is reset once and the insert sent
/// again; a server that cannot be reached, a statement timeout or a lost
/// connection is target_unavailable; a table that is not one of these (a
/// missing column, no unique idempotency_key) is refused when the target
/// opens. Not thread-safe: one replay or delivery at a time writes through
/// it. Nothing throws but std::bad_alloc.
class postgres_replay_target final : public replay_target {
 public:
  /// Connects with the libpq connection string (or URI), creates the table
  /// when asked, and checks the insert against it.
  [[nodiscard]] static expected<postgres_replay_target, replay_error> open(std::string_view conninfo,
                                                                           postgres_target_options options = {});

  postgres_replay_target(postgres_replay_target&&) noexcept;
  postgres_replay_target& operator=(postgres_replay_target&&) noexcept;
  ~postgres_replay_target() override;

  [[nodiscard]] expected<void, replay_error> deliver(const ledger_entry& entry) override;

  /// The table as SQL names it: `"schema"."table"` or `"table"`.
  [[nodiscard]] const std::string& qualified_table() const noexcept;

 private:
  struct impl;
  explicit postgres_replay_target(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
