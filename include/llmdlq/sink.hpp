// SPDX-License-Identifier: MIT
// Where dead-letter envelopes go: the interface a host implements for its own
// transport, and what publishing returns.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/error_category.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Proof that an envelope is durably stored.
struct receipt {
  std::string dlq_id;      ///< of the stored record (on a duplicate: the one stored before)
  bool duplicate = false;  ///< the sink already held it: an idempotent re-publish
  std::string location;    ///< where, in the sink's terms (file and line, row, topic/partition@offset)
  friend bool operator==(const receipt&, const receipt&) = default;
};

/// Why a sink could not store an envelope.
enum class sink_errc : std::uint8_t {
  unavailable,  ///< the store or server cannot be reached
  io_error,     ///< a read, write or sync failed
  timeout,      ///< no confirmation in time: the envelope may or may not be stored
  rejected,     ///< the store refused the record (constraint, size, permissions): permanent
  closed,       ///< the sink was closed
  /// open(): the file is a symbolic link, group or others can write it,
  /// another user owns it or a directory above it; it stays refused until
  /// it is fixed (the message names the file, its owner and mode)
  unsafe_file,
};

LLMDLQ_END_NAMESPACE
template <>
struct std::is_error_code_enum<llmdlq::sink_errc> : std::true_type {};
LLMDLQ_BEGIN_NAMESPACE

namespace detail {
template <>
struct errc_table<sink_errc> {
  static constexpr const char* category = "llmdlq.sink";
  static constexpr std::string_view unknown = "unknown";
  static constexpr bool has_permanence = true;
  static constexpr errc_entry<sink_errc> entries[] = {
      {sink_errc::unavailable, "unavailable"},
      {sink_errc::io_error, "io_error"},
      {sink_errc::timeout, "timeout"},
      {sink_errc::rejected, "rejected", true},
      {sink_errc::closed, "closed"},
      {sink_errc::unsafe_file, "unsafe_file", true},
  };
};
}  // namespace detail

/// Whether publishing the same envelope again can never succeed: the host
/// must not retry it forever (pipeline sends it to its fallback sink).
/// A std::error_code of it says the same by comparing equal to
/// failure_condition::permanent.
[[nodiscard]] constexpr bool is_permanent(sink_errc code) noexcept { return detail::errc_permanent(code); }

/// The enumerator's name ("rejected"), also the message() of its
/// std::error_code, whose category is named "llmdlq.sink".
[[nodiscard]] constexpr std::string_view to_string(sink_errc code) noexcept { return detail::errc_name(code); }

struct sink_error {
  sink_errc code = sink_errc::unavailable;
  std::string message;
};

/// A dead-letter destination. Every publish returns only after the record is
/// durable (synced to disk, committed, acknowledged), or with an error: then
/// the host must not commit its input, and retries later (unless the error
/// is_permanent()).
///
/// One failure is stored once. An envelope's dlq_id is derived from its
/// idempotency key and attempt (dlq_id.hpp), so a retry of the same failure
/// carries the same id. The built-in sinks keep this contract:
/// - memory_sink, jsonl_file_sink (which indexes its file when it opens it),
///   sqlite_store, postgres_store and redis_stream_sink store a dlq_id once;
///   the SQL stores and Redis also recognise idempotency key + attempt.
///   Publishing a stored envelope again returns a receipt marked `duplicate`
///   that names the stored record's dlq_id and location.
/// - kafka_sink is at-least-once: a retry after a lost acknowledgement can
///   write a second copy, with the same dlq_id in its `dlq-id` header and
///   the same message key, so every consumer can drop it (kafka_moderation_consumer
///   does, through its store).
class sink {
 public:
  virtual ~sink() = default;

  [[nodiscard]] virtual expected<receipt, sink_error> publish(const envelope& e) = 0;

  /// Publishes several envelopes, in one transaction or sync where the sink
  /// can. On error none of the receipts is to be trusted: retry the batch.
  [[nodiscard]] virtual expected<std::vector<receipt>, sink_error> publish_batch(std::span<const envelope> batch) {
    std::vector<receipt> receipts;
    receipts.reserve(batch.size());
    for (const auto& e : batch) {
      auto r = publish(e);
      if (!r) return unexpected(std::move(r.error()));
      receipts.push_back(std::move(*r));
    }
    return receipts;
  }

  /// Waits for everything published to be durable (a no-op for sinks whose
  /// publish already waits).
  [[nodiscard]] virtual expected<void, sink_error> flush() { return {}; }

  /// What kind of sink this is (`memory`, `jsonl`, `kafka`, ...): the
  /// `sink` label of its metrics unless the host names it (sink_handle::named).
  [[nodiscard]] virtual std::string_view kind() const noexcept { return "custom"; }
};

LLMDLQ_END_NAMESPACE
