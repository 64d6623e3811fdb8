// SPDX-License-Identifier: MIT
// The Kafka dead-letter topic: a sink that produces each envelope with an
// idempotent producer and returns only once the brokers acknowledged it, and
// the durable producer underneath, for a worker's accepted results.
// Part of the llmdlq::kafka library (librdkafka).
//
// A dead letter on the topic (`receipts-dead-letter-queue` by default):
//
//   key      the envelope's idempotency key (its dlq_id when that is empty), so
//            every attempt at one input lands on one partition, in order
//   value    the envelope's JSON, as serialize() writes it (schemas/envelope-v1.json)
//   headers  UTF-8 text, no terminating NUL, for consumers that route or
//            filter without parsing the value:
//
//     dlq-id            the envelope's dlq_id (a UUIDv7)            always
//     category          failure category: syntax, schema, poison, ...  always
//     triage            triage class: transient, deterministic, ...     always
//     failure-code      the failure code, e.g. ocr_structural_broken_json  always
//     envelope-version  "1"                                            always
//     schema-version    versions.schema                              when set
//     origin-topic      the input's topic                            when set
//     origin-partition  the input's partition, in decimal ASCII      when set
//     origin-offset     the input's offset, in decimal ASCII         when set
//
//   The value is the record: headers only repeat some of its fields. Each
//   header appears at most once; names are lowercase; kafka_header_names
//   holds them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/sink.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// librdkafka configuration properties, named as librdkafka names them
/// (`bootstrap.servers`, `security.protocol`, `linger.ms`, ...).
using kafka_properties = std::map<std::string, std::string>;

/// Receives librdkafka's log lines: the syslog level (3 error ... 7 debug),
/// the facility and the message. Called from librdkafka's threads: it must be
/// thread-safe. llmdlq itself never prints; without a function the lines are
/// dropped.
using kafka_log_function = std::function<void(int level, std::string_view facility, std::string_view message)>;

/// The names of the headers every dead letter carries (see the top of this file).
namespace kafka_header_names {
inline constexpr std::string_view dlq_id = "dlq-id";
inline constexpr std::string_view category = "category";
inline constexpr std::string_view triage = "triage";
inline constexpr std::string_view failure_code = "failure-code";
inline constexpr std::string_view envelope_version = "envelope-version";
inline constexpr std::string_view schema_version = "schema-version";
inline constexpr std::string_view origin_topic = "origin-topic";
inline constexpr std::string_view origin_partition = "origin-partition";
inline constexpr std::string_view origin_offset = "origin-offset";
}  // namespace kafka_header_names

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

/// The record kafka_sink produces for `e` (key, value and headers as
/// documented at the top of this file).
[[nodiscard]] kafka_record to_kafka_record(const envelope& e, std::string topic);

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
/// replicas. A failed, timed-out or rejected delivery is a sink_error:
/// `timeout` when the record may have been written (librdkafka's "possibly
/// persisted"), `unavailable` when it was not, `rejected` when the brokers
/// refused it (too large, unknown topic, not authorized).
///
/// Thread-safe: any number of threads may send at once. After a fatal
/// producer error (rare: the idempotent producer lost its guarantees) the
/// send that saw it fails and the next one starts a new librdkafka producer.
/// Throws nothing but std::bad_alloc.
class kafka_producer {
 public:
  [[nodiscard]] static expected<kafka_producer, sink_error> create(kafka_producer_options options);

  kafka_producer(kafka_producer&&) noexcept;
  kafka_producer& operator=(kafka_producer&&) noexcept;
  /// Waits up to the delivery timeout for records still in flight (only
  /// those of sends that gave up waiting), then drops the rest.
  ~kafka_producer();

  /// Produces one record and waits for its delivery report.
  [[nodiscard]] expected<kafka_delivery, sink_error> send(const kafka_record& record);

  /// Produces every record, then waits for all their reports; the
  /// deliveries are in the records' order. On error some records may have
  /// been written: send them again (a consumer must expect duplicates of
  /// records, as with any at-least-once producer).
  [[nodiscard]] expected<std::vector<kafka_delivery>, sink_error> send_batch(std::span<const kafka_record> records);

  /// Waits until every record produced so far is delivered or failed.
  [[nodiscard]] expected<void, sink_error> flush();

  /// Starts looking up `topic`'s partitions in the background, so that the
  /// first send to it does not wait for librdkafka's next scan of new topics
  /// (up to a second). kafka_sink does this for its topic.
  void prepare(std::string_view topic);

  struct impl;

 private:
  explicit kafka_producer(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

struct kafka_sink_options {
  kafka_properties properties;  ///< librdkafka properties, as for kafka_producer
  std::string topic = "receipts-dead-letter-queue";
  std::chrono::milliseconds delivery_timeout{30000};
  kafka_log_function log;
};

/// Dead letters on a Kafka topic. publish produces to_kafka_record(e) and
/// returns after the delivery report, with the location
/// `kafka:<topic>/<partition>@<offset>`; a failed delivery is a sink_error,
/// so pipeline::handle answers `retry` and the input stays uncommitted.
/// publish_batch produces the whole batch, then waits for every report.
///
/// Kafka cannot tell a re-published envelope from a new one: `duplicate` is
/// always false, and a consumer of the topic (kafka_moderation_consumer) removes
/// duplicates by dlq_id.
///
/// Thread-safe. Throws nothing but std::bad_alloc.
class kafka_sink final : public sink {
 public:
  [[nodiscard]] static expected<kafka_sink, sink_error> create(kafka_sink_options options);

  kafka_sink(kafka_sink&&) noexcept;
  kafka_sink& operator=(kafka_sink&&) noexcept;
  ~kafka_sink() override;

  [[nodiscard]] expected<receipt, sink_error> publish(const envelope& e) override;
  [[nodiscard]] expected<std::vector<receipt>, sink_error> publish_batch(std::span<const envelope> batch) override;
  [[nodiscard]] expected<void, sink_error> flush() override;

  /// The producer the sink publishes with: a worker sends its accepted
  /// results through it too, over the same connections.
  [[nodiscard]] kafka_producer& producer() noexcept { return *producer_; }
  [[nodiscard]] const std::string& topic() const noexcept { return topic_; }

 private:
  kafka_sink(std::unique_ptr<kafka_producer> producer, std::string topic) noexcept;
  std::unique_ptr<kafka_producer> producer_;
  std::string topic_;
};

LLMDLQ_END_NAMESPACE
