// SPDX-License-Identifier: MIT
// A Kafka DLQ topic as a replay source for `llmdlq replay kafka:TOPIC`: the
// envelopes on every partition, read without a consumer group. A topic is
// read-only: the replay's attempts and ledger live in its state store.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <llmdlq/llm/replayer.hpp>

namespace llmdlq::cli {

class kafka_replay_source final : public replay_source {
 public:
  /// `properties` are librdkafka's (bootstrap.servers, security, ...).
  static expected<kafka_replay_source, std::string> open(std::string topic,
                                                         std::map<std::string, std::string> properties);
  kafka_replay_source(kafka_replay_source&&) noexcept;
  kafka_replay_source& operator=(kafka_replay_source&&) noexcept;
  ~kafka_replay_source() override;

  /// Positions are `partition:offset` pairs joined by commas: the last letter
  /// read on each partition. Letters that are not envelopes are skipped.
  [[nodiscard]] expected<std::vector<stored_letter>, std::string> next(std::string_view after,
                                                                       std::size_t limit) override;
  // A topic keeps no records to update or to be acted on.
  [[nodiscard]] expected<letter_standing, std::string> update(const stored_letter&, const envelope&,
                                                              const recovery_result&) override {
    return letter_standing::ours;
  }
  [[nodiscard]] expected<letter_standing, std::string> recheck(const stored_letter&) override {
    return letter_standing::ours;
  }
  [[nodiscard]] expected<letter_standing, std::string> record_call(const stored_letter&, const envelope&) override {
    return letter_standing::ours;
  }

  /// Messages skipped because they held no envelope.
  [[nodiscard]] std::size_t skipped() const noexcept;

 private:
  struct impl;
  explicit kafka_replay_source(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

}  // namespace llmdlq::cli
