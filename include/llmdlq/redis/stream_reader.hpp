// SPDX-License-Identifier: MIT
// Reads a redis_stream_sink's stream back for replay, as one consumer of a
// consumer group: XREADGROUP, XACK, XAUTOCLAIM.
// Part of the llmdlq::redis library (hiredis).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/redis/connection_options.hpp"
#include "llmdlq/redis/error.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct redis_stream_reader_options {
  redis_connection_options connection;
  std::string stream = "llmdlq:dead-letters";
  std::string group = "llmdlq-replay";
  /// This reader's name in the group. Keep it stable across restarts (host
  /// name and worker index, say): a restarted reader gets back the entries it
  /// read and had not acknowledged only under the same name.
  std::string consumer = "replayer-1";
  /// Where a group created by open() starts: "0" is the whole stream, "$"
  /// only entries added from now on. An existing group keeps its position.
  std::string group_start = "0";
};

/// One stream entry, its envelope parsed.
struct redis_stream_entry {
  std::string id;  ///< the stream entry id, for ack()
  /// The entry's fields in order. Empty when the entry was deleted (trimmed
  /// by MAXLEN) after it was delivered and before it was acknowledged.
  std::vector<std::pair<std::string, std::string>> fields;
  /// The `envelope` field read back, or why it could not be (no such field,
  /// deleted entry, not a version 1 envelope): the raw fields stay available.
  expected<envelope, envelope_error> parsed{unexpected(envelope_error{})};

  /// The value of the field `name`, or nothing.
  [[nodiscard]] std::optional<std::string_view> field(std::string_view name) const noexcept {
    for (const auto& [key, value] : fields) {
      if (key == name) return std::string_view(value);
    }
    return std::nullopt;
  }
};

/// A consumer in a consumer group on the dead-letter stream. open() creates
/// the group when it does not exist (XGROUP CREATE ... MKSTREAM; an existing
/// group is kept). read() first returns this consumer's pending entries -
/// delivered before, never acknowledged, e.g. by a process that crashed - and
/// then new ones; an entry stays pending until ack(). Delivery is therefore at
/// least once: make the replay idempotent (the envelope's idempotency key).
///
/// After a lost connection the next read() starts again with the pending
/// entries, so an entry whose delivery was lost on the wire is not lost. If
/// the group vanished (a server restarted without persistence), it is created
/// again at `group_start`.
///
/// Errors are redis_errors (unavailable, timeout, protocol_error, rejected).
/// Nothing throws but std::bad_alloc; nothing is printed. Thread-safe: one
/// connection behind a mutex (a blocking read holds it for up to `block`).
class redis_stream_reader {
 public:
  [[nodiscard]] static expected<redis_stream_reader, redis_error> open(redis_stream_reader_options options);

  redis_stream_reader(redis_stream_reader&&) noexcept;
  redis_stream_reader& operator=(redis_stream_reader&&) noexcept;
  ~redis_stream_reader();

  /// Up to `count` entries: this consumer's pending ones while there are any,
  /// then new ones, waiting up to `block` for one to arrive (0: do not wait).
  /// Empty when there is nothing.
  [[nodiscard]] expected<std::vector<redis_stream_entry>, redis_error> read(
      std::size_t count, std::chrono::milliseconds block = std::chrono::milliseconds(0));

  /// Acknowledges entries: they leave the group's pending list for good.
  /// Returns how many were pending (0 for an id already acknowledged).
  [[nodiscard]] expected<std::size_t, redis_error> ack(std::string_view id);
  [[nodiscard]] expected<std::size_t, redis_error> ack(std::span<const std::string> ids);

  /// Takes over up to `count` entries that other consumers of the group (dead
  /// replayers) read and left unacknowledged for at least `min_idle`
  /// (XAUTOCLAIM, Redis 6.2+). They become this consumer's pending entries;
  /// ack() them when done. Successive calls walk the pending list.
  [[nodiscard]] expected<std::vector<redis_stream_entry>, redis_error> claim_idle(std::chrono::milliseconds min_idle,
                                                                                std::size_t count);

  /// How many entries the whole group has delivered and not had acknowledged.
  [[nodiscard]] expected<std::uint64_t, redis_error> pending_count();

  [[nodiscard]] const redis_stream_reader_options& options() const noexcept;

 private:
  struct impl;
  explicit redis_stream_reader(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
