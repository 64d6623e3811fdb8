// SPDX-License-Identifier: MIT
// Where a replay sends what it recovered, and deliver_resolutions() what
// people resolved: the interface a host implements for its own downstream.
// The built-in one appends to a JSON Lines file (jsonl_replay_target.hpp).
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/replay_error.hpp"
#include "llmdlq/replay_state.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Where recovered payloads go. Each delivery carries the idempotency key,
/// so a target that sees a key twice (after a crash between delivery and
/// the ledger's confirmation) can drop the second.
class replay_target {
 public:
  virtual ~replay_target() = default;
  /// Fails with replay_errc::target_unavailable when the payload may go
  /// through later (a write that failed), target_refused when it never will.
  [[nodiscard]] virtual expected<void, replay_error> deliver(const ledger_entry& entry) = 0;
};

LLMDLQ_END_NAMESPACE
