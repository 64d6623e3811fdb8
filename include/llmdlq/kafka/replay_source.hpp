// SPDX-License-Identifier: MIT
// A Kafka dead-letter topic as a replay source: the envelopes on every
// partition, read by assignment, in the order of each partition; or, with a
// consumer group, those of the partitions the group gives this replayer,
// from the group's committed offsets. A topic is read-only: the replay's
// cursor, attempts and ledger live in its replay_state. It reads the
// dead-letter topics Kafka Connect and Spring Kafka write too.
// Part of the llmdlq::kafka library (librdkafka).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/kafka/error.hpp"
#include "llmdlq/kafka/properties.hpp"
#include "llmdlq/moderation_record.hpp"
#include "llmdlq/replay_source.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Which topic to read, and how.
struct kafka_topic_options {
  /// librdkafka consumer properties: `bootstrap.servers` at least. llmdlq
  /// sets `enable.auto.commit=false` and `enable.partition.eof=true`;
  /// without a `group`, `group.id` (which librdkafka wants, though no group
  /// is joined) defaults to `llmdlq-replay`.
  kafka_properties properties;
  std::string topic = "receipts-dead-letter-queue";
  /// The consumer group the replay source joins (its `group.id`), read by
  /// kafka_replay_source only. Empty: no group is joined, and the source
  /// reads every partition. Replayers in one group split the topic's
  /// partitions as Kafka splits a group's work.
  std::string group;
  /// How long opening (the topic's metadata) and each read may wait for the cluster.
  std::chrono::milliseconds timeout{10000};
  kafka_log_function log;
};

/// Positions are `partition:offset` pairs, partitions ascending, joined by
/// commas (`0:41,2:7`): the last message read on each partition. A letter's
/// position names every partition read so far, so a cursor saved after any
/// letter resumes after it. update, recheck and record_call have nothing
/// to write and answer `ours`.
///
/// A message whose value is an envelope is that letter (llmdlq's own
/// records carry the other dialects' headers too: the envelope wins).
/// Otherwise a message with Kafka Connect's dead-letter headers
/// (`__connect.errors.topic`, `.partition`, `.offset`) or Spring Kafka's
/// (`kafka_dlt-original-topic`, `-partition`, `-offset`) is a foreign
/// letter: its envelope is made as process_llm_response would make it for
/// the value, judged against no schema without repair, keyed
/// `<topic>/<partition>@<offset>` of the record that failed (see the Kafka
/// section of docs/worker-and-sinks.md). Other messages, and those whose
/// dialect headers are incomplete or malformed, are skipped and counted, each
/// with why.
///
/// With a `group`, the source subscribes to the topic in that group
/// (`enable.auto.commit=false`, `auto.offset.reset=earliest` unless the
/// properties say otherwise) and reads only the partitions the group
/// assigns it, each from the group's committed offset, or from just after
/// the offset `after` names for it when that is further on; what `after`
/// says of other partitions is ignored. passed() commits, synchronously,
/// the offset after the last letter done on each partition it still holds.
/// Letters read but not passed when a rebalance moves their partition are
/// read again by its new owner (reading is at-least-once: the replay
/// state's claims, attempts and ledger keep each payload's calls and
/// delivery exact). Replayers of one group share a replay_state; each takes
/// the replay lease under its own owner name.
///
/// Not thread-safe, but for passed(), which may come from another thread
/// while one is in next() (as a replayer's workers call it): one replay
/// reads one source. Throws nothing but std::bad_alloc.
class kafka_replay_source final : public replay_source {
 public:
  /// Connects and reads the topic's partitions. Fails with
  /// invalid_configuration for a property librdkafka refuses or an empty
  /// topic name, rejected for a topic the cluster refuses (unknown, not
  /// authorized), and unavailable or timeout when the cluster does not
  /// answer. Reading never creates the topic.
  [[nodiscard]] static expected<kafka_replay_source, kafka_error> open(kafka_topic_options options);

  kafka_replay_source(kafka_replay_source&&) noexcept;
  kafka_replay_source& operator=(kafka_replay_source&&) noexcept;
  ~kafka_replay_source() override;

  /// Up to `limit` letters after `after` (from each partition's beginning
  /// when empty). Empty when every partition is read to its end; with a
  /// group, every partition the group assigns this source (waiting for the
  /// group to assign them, at most the options' timeout). Fails with
  /// source_refused when the cluster refuses the topic (unknown, not
  /// authorized), source_unavailable when it fails or does not answer in
  /// the options' timeout.
  [[nodiscard]] expected<std::vector<stored_letter>, replay_error> next(std::string_view after,
                                                                        std::size_t limit) override;
  [[nodiscard]] expected<letter_standing, replay_error> update(const stored_letter&, const envelope&,
                                                               const recovery_result&) override {
    return letter_standing::ours;
  }
  [[nodiscard]] expected<letter_standing, replay_error> recheck(const stored_letter&) override {
    return letter_standing::ours;
  }
  [[nodiscard]] expected<letter_standing, replay_error> record_call(const stored_letter&, const envelope&) override {
    return letter_standing::ours;
  }

  /// With a group, commits the offsets after `position`'s on the
  /// partitions the group assigns this source; without one, does nothing.
  /// A commit the group turns down because it is rebalancing is left out
  /// (the partition's next owner reads those letters again). Fails with
  /// source_unavailable when the cluster fails the commit otherwise.
  [[nodiscard]] expected<void, replay_error> passed(std::string_view position) override;
  /// With a group, the partitions the group assigns this source now,
  /// ascending; without one, every partition.
  [[nodiscard]] std::vector<std::int32_t> assigned() const;

  /// The topic this source reads.
  [[nodiscard]] const std::string& topic() const noexcept;
  /// Messages skipped so far because they held no letter.
  [[nodiscard]] std::size_t skipped() const noexcept;
  /// The first max_listed_unreadable of them, each named "partition P
  /// offset O" with why it is no letter.
  [[nodiscard]] const std::vector<unreadable_record>& skipped_messages() const noexcept;

 private:
  struct impl;
  explicit kafka_replay_source(std::unique_ptr<impl> state) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
