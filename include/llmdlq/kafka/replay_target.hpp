// SPDX-License-Identifier: MIT
// A Kafka topic as a replay's target: each recovered or corrected payload
// produced once, keyed by its idempotency key, acknowledged before the
// ledger says delivered.
// Part of the llmdlq::kafka library (librdkafka).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/kafka/properties.hpp"
#include "llmdlq/replay_error.hpp"
#include "llmdlq/replay_target.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// The headers a delivery carries beside its key (the idempotency key) and
/// its value (the output): UTF-8 text, each only when the entry has it.
namespace kafka_target_header_names {
inline constexpr std::string_view source = "llmdlq-source";  ///< `replay`, `operator`, ...
inline constexpr std::string_view dlq_id = "dlq-id";         ///< as kafka_sink names it
inline constexpr std::string_view resolved_by = "resolved-by";
inline constexpr std::string_view note = "note";
}  // namespace kafka_target_header_names

struct kafka_target_options {
  /// librdkafka properties for the producer and for the consumer that
  /// looks for earlier deliveries: `bootstrap.servers` at least. The
  /// producer is kafka_producer's (idempotent, `acks=all`).
  kafka_properties properties;
  std::string topic = "receipts";
  /// How long a delivery may wait for the brokers' acknowledgement.
  std::chrono::milliseconds delivery_timeout{30000};
  /// How long opening (the topic's metadata) and a look for earlier
  /// deliveries may wait for the cluster.
  std::chrono::milliseconds read_timeout{10000};
  /// How far the clocks of the ledger's store, this host and the brokers may
  /// disagree: a look for an earlier delivery of an entry starts this much
  /// before the entry was recorded.
  std::chrono::minutes clock_skew{5};
  kafka_log_function log;
};

/// Produces each payload as one record: the idempotency key as its key (so
/// a key's records share a partition), the output as its value (as the
/// ledger holds it), and kafka_target_header_names as headers.
///
/// Once per key, though Kafka itself cannot drop a record sent twice by two
/// producers: a delivery the ledger recorded before this target opened
/// (one a killed replay may have produced without confirming it), or one
/// whose send here may have gone through (a timeout, a fatal producer
/// error), is first looked for in the topic, with a `read_committed`
/// consumer, from when the ledger recorded it (less clock_skew) to the end of
/// every partition; a record with its key found there counts as the
/// delivery. One look covers every entry recorded after its start, so a
/// replay that resumes reads that stretch of the topic once, and keeps its
/// keys in memory while it lasts. Deliveries recorded after the target opened
/// (with no doubtful send) are produced without a look.
///
/// Errors: target_unavailable when the brokers did not acknowledge in time or
/// could not be reached (the ledger keeps the payload undelivered);
/// target_refused for a record the brokers refuse (too large, a topic that
/// does not exist or may not be written) or an output that is not JSON.
/// Not thread-safe: one replay or delivery at a time writes through it.
/// Nothing throws but std::bad_alloc.
class kafka_replay_target final : public replay_target {
 public:
  /// Creates the producer and reads the topic's partitions: target_refused
  /// for a property librdkafka refuses or a topic the cluster refuses,
  /// target_unavailable when the cluster does not answer in time.
  [[nodiscard]] static expected<kafka_replay_target, replay_error> open(kafka_target_options options);

  kafka_replay_target(kafka_replay_target&&) noexcept;
  kafka_replay_target& operator=(kafka_replay_target&&) noexcept;
  ~kafka_replay_target() override;

  [[nodiscard]] expected<void, replay_error> deliver(const ledger_entry& entry) override;

  [[nodiscard]] const kafka_target_options& options() const noexcept;

 private:
  struct impl;
  explicit kafka_replay_target(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
