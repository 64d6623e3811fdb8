// SPDX-License-Identifier: MIT
// A durable Kafka producer: idempotent, and each send returns only once the
// brokers acknowledged the record. kafka_sink publishes through it; a worker
// sends its accepted results with it too.
// Part of the llmdlq::kafka library (librdkafka).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/kafka/error.hpp"
#include "llmdlq/kafka/properties.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct kafka_header {
  std::string name;
  std::string value;
  friend bool operator==(const kafka_header&, const kafka_header&) = default;
};

/// One record to produce.
struct kafka_record {
  std::string topic;
  std::int32_t partition = -1;  ///< -1: the partitioner chooses, by the key
  std::string key;              ///< empty: no key (the partitioner spreads such records)
  std::string value;
  std::vector<kafka_header> headers;
};

/// Where the brokers wrote a record.
struct kafka_delivery {
  std::string topic;
  std::int32_t partition = -1;
  std::int64_t offset = -1;
  friend bool operator==(const kafka_delivery&, const kafka_delivery&) = default;
};

struct kafka_producer_options {
  /// librdkafka properties; `bootstrap.servers` at least. llmdlq sets
  /// `enable.idempotence=true`, `acks=all` and `message.timeout.ms` (from
  /// delivery_timeout) over whatever is given here, and `linger.ms=0` unless
  /// given (a send waits for its report, so lingering only adds latency).
  kafka_properties properties;
  /// How long librdkafka may try to deliver a record (retries included)
  /// before its delivery fails: the longest a send waits.
  std::chrono::milliseconds delivery_timeout{30000};
  kafka_log_function log;
};

/// An idempotent producer whose send returns only after the delivery report:
/// a record it returns a kafka_delivery for is acknowledged by all in-sync
/// replicas. A failed delivery is a kafka_error: `timeout` when the record
/// may have been written (librdkafka's "possibly persisted"), `unavailable`
/// when it was not, `rejected` when the brokers refused it (too large,
/// unknown topic, not authorized), `fatal` when the idempotent producer lost
/// its guarantees.
///
/// Thread-safe: any number of threads may send at once. After a fatal
/// producer error (rare) the send that saw it fails and the next one starts
/// a new librdkafka producer. Throws nothing but std::bad_alloc.
class kafka_producer {
 public:
  /// Creates the librdkafka producer; connecting to the brokers happens in
  /// the background. invalid_configuration when librdkafka refuses a property.
  [[nodiscard]] static expected<kafka_producer, kafka_error> open(kafka_producer_options options);

  kafka_producer(kafka_producer&&) noexcept;
  kafka_producer& operator=(kafka_producer&&) noexcept;
  /// Waits up to the delivery timeout for records still in flight (only
  /// those of sends that gave up waiting), then drops the rest.
  ~kafka_producer();

  /// Produces one record and waits for its delivery report.
  [[nodiscard]] expected<kafka_delivery, kafka_error> send(const kafka_record& record);

  /// Produces every record, then waits for all their reports; the
  /// deliveries are in the records' order. On error some records may have
  /// been written: send them again (a consumer must expect duplicates of
  /// records, as with any at-least-once producer).
  [[nodiscard]] expected<std::vector<kafka_delivery>, kafka_error> send_batch(std::span<const kafka_record> records);

  /// Waits until every record produced so far is delivered or failed.
  [[nodiscard]] expected<void, kafka_error> flush();

  /// Starts looking up `topic`'s partitions in the background, so that the
  /// first send to it does not wait for librdkafka's next scan of new topics
  /// (up to a second). kafka_sink does this for its topic.
  void prepare(std::string_view topic);

 private:
  struct impl;
  explicit kafka_producer(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
