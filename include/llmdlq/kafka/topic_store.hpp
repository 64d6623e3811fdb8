// SPDX-License-Identifier: MIT
// A Kafka dead-letter topic read as a moderation store, for looking at a
// topic no consumer has stored yet (`llmdlq list|show|stats|top
// kafka:BROKERS/TOPIC`): every letter on the topic (Kafka Connect's and
// Spring Kafka's dead letters too, as kafka_replay_source reads them), read
// once when opened and kept in memory, the last copy of each dlq_id. A topic keeps no
// operator state: every letter is `pending`, and publishing, acting and
// recording traffic are refused. To moderate a topic, store it with
// kafka_moderation_consumer.
// Part of the llmdlq::kafka library (librdkafka).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/kafka/error.hpp"
#include "llmdlq/kafka/replay_source.hpp"
#include "llmdlq/moderation.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Queries run over the letters in memory, in list() order (created_at,
/// then dlq_id). Not thread-safe. Throws nothing but std::bad_alloc.
class kafka_topic_store final : public moderation_store {
 public:
  /// Reads all of the topic (the options' `group` is not joined). Fails as
  /// kafka_replay_source::open does, or when a read fails midway: rejected
  /// when the cluster refuses the topic, unavailable otherwise.
  [[nodiscard]] static expected<std::unique_ptr<kafka_topic_store>, kafka_error> open(kafka_topic_options options);

  /// Refused (sink_errc::rejected): the topic is read here, not written.
  [[nodiscard]] expected<receipt, sink_error> publish(const envelope& e) override;
  /// Refused (moderation_errc::store_unavailable): a topic keeps no operator state.
  [[nodiscard]] expected<moderation_record, moderation_error> act(const moderation_request& request) override;
  [[nodiscard]] expected<std::optional<moderation_record>, moderation_error> get(std::string_view dlq_id) override;
  [[nodiscard]] expected<std::vector<moderation_record>, moderation_error> list(moderation_status status,
                                                                                std::size_t limit) override;
  [[nodiscard]] expected<std::vector<moderation_record>, moderation_error> list_after(moderation_status status,
                                                                                      std::string_view after_created_at,
                                                                                      std::string_view after_dlq_id,
                                                                                      std::size_t limit) override;
  [[nodiscard]] expected<moderation_page, moderation_error> query(const moderation_query& query) override;
  [[nodiscard]] expected<dlq_statistics, moderation_error> statistics() override;
  using moderation_store::timeline;
  [[nodiscard]] expected<std::vector<dlq_timeline_bucket>, moderation_error> timeline(
      timestamp since, timestamp until, std::chrono::seconds width) override;
  /// Refused (moderation_errc::store_unavailable).
  [[nodiscard]] expected<void, moderation_error> record_traffic(timestamp at, std::uint64_t processed,
                                                                std::uint64_t dead_lettered) override;

  /// Messages on the topic that held no envelope.
  [[nodiscard]] std::size_t skipped() const noexcept { return skipped_; }
  /// The messages skipped, as records that do not read back: "partition P
  /// offset O" and why it is no envelope.
  [[nodiscard]] expected<unreadable_census, moderation_error> unreadable_records() override;

 private:
  kafka_topic_store() = default;
  std::string topic_;
  std::vector<moderation_record> records_;  ///< in list() order
  std::vector<envelope> envelopes_;         ///< records_[i]'s envelope
  std::size_t skipped_ = 0;
  std::vector<unreadable_record> skipped_messages_;
};

LLMDLQ_END_NAMESPACE
