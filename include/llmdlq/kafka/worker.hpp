// SPDX-License-Identifier: MIT
// A worker's read-judge-write loop on Kafka: it reads an input topic in a
// consumer group, turns each record into an accepted result or a dead letter
// with the host's handler, writes them to the output or the DLQ topic and
// commits the input, exactly once (in a Kafka transaction) or at least once.
// Part of the llmdlq::kafka library (librdkafka).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/kafka/error.hpp"
#include "llmdlq/kafka/properties.hpp"
#include "llmdlq/kafka/redrive_link.hpp"
#include "llmdlq/kafka/sink.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// One input record, as the worker hands it to the handler. The views point
/// into the record, which lives until the handler returns.
struct kafka_input {
  std::string_view topic;
  std::int32_t partition = -1;
  std::int64_t offset = -1;
  std::string_view key;  ///< empty when the record has none
  std::string_view value;
  /// Set when the record came back by a redrive (its headers carry the
  /// link): give it to apply_redrive(), so that a new failure is tied to
  /// the letter and the input keeps its idempotency key.
  std::optional<kafka_redrive> redrive;

  /// `<topic>/<partition>@<offset>`: the same for every attempt at this
  /// record, so a natural idempotency key (and the key of its result).
  [[nodiscard]] std::string position() const;
};

/// What becomes of one input: its accepted result, for the output topic, or
/// its dead letter, for the DLQ topic (exactly one of the two is set).
struct kafka_outcome {
  std::optional<std::string> result;
  std::optional<envelope> dead_letter;

  [[nodiscard]] static kafka_outcome accept(std::string result) { return {std::move(result), std::nullopt}; }
  [[nodiscard]] static kafka_outcome reject(envelope e) { return {std::nullopt, std::move(e)}; }
};

/// The host's judgement of one input: its outcome, or why it cannot be
/// judged now (a model that did not answer, say). A failure abandons the
/// whole batch: nothing of it is written or committed, and its inputs come
/// again on a later poll. Called on the thread that polls.
using kafka_handler = std::function<expected<kafka_outcome, std::string>(const kafka_input&)>;

struct kafka_worker_options {
  /// librdkafka properties for both the consumer and the producer;
  /// `bootstrap.servers` at least. `auto.offset.reset` defaults to
  /// `earliest`; llmdlq sets `enable.auto.commit=false`, and with a
  /// transactional_id `isolation.level=read_committed`, over whatever is
  /// given here.
  kafka_properties properties;
  std::string input_topic = "receipts-llm-responses";
  std::string output_topic = "receipts-extracted";
  std::string dlq_topic = "receipts-dead-letter-queue";
  std::string group = "receipts-worker";
  /// Non-empty: exactly once. Each batch's results, dead letters and input
  /// offsets are written in one Kafka transaction under this id. Give each
  /// worker instance its own id, the same across its restarts (a pod's name,
  /// say): a worker that starts with an id fences the one that had it and
  /// aborts what that one left open.
  /// Empty: at least once. The results and dead letters go through an
  /// idempotent kafka_producer, and the offsets are committed once the
  /// brokers acknowledged them: a crash in between writes them again.
  std::string transactional_id;
  std::size_t max_batch = 100;  ///< the most inputs one poll_once handles (one transaction)
  /// How long a delivery, a transaction (its records, offsets and commit),
  /// an abort, or joining the transaction coordinator may take in one
  /// poll_once. The transaction timeout the brokers enforce is twice this.
  std::chrono::milliseconds delivery_timeout{30000};
  kafka_dlq_dialects dialects{};  ///< as kafka_sink_options::dialects, for the dead letters
  kafka_log_function log;
};

/// What one poll_once wrote and committed.
struct kafka_batch_result {
  std::size_t accepted = 0;       ///< results written to the output topic
  std::size_t dead_lettered = 0;  ///< envelopes written to the DLQ topic

  [[nodiscard]] std::size_t committed() const noexcept { return accepted + dead_lettered; }
};

/// The loop of a worker that reads LLM responses from Kafka:
///
/// \code
///   const llmdlq::pipeline judge{*schema, config};  // no sink: the worker writes the dead letters
///   auto worker = llmdlq::kafka_worker::open(options, [&](const llmdlq::kafka_input& in)
///       -> llmdlq::expected<llmdlq::kafka_outcome, std::string> {
///     llmdlq::request_context context;
///     context.idempotency_key = in.position();
///     llmdlq::disposition d = judge.handle(in.value, context);
///     if (d.accepted) return llmdlq::kafka_outcome::accept(std::move(d.accepted->json));
///     return llmdlq::kafka_outcome::reject(std::move(*d.dead_letter));
///   });
///   while (running) {
///     auto done = worker->poll_once(std::chrono::milliseconds(200));
///     if (!done && done.error().code == llmdlq::kafka_errc::fenced) break;  // another instance took over
///   }
/// \endcode
///
/// Each poll_once takes up to max_batch records, calls the handler on each,
/// and then, exactly once: begins a transaction, produces each result
/// (keyed by the input's position()) or dead letter (to_kafka_record, as
/// kafka_sink writes it), adds the inputs' next offsets with the consumer
/// group's metadata (so that the offsets commit with the outputs or not at
/// all), and commits. A `read_committed` consumer of the output and DLQ
/// topics then sees one outcome per input whatever crashes: a transaction
/// left open by a killed worker is aborted when its successor (the same
/// transactional_id) starts, and its inputs are read again.
///
/// Errors; none loses an input:
/// - `aborted`: the handler failed, or the brokers refused part of the
///   transaction, or a rebalance took partitions mid-batch; the transaction
///   was aborted, the partitions are rewound to the batch's first records,
///   and the next poll goes on.
/// - `fatal`: the producer lost its transactional state, or a new one could
///   not be started; the batch is rewound and the next poll starts a new
///   producer (which aborts what was open). Rare; if it struck during a commit, whether that commit went
///   through is unknown, and the batch may be written twice.
/// - `fenced`: another producer has the transactional_id; the worker
///   stopped, and every later poll says `fenced` again.
/// - `timeout`, exactly once: the commit did not finish within
///   delivery_timeout and goes on in the background. Nothing is rewound:
///   the next poll finishes that commit before it reads anything (and
///   returns that batch's counts if it went through, or rewinds it if not).
/// - `unavailable`, `timeout`, `rejected`, at least once: the delivery of a
///   result or dead letter failed (as kafka_producer::send_batch), and the
///   batch is rewound; or the commit failed after they were written, and
///   the inputs come again only after a restart or a rebalance (a later
///   batch's commit covers them).
///
/// Not thread-safe: one thread polls. Run one worker per thread or process
/// in the same group to read partitions in parallel. Throws nothing itself
/// but std::bad_alloc; an exception from the handler propagates after the
/// batch's partitions are rewound.
class kafka_worker {
 public:
  /// Creates the consumer (subscribed to input_topic) and the producer; with
  /// a transactional_id, waits up to delivery_timeout for the transaction
  /// coordinator (init_transactions), which fences an older instance.
  /// invalid_configuration when librdkafka refuses a property, a topic name
  /// is empty or there is no handler; `fenced` or `timeout` when the
  /// coordinator refused or did not answer.
  [[nodiscard]] static expected<kafka_worker, kafka_error> open(kafka_worker_options options, kafka_handler handler);

  kafka_worker(kafka_worker&&) noexcept;
  kafka_worker& operator=(kafka_worker&&) noexcept;
  /// Leaves the group (close()).
  ~kafka_worker();

  /// Waits up to `timeout` for input records and handles those that came (at
  /// most max_batch) as one batch, which then takes up to delivery_timeout to
  /// write and commit. An empty result when nothing came. A commit an earlier
  /// poll left going on is finished first, and is this poll's result.
  [[nodiscard]] expected<kafka_batch_result, kafka_error> poll_once(std::chrono::milliseconds timeout);

  /// Leaves the consumer group, so that the partitions move to the group's
  /// other members at once. Further polls fail with `closed`.
  void close();

  [[nodiscard]] bool exactly_once() const noexcept;

 private:
  struct impl;
  explicit kafka_worker(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
