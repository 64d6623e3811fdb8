// SPDX-License-Identifier: MIT
// A Redis stream as a replay's target: each recovered or corrected payload
// added once, whatever a crash between the ledger and the stream repeats.
// Part of the llmdlq::redis library (hiredis).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/redis/connection_options.hpp"
#include "llmdlq/redis/persistence.hpp"
#include "llmdlq/replay_error.hpp"
#include "llmdlq/replay_target.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct redis_stream_target_options {
  redis_connection_options connection;
  std::string stream = "llmdlq:recovered";  ///< the stream's key
  /// The hash that maps each delivered idempotency key to its entry id;
  /// empty means `<stream>:delivered`. It is never trimmed or expired: a key
  /// it holds is never added again.
  std::string delivered_key;
  /// `XADD key MAXLEN ~ max_length`; 0: no trimming. Trimmed entries stay
  /// delivered (their keys stay in the hash).
  std::uint64_t max_length = 0;
  /// Refuse a server that would lose what it acknowledged in a crash (no
  /// append-only file, or one it never syncs), as redis_stream_sink does:
  /// the ledger would say delivered what the stream no longer holds.
  bool require_persistence = true;
};

/// Adds each payload as one entry of a Redis stream with the fields
///
///   idempotency_key, source, output   (the output as the ledger holds it)
///   dlq_id, resolved_by, note         (when the entry has them)
///
/// A Lua script makes each delivery atomic and once per key: when the
/// delivered hash holds the key nothing is added; otherwise it XADDs and
/// records the new entry id under the key, in one step the server runs
/// whole. A replay killed after the script ran and before the ledger heard
/// of it delivers the payload again on its next run, and the stream still
/// holds it once.
///
/// Durable as redis_stream_sink is (see require_persistence). A lost
/// connection or a timeout is target_unavailable (the next delivery
/// connects again); a server that refuses the script (OOM, a key of another
/// type, no permission) or does not persist is target_refused.
/// Not thread-safe: one replay or delivery at a time writes through it.
/// Nothing throws but std::bad_alloc.
class redis_stream_target final : public replay_target {
 public:
  /// Connects and checks the server's persistence.
  [[nodiscard]] static expected<redis_stream_target, replay_error> open(redis_stream_target_options options = {});

  redis_stream_target(redis_stream_target&&) noexcept;
  redis_stream_target& operator=(redis_stream_target&&) noexcept;
  ~redis_stream_target() override;

  [[nodiscard]] expected<void, replay_error> deliver(const ledger_entry& entry) override;

  [[nodiscard]] const redis_stream_target_options& options() const noexcept;

 private:
  struct impl;
  explicit redis_stream_target(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
