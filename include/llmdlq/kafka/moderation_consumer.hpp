// SPDX-License-Identifier: MIT
// The consumer of the dead-letter topic: it stores every envelope in a
// moderation store (status `pending`) and commits the record's offset only
// after the store said it is durable.
// Part of the llmdlq::kafka library (librdkafka).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/kafka/error.hpp"
#include "llmdlq/kafka/properties.hpp"
#include "llmdlq/moderation.hpp"
#include "llmdlq/sink.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct kafka_moderation_consumer_options {
  /// librdkafka consumer properties: `bootstrap.servers` at least.
  /// `group.id` defaults to `llmdlq-moderation` and `auto.offset.reset` to
  /// `earliest` (a new group reads the whole topic); llmdlq sets
  /// `enable.auto.commit=false` and `enable.auto.offset.store=false`.
  kafka_properties properties;
  std::string topic = "receipts-dead-letter-queue";
  /// After the store fails, the record's partition pauses this long, then the
  /// same record is tried again. Other partitions go on meanwhile.
  std::chrono::milliseconds retry_backoff{1000};
  /// How many records one poll_once handles at most.
  std::size_t max_records_per_poll = 100;
  /// The failure code of the poison envelope that stands for a record which
  /// is not an envelope.
  std::string unreadable_code = "dlq_unreadable_record";
  kafka_log_function log;
};

/// What poll_once or run did.
struct moderation_poll_result {
  std::size_t stored = 0;      ///< records stored as new rows, then committed
  std::size_t duplicates = 0;  ///< records the store already held (redeliveries): committed, no second row
  std::size_t failed = 0;      ///< the store failed: not committed; tried again after the backoff
  std::size_t unreadable = 0;  ///< of stored and duplicates: records that were not envelopes, stored as poison
  std::size_t commit_failures = 0;  ///< stored, but the commit failed: they come again, as duplicates
  std::optional<sink_error> last_store_error;   ///< the last error the store returned
  std::optional<kafka_error> last_kafka_error;  ///< the last consumer, rewind or commit error

  moderation_poll_result& operator+=(const moderation_poll_result& other);
};

/// Reads the dead-letter topic in a consumer group, with manual commits.
/// For each record, in partition order:
///
/// - an envelope (parse_envelope) is published to the store, which inserts a
///   `pending` row once per dlq_id; a redelivered record is a duplicate;
/// - a record that is not an envelope becomes one of category `poison`
///   (failure code `unreadable_code`, the record's bytes as raw response,
///   idempotency key `kafka:<topic>/<partition>@<offset>`, origin the
///   record's topic, partition and offset, created_at its timestamp), with a
///   dlq_id derived from where the record is, so that its redeliveries are
///   duplicates too: an operator sees it, and it blocks nothing;
/// - once the store returned, the record's offset is committed
///   synchronously. If the store failed, nothing is committed: the partition
///   is rewound to the record and paused for retry_backoff, then the record
///   comes again. Nothing is lost; duplicates are left to the store's
///   idempotence on dlq_id.
///
/// A consumer that dies between the store and the commit leaves the record
/// uncommitted: the group delivers it again and the store reports a
/// duplicate. An exception thrown by the store's publish behaves the same
/// way: the partition is rewound and the exception propagates.
///
/// Not thread-safe: one thread calls poll_once or run. To read partitions in
/// parallel, run one consumer per thread in the same group (the store must
/// then be thread-safe, as every built-in store is). Throws nothing itself
/// but std::bad_alloc.
class kafka_moderation_consumer {
 public:
  /// Subscribes to the topic in the group; the first polls join it. Waits up
  /// to 2 s for the topic's metadata first, so that joining needs no second
  /// rebalance (an unreachable cluster is not an error: polls wait for it).
  /// The store (normally a moderation_store; any sink idempotent on dlq_id
  /// will do) must outlive the consumer. invalid_configuration when
  /// librdkafka refuses a property or the topic name is empty.
  [[nodiscard]] static expected<kafka_moderation_consumer, kafka_error> open(sink& store,
                                                                           kafka_moderation_consumer_options options);

  kafka_moderation_consumer(kafka_moderation_consumer&&) noexcept;
  kafka_moderation_consumer& operator=(kafka_moderation_consumer&&) noexcept;
  /// Leaves the group (close()).
  ~kafka_moderation_consumer();

  /// Waits up to `timeout` for records and handles those that came, at most
  /// max_records_per_poll.
  moderation_poll_result poll_once(std::chrono::milliseconds timeout);

  /// Calls poll_once until `stop` is requested; returns the totals.
  moderation_poll_result run(std::stop_token stop, std::chrono::milliseconds poll_timeout = std::chrono::milliseconds(200));

  /// Leaves the consumer group, committing nothing, so that the partitions
  /// move to the group's other members at once. Further polls return nothing.
  void close();

 private:
  struct impl;
  explicit kafka_moderation_consumer(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
