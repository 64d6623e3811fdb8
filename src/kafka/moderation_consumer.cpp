// SPDX-License-Identifier: MIT
// kafka_moderation_consumer on librdkafka's high-level consumer: store, then
// commit; on a store failure, rewind the partition and pause it.
#include "llmdlq/config.hpp"
#include "llmdlq/kafka/moderation_consumer.hpp"

#include <algorithm>
#include <map>
#include <thread>

#include "client_calls.hpp"
#include "kafka_common.hpp"
#include "llmdlq/process.hpp"

LLMDLQ_BEGIN_NAMESPACE

using namespace kafka_detail;

namespace {

using clock = std::chrono::steady_clock;

std::string_view payload_of(const rd_kafka_message_t& m) {
  return m.payload == nullptr ? std::string_view() : std::string_view(static_cast<const char*>(m.payload), m.len);
}

}  // namespace

moderation_poll_result& moderation_poll_result::operator+=(const moderation_poll_result& other) {
  stored += other.stored;
  duplicates += other.duplicates;
  failed += other.failed;
  unreadable += other.unreadable;
  commit_failures += other.commit_failures;
  if (other.last_store_error) last_store_error = other.last_store_error;
  if (other.last_kafka_error) last_kafka_error = other.last_kafka_error;
  return *this;
}

struct kafka_moderation_consumer::impl {
  sink* store = nullptr;
  kafka_moderation_consumer_options options;
  handle_context context{&options.log, this};
  rd_kafka_t* rk = nullptr;
  bool closed = false;

  // A partition waiting to try a record again after its store failed.
  struct backoff {
    std::int64_t offset = 0;
    clock::time_point until;
    bool rewound = false;  // the seek back to `offset` succeeded
  };
  std::map<std::int32_t, backoff> backoffs;

  ~impl() {
    if (rk == nullptr) return;
    if (!closed) rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
  }

  partition_list_ptr one_partition(std::int32_t partition, std::int64_t offset) const {
    partition_list_ptr list(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(list.get(), options.topic.c_str(), partition)->offset = offset;
    return list;
  }

  // Partitions come and go with rebalances: a partition assigned again starts
  // from its committed offset, so whatever backoff it had is over.
  static void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions,
                           void* opaque) {
    auto* self = static_cast<impl*>(static_cast<handle_context*>(opaque)->owner);
    for (int i = 0; i < partitions->cnt; ++i) self->backoffs.erase(partitions->elems[i].partition);
    follow_rebalance(rk, err, partitions);
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) rd_kafka_resume_partitions(rk, partitions);
  }

  // Points the partition back at `offset`. Until that worked the partition
  // stays paused: moving on would commit past the record.
  bool rewind(std::int32_t partition, std::int64_t offset, moderation_poll_result& result) {
    auto list = one_partition(partition, offset);
    rd_kafka_pause_partitions(rk, list.get());  // first: pausing sets the fetch position to after the record
    list->elems[0].offset = offset;
    rd_kafka_error_t* error = rd_kafka_seek_partitions(rk, list.get(), 10000);
    const rd_kafka_resp_err_t err = error ? rd_kafka_error_code(error) : list->elems[0].err;
    if (error) rd_kafka_error_destroy(error);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      result.last_kafka_error = kafka_error{
          kafka_errc::unavailable,
          fmt::format("kafka: cannot rewind {}/{} to {}: {}", options.topic, partition, offset, errstr_of(err))};
      return false;
    }
    return true;
  }

  void hold(std::int32_t partition, std::int64_t offset, moderation_poll_result& result) {
    backoff& b = backoffs[partition];
    b.offset = offset;
    b.until = clock::now() + options.retry_backoff;
    b.rewound = rewind(partition, offset, result);
  }

  // Resumes the partitions whose backoff is over; returns when the next one is.
  std::optional<clock::time_point> resume_due(moderation_poll_result& result) {
    std::optional<clock::time_point> next;
    const auto now = clock::now();
    for (auto& [partition, b] : backoffs) {
      if (b.until <= now && !b.rewound) {
        b.rewound = rewind(partition, b.offset, result);
        if (!b.rewound) b.until = now + options.retry_backoff;
      }
      if (b.until <= now && b.rewound) {
        auto list = one_partition(partition, b.offset);
        rd_kafka_resume_partitions(rk, list.get());
        b.until = clock::time_point::max();  // resumed: the entry goes when the record comes
      } else if (b.until != clock::time_point::max()) {
        next = next ? std::min(*next, b.until) : b.until;
      }
    }
    return next;
  }

  envelope unreadable(const rd_kafka_message_t& m, const envelope_error& why) const {
    rd_kafka_timestamp_type_t type;
    const std::int64_t millis = rd_kafka_message_timestamp(&m, &type);
    const timestamp at = millis >= 0 ? timestamp(std::chrono::milliseconds(millis)) : system_now();
    request_context ctx;
    ctx.idempotency_key = fmt::format("kafka:{}/{}@{}", options.topic, m.partition, m.offset);
    ctx.origin.topic = options.topic;
    ctx.origin.partition = m.partition;
    ctx.origin.offset = m.offset;
    ctx.received_at = at;  // every redelivery of the record gets the same dlq_id
    process_config po;
    po.envelope.clock = [at] { return at; };
    po.envelope.failure_code = [code = options.unreadable_code](failure_category) { return code; };
    return make_envelope({.category = failure_category::poison,
                          .message = fmt::format("the record at {}/{}@{} is not a version 1 envelope: {}{}{}",
                                                 options.topic, m.partition, m.offset, why.path,
                                                 why.path.empty() ? "" : ": ", why.message)},
                         payload_of(m), ctx, po);
  }

  void handle(const rd_kafka_message_t& m, moderation_poll_result& result) {
    if (const auto at = backoffs.find(m.partition); at != backoffs.end()) {
      if (m.offset != at->second.offset) return;  // fetched before the rewind; it comes again
      backoffs.erase(at);
    }
    bool wrapped = false;
    auto parsed = parse_envelope(payload_of(m));
    envelope e;
    if (parsed) {
      e = std::move(*parsed);
    } else {
      e = unreadable(m, parsed.error());
      wrapped = true;
    }
    expected<receipt, sink_error> stored = unexpected(sink_error{});
    try {
      stored = store->publish(e);
    } catch (...) {
      moderation_poll_result ignored;
      rewind(m.partition, m.offset, ignored);
      auto list = one_partition(m.partition, m.offset);
      rd_kafka_resume_partitions(rk, list.get());
      throw;
    }
    if (!stored) {
      ++result.failed;
      result.last_store_error = std::move(stored.error());
      hold(m.partition, m.offset, result);
      return;
    }
    ++(stored->duplicate ? result.duplicates : result.stored);
    if (wrapped) ++result.unreadable;
    if (const rd_kafka_resp_err_t err = rd_kafka_commit_message(rk, &m, 0); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++result.commit_failures;
      result.last_kafka_error = kafka_error{
          kafka_errc::unavailable,
          fmt::format("kafka: commit of {}/{}@{} failed: {}", options.topic, m.partition, m.offset, errstr_of(err))};
    }
  }

  moderation_poll_result poll(std::chrono::milliseconds timeout) {
    moderation_poll_result result;
    if (closed) return result;
    const auto deadline = clock::now() + timeout;
    std::size_t handled = 0;
    for (;;) {
      const auto next_resume = resume_due(result);
      const auto now = clock::now();
      auto wait_until = handled > 0 ? now : deadline;
      if (next_resume) wait_until = std::min(wait_until, *next_resume);
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(std::max(wait_until, now) - now);
      message_ptr m(rd_kafka_consumer_poll(rk, static_cast<int>(wait.count())));
      if (m) {
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
          handle(*m, result);
          if (++handled >= options.max_records_per_poll) return result;
          continue;
        }
        if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          result.last_kafka_error = kafka_error{kafka_errc::unavailable,
                                                fmt::format("kafka: consumer: {}", rd_kafka_message_errstr(m.get()))};
        }
        continue;
      }
      if (handled > 0 || clock::now() >= deadline) return result;
    }
  }
};

kafka_moderation_consumer::kafka_moderation_consumer(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
kafka_moderation_consumer::kafka_moderation_consumer(kafka_moderation_consumer&&) noexcept = default;
kafka_moderation_consumer& kafka_moderation_consumer::operator=(kafka_moderation_consumer&&) noexcept = default;
kafka_moderation_consumer::~kafka_moderation_consumer() = default;

expected<kafka_moderation_consumer, kafka_error> kafka_moderation_consumer::open(
    sink& store, kafka_moderation_consumer_options options) {
  if (options.topic.empty()) {
    return unexpected(kafka_error{kafka_errc::invalid_configuration, "kafka: the topic name is empty"});
  }
  auto state = std::make_unique<impl>();
  state->store = &store;
  state->options = std::move(options);
  kafka_properties properties = state->options.properties;
  properties.try_emplace("group.id", "llmdlq-moderation");
  properties.try_emplace("auto.offset.reset", "earliest");
  auto conf = make_conf(properties, {{"enable.auto.commit", "false"}, {"enable.auto.offset.store", "false"}},
                        &state->context);
  if (!conf) return unexpected(std::move(conf.error()));
  rd_kafka_conf_set_rebalance_cb(conf->get(), impl::on_rebalance);
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf->get(), errstr, sizeof errstr);
  if (rk == nullptr)
    return unexpected(kafka_error{kafka_errc::unavailable, fmt::format("kafka: consumer: {}", errstr)});
  (void)conf->release();
  state->rk = rk;
  rd_kafka_poll_set_consumer(rk);
  // The topic's metadata first (best effort): a group joined before it is
  // known must rebalance again once it is.
  if (rd_kafka_topic_t* topic = rd_kafka_topic_new(rk, state->options.topic.c_str(), nullptr)) {
    const rd_kafka_metadata_t* metadata = nullptr;
    if (rd_kafka_metadata(rk, 0, topic, &metadata, 2000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_metadata_destroy(metadata);
    }
    rd_kafka_topic_destroy(topic);
  }
  auto topics = state->one_partition(RD_KAFKA_PARTITION_UA, RD_KAFKA_OFFSET_INVALID);
  if (const rd_kafka_resp_err_t err = rd_kafka_subscribe(rk, topics.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return unexpected(kafka_error{kafka_errc::unavailable, fmt::format("kafka: cannot subscribe to {}: {}",
                                                                       state->options.topic, errstr_of(err))});
  }
  return kafka_moderation_consumer(std::move(state));
}

moderation_poll_result kafka_moderation_consumer::poll_once(std::chrono::milliseconds timeout) {
  if (!impl_) return {};
  return impl_->poll(timeout);
}

moderation_poll_result kafka_moderation_consumer::run(std::stop_token stop, std::chrono::milliseconds poll_timeout) {
  moderation_poll_result total;
  while (impl_ && !stop.stop_requested()) total += impl_->poll(poll_timeout);
  return total;
}

void kafka_moderation_consumer::close() {
  if (!impl_ || impl_->closed || impl_->rk == nullptr) return;
  rd_kafka_consumer_close(impl_->rk);
  impl_->closed = true;
}

LLMDLQ_END_NAMESPACE
