// SPDX-License-Identifier: MIT
// A Kafka DLQ topic read as a moderation queue, for `llmdlq list|show|stats|top
// kafka:BROKERS/TOPIC`: every envelope on the topic, read once when opened
// and kept in memory. A topic keeps no operator state: every letter is
// `pending`, and acting, publishing and recording traffic are refused.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <llmdlq/moderation.hpp>

namespace llmdlq::cli {

class kafka_topic_store final : public moderation_store {
 public:
  /// Reads all of `topic` (every partition, without a consumer group).
  /// `properties` are librdkafka's (bootstrap.servers, security, ...).
  static expected<std::unique_ptr<kafka_topic_store>, std::string> open(std::string topic,
                                                                       std::map<std::string, std::string> properties);

  [[nodiscard]] expected<receipt, sink_error> publish(const envelope& e) override;
  [[nodiscard]] expected<moderation_record, moderation_error> act(const moderation_request& request) override;
  [[nodiscard]] expected<std::optional<moderation_record>, moderation_error> get(std::string_view dlq_id) override;
  [[nodiscard]] expected<std::vector<moderation_record>, moderation_error> list(moderation_status status,
                                                                              std::size_t limit) override;
  [[nodiscard]] expected<std::vector<moderation_record>, moderation_error> list_after(
      moderation_status status, std::string_view after_created_at, std::string_view after_dlq_id,
      std::size_t limit) override;
  [[nodiscard]] expected<moderation_page, moderation_error> query(const moderation_query& query) override;
  [[nodiscard]] expected<dlq_statistics, moderation_error> statistics() override;
  using moderation_store::timeline;
  [[nodiscard]] expected<std::vector<dlq_timeline_bucket>, moderation_error> timeline(
      timestamp since, timestamp until, std::chrono::seconds width) override;
  [[nodiscard]] expected<void, moderation_error> record_traffic(timestamp at, std::uint64_t processed,
                                                                std::uint64_t dead_lettered) override;

 private:
  kafka_topic_store() = default;
  std::string topic_;
  /// The letters in list() order (created_at, dlq_id), the last copy of each dlq_id.
  std::vector<moderation_record> records_;
  std::vector<envelope> envelopes_;  ///< records_[i]'s envelope
};

}  // namespace llmdlq::cli
