// SPDX-License-Identifier: MIT
// kafka_worker on librdkafka: a consumer-group member that commits by hand,
// and either a transactional producer (exactly once) or kafka_producer
// (at least once). A batch is gathered, judged, then written: a transaction
// is open only while its records are produced and committed.
#include "llmdlq/config.hpp"
#include "llmdlq/kafka/worker.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "client_calls.hpp"
#include "kafka_common.hpp"

LLMDLQ_BEGIN_NAMESPACE

using namespace kafka_detail;

std::string kafka_input::position() const { return fmt::format("{}/{}@{}", topic, partition, offset); }

namespace {

using clock = std::chrono::steady_clock;

struct error_deleter {
  void operator()(rd_kafka_error_t* error) const noexcept { rd_kafka_error_destroy(error); }
};
using error_ptr = std::unique_ptr<rd_kafka_error_t, error_deleter>;

struct group_metadata_deleter {
  void operator()(rd_kafka_consumer_group_metadata_t* metadata) const noexcept {
    rd_kafka_consumer_group_metadata_destroy(metadata);
  }
};

int millis(std::chrono::milliseconds timeout) {
  return static_cast<int>(std::clamp<std::int64_t>(timeout.count(), 0, 24 * 3600 * 1000));
}

std::string_view bytes_of(const void* data, std::size_t size) {
  return data == nullptr ? std::string_view() : std::string_view(static_cast<const char*>(data), size);
}

kafka_error aborted(std::string message) { return {kafka_errc::aborted, std::move(message)}; }

// A batch: the records polled, and what each partition's offsets were.
struct batch {
  std::vector<message_ptr> messages;
  std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> span;  // partition: first and last offset

  void add(message_ptr m) {
    auto [at, fresh] = span.try_emplace(m->partition, m->offset, m->offset);
    if (!fresh) at->second = {std::min(at->second.first, m->offset), std::max(at->second.second, m->offset)};
    messages.push_back(std::move(m));
  }
};

}  // namespace

struct kafka_worker::impl {
  kafka_worker_options options;
  kafka_handler handler;
  handle_context context{&options.log, this};
  rd_kafka_t* consumer = nullptr;
  rd_kafka_t* transactional = nullptr;    // exactly once; null until made, and after a fatal error
  std::optional<kafka_producer> durable;  // at least once
  bool closed = false;
  bool fenced = false;
  bool revoked = false;  // a rebalance took partitions while a batch was gathered
  // A batch whose commit did not finish in time. It may yet commit, so it
  // is neither rewound nor read past: the next poll finishes the commit
  // first (librdkafka refuses any other transactional call until then).
  struct uncommitted {
    batch inputs;
    kafka_batch_result counts;
  };
  std::optional<uncommitted> unsettled_commit;
  bool unsettled_abort = false;  // an abort did not finish in time: the next poll finishes it

  impl() = default;
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl() {
    if (consumer != nullptr) {
      if (!closed) rd_kafka_consumer_close(consumer);
      rd_kafka_destroy(consumer);
    }
    drop_producer();
  }

  [[nodiscard]] bool exactly_once() const noexcept { return !options.transactional_id.empty(); }

  void drop_producer() {
    unsettled_commit.reset();
    unsettled_abort = false;
    if (transactional == nullptr) return;
    rd_kafka_destroy(transactional);
    transactional = nullptr;
  }

  static void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions,
                           void* opaque) {
    auto* self = static_cast<impl*>(static_cast<handle_context*>(opaque)->owner);
    if (err != RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS && partitions->cnt > 0) self->revoked = true;
    follow_rebalance(rk, err, partitions);
  }

  expected<void, kafka_error> open_consumer() {
    kafka_properties properties = options.properties;
    properties.try_emplace("auto.offset.reset", "earliest");
    if (exactly_once()) properties.insert_or_assign("isolation.level", "read_committed");
    auto conf = make_conf(
        properties,
        {{"group.id", options.group}, {"enable.auto.commit", "false"}, {"enable.auto.offset.store", "false"}},
        &context);
    if (!conf) return unexpected(std::move(conf.error()));
    rd_kafka_conf_set_rebalance_cb(conf->get(), on_rebalance);
    char errstr[512];
    consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf->get(), errstr, sizeof errstr);
    if (consumer == nullptr) {
      return unexpected(kafka_error{kafka_errc::invalid_configuration, fmt::format("kafka: consumer: {}", errstr)});
    }
    (void)conf.value().release();  // rd_kafka_new owns it now
    rd_kafka_poll_set_consumer(consumer);
    partition_list_ptr topics(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(topics.get(), options.input_topic.c_str(), RD_KAFKA_PARTITION_UA);
    if (const rd_kafka_resp_err_t err = rd_kafka_subscribe(consumer, topics.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return unexpected(kafka_error{kafka_errc::unavailable, fmt::format("kafka: cannot subscribe to {}: {}",
                                                                         options.input_topic, errstr_of(err))});
    }
    return {};
  }

  // A transactional producer whose transactions are ready to begin: what an
  // earlier producer with the id left open is aborted by now. A record fails
  // after delivery_timeout, which makes its transaction abortable; the
  // brokers time a transaction out only after twice that, so that they do
  // not fence this producer (a timed-out transaction's epoch bump looks like
  // a successor's) while a poll still finishes its commit.
  expected<void, kafka_error> open_transactional() {
    kafka_properties properties = options.properties;
    properties.try_emplace("message.timeout.ms",
                           std::to_string(std::max<std::int64_t>(1, options.delivery_timeout.count())));
    auto conf = make_conf(properties,
                          {{"transactional.id", options.transactional_id},
                           {"transaction.timeout.ms",
                            std::to_string(std::max<std::int64_t>(1000, 2 * options.delivery_timeout.count()))}},
                          &context);
    if (!conf) return unexpected(std::move(conf.error()));
    char errstr[512];
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf->get(), errstr, sizeof errstr);
    if (rk == nullptr) {
      return unexpected(kafka_error{kafka_errc::invalid_configuration, fmt::format("kafka: producer: {}", errstr)});
    }
    (void)conf.value().release();
    if (error_ptr e{rd_kafka_init_transactions(rk, millis(options.delivery_timeout))}) {
      const rd_kafka_resp_err_t code = rd_kafka_error_code(e.get());
      rd_kafka_destroy(rk);
      return unexpected(kafka_error{code == RD_KAFKA_RESP_ERR__FENCED      ? kafka_errc::fenced
                                    : code == RD_KAFKA_RESP_ERR__TIMED_OUT ? kafka_errc::timeout
                                                                           : kafka_errc::unavailable,
                                    fmt::format("kafka: initialising the transactions of {}: {}",
                                                options.transactional_id, rd_kafka_error_string(e.get()))});
    }
    transactional = rk;
    return {};
  }

  // Points each partition of the batch back at its first record, so that
  // the batch comes again. A partition no longer assigned is skipped: its
  // next owner starts at the committed offset.
  void rewind(const batch& b) const {
    if (b.span.empty()) return;
    partition_list_ptr list(rd_kafka_topic_partition_list_new(static_cast<int>(b.span.size())));
    for (const auto& [partition, span] : b.span) {
      rd_kafka_topic_partition_list_add(list.get(), options.input_topic.c_str(), partition)->offset = span.first;
    }
    if (rd_kafka_error_t* e = rd_kafka_seek_partitions(consumer, list.get(), millis(options.delivery_timeout))) {
      rd_kafka_error_destroy(e);
    }
  }

  // The input offsets the batch commits: each partition's next record.
  [[nodiscard]] partition_list_ptr next_offsets(const batch& b) const {
    partition_list_ptr list(rd_kafka_topic_partition_list_new(static_cast<int>(b.span.size())));
    for (const auto& [partition, span] : b.span) {
      rd_kafka_topic_partition_list_add(list.get(), options.input_topic.c_str(), partition)->offset = span.second + 1;
    }
    return list;
  }

  // Up to max_batch records, waiting up to `timeout` for the first.
  expected<batch, kafka_error> gather(std::chrono::milliseconds timeout) {
    batch b;
    revoked = false;
    const auto deadline = clock::now() + timeout;
    while (b.messages.size() < options.max_batch) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
      message_ptr m(rd_kafka_consumer_poll(consumer, b.messages.empty()
                                                         ? millis(std::max(left, std::chrono::milliseconds(0)))
                                                         : 0));
      if (!m) {
        if (!b.messages.empty() || clock::now() >= deadline) break;
        continue;
      }
      if (m->err == RD_KAFKA_RESP_ERR__FATAL) {
        rewind(b);
        return unexpected(kafka_error{kafka_errc::fatal,
                                      fmt::format("kafka: consumer: {}", rd_kafka_message_errstr(m.get()))});
      }
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) b.add(std::move(m));
    }
    if (revoked) {
      rewind(b);
      return unexpected(aborted("kafka: a rebalance took partitions while a batch was read; it comes again"));
    }
    return b;
  }

  // The handler's outcome for each record, as the records to write.
  expected<std::vector<kafka_record>, kafka_error> judge(const batch& b, kafka_batch_result& counts) {
    std::vector<kafka_record> records;
    records.reserve(b.messages.size());
    for (const auto& m : b.messages) {
      const kafka_input input{options.input_topic,
                              m->partition,
                              m->offset,
                              bytes_of(m->key, m->key_len),
                              bytes_of(m->payload, m->len),
                              kafka_redrive_link(headers_of(*m))};
      auto outcome = handler(input);
      if (!outcome || (outcome->result.has_value() == outcome->dead_letter.has_value())) {
        return unexpected(aborted(fmt::format("kafka: the handler failed on {}: {}", input.position(),
                                              outcome ? "it gave neither one result nor one dead letter"
                                                      : outcome.error())));
      }
      if (outcome->dead_letter) {
        records.push_back(to_kafka_record(*outcome->dead_letter, options.dlq_topic, options.dialects));
        ++counts.dead_lettered;
      } else {
        records.push_back({options.output_topic, -1, input.position(), std::move(*outcome->result), {}});
        ++counts.accepted;
      }
    }
    return records;
  }

  // The producer can no longer work: without it, the next poll starts a new
  // one, which aborts what this one left open; fenced, the worker stops.
  kafka_error lose_producer(rd_kafka_resp_err_t code, std::string why) {
    fenced = code == RD_KAFKA_RESP_ERR__FENCED || code == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
             code == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH;
    drop_producer();
    if (fenced) return {kafka_errc::fenced, std::move(why)};
    return {kafka_errc::fatal, std::move(why) + "; the next poll starts a new producer"};
  }

  // After a failed transactional call: a fatal error loses the producer, any
  // other aborts the transaction.
  kafka_error give_up(const error_ptr& e, std::string_view step) {
    std::string why = fmt::format("kafka: {} of a transaction of {}: {}", step, options.transactional_id,
                                  rd_kafka_error_string(e.get()));
    if (rd_kafka_error_is_fatal(e.get())) return lose_producer(rd_kafka_error_code(e.get()), std::move(why));
    error_ptr abort{rd_kafka_abort_transaction(transactional, millis(options.delivery_timeout))};
    if (!abort) return aborted(std::move(why));
    if (rd_kafka_error_is_fatal(abort.get())) return lose_producer(rd_kafka_error_code(abort.get()), std::move(why));
    unsettled_abort = rd_kafka_error_is_retriable(abort.get());  // it goes on in the background
    return aborted(std::move(why) + "; the abort failed too: " + rd_kafka_error_string(abort.get()));
  }

  // Finishes what an earlier poll left open, before anything new begins: an
  // abort, or a commit. A batch whose commit went through is this poll's
  // result; one whose transaction aborted is rewound. A fatal error then
  // leaves the commit's outcome unknown: the batch is rewound and may be
  // written twice (a fenced worker stops anyway).
  std::optional<expected<kafka_batch_result, kafka_error>> settle() {
    if (unsettled_abort) {
      unsettled_abort = false;
      if (error_ptr e{rd_kafka_abort_transaction(transactional, millis(options.delivery_timeout))}) {
        std::string why = fmt::format("kafka: finishing the abort of a transaction of {}: {}", options.transactional_id,
                                      rd_kafka_error_string(e.get()));
        if (rd_kafka_error_is_fatal(e.get()))
          return unexpected(lose_producer(rd_kafka_error_code(e.get()), std::move(why)));
        unsettled_abort = rd_kafka_error_is_retriable(e.get());
        return unexpected(aborted(std::move(why)));
      }
    }
    if (!unsettled_commit) return std::nullopt;
    error_ptr e{rd_kafka_commit_transaction(transactional, millis(options.delivery_timeout))};
    if (!e) {
      const kafka_batch_result counts = unsettled_commit->counts;
      unsettled_commit.reset();
      return counts;
    }
    if (rd_kafka_error_is_retriable(e.get()) && !rd_kafka_error_is_fatal(e.get())) return unexpected(commit_pending(e));
    const batch inputs = std::move(unsettled_commit->inputs);
    unsettled_commit.reset();
    kafka_error failure = give_up(e, "the commit");
    rewind(inputs);
    return unexpected(std::move(failure));
  }

  kafka_error commit_pending(const error_ptr& e) const {
    return {kafka_errc::timeout,
            fmt::format("kafka: the commit of a transaction of {} is not finished ({}); the next poll finishes it "
                        "before reading on",
                        options.transactional_id, rd_kafka_error_string(e.get()))};
  }

  std::optional<kafka_error> produce(const kafka_record& record, clock::time_point deadline) {
    for (;;) {
      const rd_kafka_resp_err_t err = produce_record(transactional, record, nullptr);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && clock::now() < deadline) {
        rd_kafka_poll(transactional, 10);
        continue;
      }
      char reason[512];
      if (const rd_kafka_resp_err_t fatal = rd_kafka_fatal_error(transactional, reason, sizeof reason);
          fatal != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return lose_producer(fatal, fmt::format("kafka: producing in a transaction of {}: {}", options.transactional_id,
                                                reason));
      }
      return give_up(error_ptr(rd_kafka_error_new(err, "cannot produce to %s: %s", record.topic.c_str(),
                                                  rd_kafka_err2str(err))),
                     "producing");
    }
  }

  // Begin, produce, add the offsets, commit: all or nothing, within
  // delivery_timeout. A commit still going on then is left to the next poll,
  // with the batch (moved into unsettled_commit: neither rewound nor
  // committed); any other failure is for the caller to rewind.
  std::optional<kafka_error> transact(const std::vector<kafka_record>& records, batch& b,
                                      const kafka_batch_result& counts) {
    if (transactional == nullptr) {
      // Still without a producer, the next poll tries again; `timeout` is
      // kept for a commit left going on.
      if (auto made = open_transactional(); !made) {
        fenced = made.error().code == kafka_errc::fenced;
        if (!fenced) made.error().code = kafka_errc::fatal;
        return std::move(made.error());
      }
    }
    const auto deadline = clock::now() + options.delivery_timeout;
    const auto left = [&] {
      return millis(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()));
    };
    if (error_ptr e{rd_kafka_begin_transaction(transactional)}) return give_up(e, "the beginning");
    for (const auto& record : records) {
      if (auto failed = produce(record, deadline)) return failed;
    }
    const std::unique_ptr<rd_kafka_consumer_group_metadata_t, group_metadata_deleter> group(
        rd_kafka_consumer_group_metadata(consumer));
    const partition_list_ptr offsets = next_offsets(b);
    if (error_ptr e{rd_kafka_send_offsets_to_transaction(transactional, offsets.get(), group.get(), left())}) {
      return give_up(e, "adding the input offsets");
    }
    for (;;) {
      error_ptr e{rd_kafka_commit_transaction(transactional, left())};
      if (!e) return std::nullopt;
      // Retriable: the commit goes on in the background and calling again
      // resumes it; its outcome is open until a call answers otherwise.
      if (!rd_kafka_error_is_retriable(e.get()) || rd_kafka_error_is_fatal(e.get())) return give_up(e, "the commit");
      if (clock::now() >= deadline) {
        unsettled_commit = uncommitted{std::move(b), counts};
        return commit_pending(e);
      }
    }
  }

  // Writes the records and waits for them, then commits. Rewinds when
  // nothing was committed.
  std::optional<kafka_error> deliver(const std::vector<kafka_record>& records, const batch& b) {
    if (auto sent = durable->send_batch(records); !sent) {
      rewind(b);
      return std::move(sent.error());
    }
    const partition_list_ptr offsets = next_offsets(b);
    if (const rd_kafka_resp_err_t err = rd_kafka_commit(consumer, offsets.get(), 0);
        err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      // Written but not committed: the inputs come again (at least once), so no rewind.
      return kafka_error{kafka_errc::unavailable, fmt::format("kafka: committing the offsets of {} failed: {}",
                                                              options.input_topic, errstr_of(err))};
    }
    return std::nullopt;
  }

  expected<kafka_batch_result, kafka_error> poll(std::chrono::milliseconds timeout) {
    if (fenced) {
      return unexpected(kafka_error{kafka_errc::fenced, fmt::format("kafka: another producer has the "
                                                                    "transactional id {}",
                                                                    options.transactional_id)});
    }
    if (closed) return unexpected(kafka_error{kafka_errc::closed, "kafka: the worker is closed"});
    if (exactly_once()) {
      if (auto settled = settle()) return std::move(*settled);
    }
    auto gathered = gather(timeout);
    if (!gathered) return unexpected(std::move(gathered.error()));
    batch& b = *gathered;
    kafka_batch_result counts;
    if (b.messages.empty()) return counts;
    std::optional<kafka_error> failure;
    try {
      auto records = judge(b, counts);
      if (!records) {
        rewind(b);
        return unexpected(std::move(records.error()));
      }
      if (exactly_once()) {
        failure = transact(*records, b, counts);
        if (failure && !unsettled_commit) rewind(b);
      } else {
        failure = deliver(*records, b);  // rewinds itself
      }
    } catch (...) {
      rewind(b);
      throw;
    }
    if (failure) return unexpected(std::move(*failure));
    return counts;
  }
};

kafka_worker::kafka_worker(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
kafka_worker::kafka_worker(kafka_worker&&) noexcept = default;
kafka_worker& kafka_worker::operator=(kafka_worker&&) noexcept = default;
kafka_worker::~kafka_worker() = default;

expected<kafka_worker, kafka_error> kafka_worker::open(kafka_worker_options options, kafka_handler handler) {
  for (const auto* topic : {&options.input_topic, &options.output_topic, &options.dlq_topic}) {
    if (topic->empty())
      return unexpected(kafka_error{kafka_errc::invalid_configuration, "kafka: a topic name is empty"});
  }
  if (!handler) return unexpected(kafka_error{kafka_errc::invalid_configuration, "kafka: the worker has no handler"});
  auto state = std::make_unique<impl>();
  state->options = std::move(options);
  state->options.max_batch = std::max<std::size_t>(1, state->options.max_batch);
  state->handler = std::move(handler);
  if (state->exactly_once()) {
    if (auto made = state->open_transactional(); !made) return unexpected(std::move(made.error()));
  } else {
    auto producer = kafka_producer::open({state->options.properties, state->options.delivery_timeout,
                                          state->options.log});
    if (!producer) return unexpected(std::move(producer.error()));
    producer->prepare(state->options.output_topic);
    producer->prepare(state->options.dlq_topic);
    state->durable.emplace(std::move(*producer));
  }
  if (auto subscribed = state->open_consumer(); !subscribed) return unexpected(std::move(subscribed.error()));
  return kafka_worker(std::move(state));
}

expected<kafka_batch_result, kafka_error> kafka_worker::poll_once(std::chrono::milliseconds timeout) {
  if (!impl_) return unexpected(kafka_error{kafka_errc::closed, "kafka: the worker was moved from"});
  return impl_->poll(timeout);
}

void kafka_worker::close() {
  if (!impl_ || impl_->closed || impl_->consumer == nullptr) return;
  rd_kafka_consumer_close(impl_->consumer);
  impl_->closed = true;
}

bool kafka_worker::exactly_once() const noexcept { return impl_ && impl_->exactly_once(); }

LLMDLQ_END_NAMESPACE
