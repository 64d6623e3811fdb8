// SPDX-License-Identifier: MIT
// The Kafka dead-letter topic: a sink that produces each envelope with
// kafka_producer and returns only once the brokers acknowledged it.
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
//
//   With kafka_sink_options::dialects, the headers Kafka Connect's and
//   Spring Kafka's dead-letter topics carry are written beside them, so
//   that the tools an operator already runs on those topics read llmdlq's
//   (see kafka_dlq_dialects).
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/kafka/producer.hpp"
#include "llmdlq/kafka/properties.hpp"
#include "llmdlq/sink.hpp"

LLMDLQ_BEGIN_NAMESPACE

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

/// Kafka Connect's dead-letter headers (DeadLetterQueueReporter, with
/// `errors.deadletterqueue.context.headers.enable`): UTF-8 text, numbers in decimal.
namespace kafka_connect_header_names {
inline constexpr std::string_view topic = "__connect.errors.topic";
inline constexpr std::string_view partition = "__connect.errors.partition";
inline constexpr std::string_view offset = "__connect.errors.offset";
inline constexpr std::string_view connector_name = "__connect.errors.connector.name";
inline constexpr std::string_view task_id = "__connect.errors.task.id";
inline constexpr std::string_view stage = "__connect.errors.stage";
inline constexpr std::string_view class_name = "__connect.errors.class.name";
inline constexpr std::string_view exception_class = "__connect.errors.exception.class.name";
inline constexpr std::string_view exception_message = "__connect.errors.exception.message";
}  // namespace kafka_connect_header_names

/// Spring Kafka's dead-letter headers (DeadLetterPublishingRecoverer,
/// KafkaHeaders.DLT_*): text in UTF-8, the partition a 4-byte and the offset
/// an 8-byte big-endian integer, as Java's ByteBuffer writes them.
namespace spring_dlt_header_names {
inline constexpr std::string_view original_topic = "kafka_dlt-original-topic";
inline constexpr std::string_view original_partition = "kafka_dlt-original-partition";
inline constexpr std::string_view original_offset = "kafka_dlt-original-offset";
/// The failed record's timestamp in milliseconds, an 8-byte big-endian integer
/// (-1 when it had none); read by kafka_replay_source, not written.
inline constexpr std::string_view original_timestamp = "kafka_dlt-original-timestamp";
inline constexpr std::string_view exception_fqcn = "kafka_dlt-exception-fqcn";
inline constexpr std::string_view exception_message = "kafka_dlt-exception-message";
}  // namespace spring_dlt_header_names

/// Which other dead-letter conventions a record also speaks. Each writes
/// the input's topic, partition and offset (those the envelope's origin
/// has), the failure as an exception class `llmdlq.<category>` (so
/// `llmdlq.schema`), and the failure's message; Connect's also the origin's
/// service as the connector, its worker as the task and `llmdlq` as the
/// stage and class.
struct kafka_dlq_dialects {
  bool connect = false;  ///< kafka_connect_header_names
  bool spring = false;   ///< spring_dlt_header_names
};

/// The record kafka_sink produces for `e` (key, value and headers as
/// documented at the top of this file), with the dialects' headers after llmdlq's.
[[nodiscard]] kafka_record to_kafka_record(const envelope& e, std::string topic,
                                           const kafka_dlq_dialects& dialects = {});

struct kafka_sink_options {
  kafka_properties properties;  ///< librdkafka properties, as for kafka_producer
  std::string topic = "receipts-dead-letter-queue";
  std::chrono::milliseconds delivery_timeout{30000};
  kafka_log_function log;
  kafka_dlq_dialects dialects{};  ///< other tools' dead-letter headers, also written
};

/// Dead letters on a Kafka topic. publish produces to_kafka_record(e) and
/// returns after the delivery report, with the location
/// `kafka:<topic>/<partition>@<offset>`; a failed delivery is a sink_error,
/// so pipeline::handle answers `retry` and the input stays uncommitted.
/// publish_batch produces the whole batch, then waits for every report.
///
/// The producer's kafka_errors become sink_errors of the same name;
/// invalid_configuration becomes `rejected` and a fatal producer error
/// `unavailable` (the next publish starts a new producer).
///
/// Kafka cannot tell a re-published envelope from a new one: `duplicate` is
/// always false, and a consumer of the topic (kafka_moderation_consumer) removes
/// duplicates by dlq_id.
///
/// Thread-safe. Throws nothing but std::bad_alloc.
class kafka_sink final : public sink {
 public:
  [[nodiscard]] static expected<kafka_sink, sink_error> open(kafka_sink_options options);

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

  [[nodiscard]] std::string_view kind() const noexcept override { return "kafka"; }

 private:
  kafka_sink(std::unique_ptr<kafka_producer> producer, std::string topic, kafka_dlq_dialects dialects) noexcept;
  std::unique_ptr<kafka_producer> producer_;
  std::string topic_;
  kafka_dlq_dialects dialects_;
};

LLMDLQ_END_NAMESPACE
