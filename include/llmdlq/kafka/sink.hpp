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

/// The record kafka_sink produces for `e` (key, value and headers as
/// documented at the top of this file).
[[nodiscard]] kafka_record to_kafka_record(const envelope& e, std::string topic);

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
  kafka_sink(std::unique_ptr<kafka_producer> producer, std::string topic) noexcept;
  std::unique_ptr<kafka_producer> producer_;
  std::string topic_;
};

LLMDLQ_END_NAMESPACE
