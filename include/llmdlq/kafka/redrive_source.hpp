// SPDX-License-Identifier: MIT
// Redrive for inputs read from Kafka: a dead letter's original record read
// back by its origin (topic, partition, offset) and produced again, with
// headers that link the input to the letter (llmdlq/kafka/redrive_link.hpp).
// Part of the llmdlq::kafka library (librdkafka).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/field_cipher.hpp"
#include "llmdlq/kafka/producer.hpp"
#include "llmdlq/kafka/properties.hpp"
#include "llmdlq/kafka/redrive_link.hpp"
#include "llmdlq/redrive_source.hpp"
#include "llmdlq/replay_error.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct kafka_redrive_options {
  /// librdkafka properties of the consumer that reads the original records
  /// and of the producer that sends them again: `bootstrap.servers` at least.
  kafka_properties properties;
  /// Where every input goes; empty: back to its letter's origin topic.
  std::string topic;
  /// Opens a letter's sealed original input when its record is gone (see
  /// stored_original_input()); null: only an unsealed, unredacted stored
  /// input can stand in for it.
  const field_cipher* cipher = nullptr;
  /// Send a record read back only when it is the letter's input: its value
  /// hashes to the letter's original input or raw response. Another record
  /// at the same place (a topic deleted and made again, another cluster's
  /// offsets) counts as gone. false: trust the origin's offset.
  bool verify_records = true;
  /// How long reading one original record may wait for the cluster.
  std::chrono::milliseconds read_timeout{10000};
  std::chrono::milliseconds delivery_timeout{30000};
  kafka_log_function log;
};

/// fetch() reads the record at the letter's origin (topic, partition,
/// offset) with a `read_committed` consumer: its key, value and headers are
/// what is sent again, once its value is found to be the letter's input
/// (verify_records). When the record is gone (retention, compaction) or
/// the letter names no Kafka origin, the letter's stored original input
/// stands in for it (stored_original_input(); the key is then the letter's
/// idempotency key), and when there is none the letter is refused with the
/// reason. send() produces to the origin topic (or options.topic) through
/// an idempotent producer, acknowledged before it returns, with the
/// original's headers (any earlier redrive link replaced) and the link
/// (kafka_redrive_header_names: the letter's dlq_id, the attempt and the
/// letter's idempotency key).
///
/// Not thread-safe: one redrive at a time. Nothing throws but std::bad_alloc.
class kafka_redrive_source final : public redrive_source {
 public:
  /// Creates the consumer and the producer: target_refused for a property
  /// librdkafka refuses.
  [[nodiscard]] static expected<kafka_redrive_source, replay_error> open(kafka_redrive_options options);

  kafka_redrive_source(kafka_redrive_source&&) noexcept;
  kafka_redrive_source& operator=(kafka_redrive_source&&) noexcept;
  ~kafka_redrive_source() override;

  [[nodiscard]] expected<redrive_input, replay_error> fetch(const envelope& letter) override;
  [[nodiscard]] expected<void, replay_error> send(const redrive_input& input, const redrive_reference& link) override;

 private:
  struct impl;
  explicit kafka_redrive_source(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
