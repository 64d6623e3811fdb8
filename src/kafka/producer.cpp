// SPDX-License-Identifier: MIT
// kafka_producer on librdkafka's C API: an idempotent producer, one
// delivery report awaited per record.
#include "llmdlq/config.hpp"
#include "llmdlq/kafka/producer.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>

#include "client_calls.hpp"
#include "kafka_common.hpp"

LLMDLQ_BEGIN_NAMESPACE

using namespace kafka_detail;

namespace {

using clock = std::chrono::steady_clock;

// What a delivery report says about one record. The publishing thread holds
// one reference and the record's opaque another (a heap shared_ptr the
// report callback deletes), so a report that comes after the publisher gave
// up writes into live memory.
struct delivery_state {
  std::atomic<bool> done{false};
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  rd_kafka_msg_status_t status = RD_KAFKA_MSG_STATUS_NOT_PERSISTED;
  std::int32_t partition = -1;
  std::int64_t offset = -1;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  auto* owner = static_cast<std::shared_ptr<delivery_state>*>(message->_private);
  if (owner == nullptr) return;
  delivery_state& state = **owner;
  state.err = message->err;
  state.status = rd_kafka_message_status(message);
  state.partition = message->partition;
  state.offset = message->offset;
  state.done.store(true, std::memory_order_release);
  delete owner;
}

bool rejection(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_MSG:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_POLICY_VIOLATION:
    case RD_KAFKA_RESP_ERR_INVALID_REQUIRED_ACKS: return true;
    default: return false;
  }
}

kafka_error delivery_failure(const std::string& topic, const delivery_state& state) {
  const kafka_errc code = state.status == RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED ? kafka_errc::timeout
                          : rejection(state.err)                                 ? kafka_errc::rejected
                                                                                 : kafka_errc::unavailable;
  return {code, fmt::format("kafka: delivery to {} failed: {}{}", topic, errstr_of(state.err),
                            state.status == RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED ? " (possibly written)" : "")};
}

// One librdkafka producer. Destroyed when the producer is, or replaced after
// a fatal error once no send uses it any more.
struct handle {
  rd_kafka_t* rk = nullptr;
  std::chrono::milliseconds delivery_timeout{};
  std::mutex topics_mutex;
  std::vector<rd_kafka_topic_t*> topics;  // prepared: librdkafka keeps their metadata fresh

  void prepare(const std::string& topic) {
    std::lock_guard lock(topics_mutex);
    if (rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr)) topics.push_back(t);
  }

  handle() = default;
  handle(const handle&) = delete;
  handle& operator=(const handle&) = delete;
  ~handle() {
    if (rk == nullptr) return;
    // Let what is in flight finish, then fail the rest, so that every
    // delivery report runs and releases its record's state.
    rd_kafka_flush(rk, static_cast<int>(delivery_timeout.count()));
    rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_flush(rk, 1000);
    for (rd_kafka_topic_t* t : topics) rd_kafka_topic_destroy(t);
    rd_kafka_destroy(rk);
  }
};

}  // namespace

struct kafka_producer::impl {
  kafka_producer_options options;
  handle_context context{&options.log, nullptr};  // declared before `current`, which uses it
  std::shared_mutex mutex;                        // guards `current`
  std::shared_ptr<handle> current;
  std::atomic<bool> broken{false};
  std::vector<std::string> prepared;  // guarded by `mutex`; prepared again on a new producer

  expected<std::shared_ptr<handle>, kafka_error> connect() const {
    // Every send waits for its delivery report, so lingering to fill a batch
    // only adds latency (librdkafka's 5 ms default capped a worker at ~190
    // records/s); a batch is produced whole before any wait. The host's own
    // setting wins.
    kafka_properties properties = options.properties;
    properties.try_emplace("linger.ms", "0");
    auto conf = make_conf(properties,
                          {{"enable.idempotence", "true"},
                           {"acks", "all"},
                           {"message.timeout.ms",
                            std::to_string(std::max<std::int64_t>(1, options.delivery_timeout.count()))}},
                          const_cast<handle_context*>(&context));
    if (!conf) return unexpected(std::move(conf.error()));
    rd_kafka_conf_set_dr_msg_cb(conf->get(), on_delivery);
    char errstr[512];
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf->get(), errstr, sizeof errstr);
    if (rk == nullptr)
      return unexpected(kafka_error{kafka_errc::unavailable, fmt::format("kafka: producer: {}", errstr)});
    (void)conf->release();  // rd_kafka_new owns it now
    auto h = std::make_shared<handle>();
    h->rk = rk;
    h->delivery_timeout = options.delivery_timeout;
    for (const auto& topic : prepared) h->prepare(topic);
    return h;
  }

  // The producer to use, a new one if the last one failed fatally.
  expected<std::shared_ptr<handle>, kafka_error> acquire() {
    if (!broken.load(std::memory_order_acquire)) {
      std::shared_lock lock(mutex);
      if (current) return current;
    }
    std::unique_lock lock(mutex);
    if (current && !broken.load(std::memory_order_acquire)) return current;
    auto fresh = connect();
    if (!fresh) return unexpected(std::move(fresh.error()));
    current = std::move(*fresh);
    broken.store(false, std::memory_order_release);
    return current;
  }

  // Marks the producer for replacement if librdkafka says it can no longer work.
  std::optional<kafka_error> check_fatal(const handle& h) {
    char reason[512];
    const rd_kafka_resp_err_t err = rd_kafka_fatal_error(h.rk, reason, sizeof reason);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
    broken.store(true, std::memory_order_release);
    return kafka_error{kafka_errc::fatal, fmt::format("kafka: fatal producer error: {}", reason)};
  }

  // Produces one record; the state's report comes through on_delivery.
  std::optional<kafka_error> produce(handle& h, const kafka_record& record,
                                     const std::shared_ptr<delivery_state>& state, clock::time_point deadline) {
    for (;;) {
      auto* owner = new std::shared_ptr<delivery_state>(state);
      const rd_kafka_resp_err_t err = produce_record(h.rk, record, owner);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;  // the record owns `owner` now
      delete owner;
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && clock::now() < deadline) {
        rd_kafka_poll(h.rk, 50);  // make room by serving delivery reports
        continue;
      }
      if (auto fatal = check_fatal(h)) return fatal;
      const kafka_errc code = err == RD_KAFKA_RESP_ERR__QUEUE_FULL ? kafka_errc::timeout
                              : rejection(err)                     ? kafka_errc::rejected
                                                                   : kafka_errc::unavailable;
      return kafka_error{code, fmt::format("kafka: cannot produce to {}: {}", record.topic, errstr_of(err))};
    }
  }

  // Serves delivery reports until every state is done or the deadline passes.
  bool wait(handle& h, std::span<const std::shared_ptr<delivery_state>> states, clock::time_point deadline) {
    std::size_t next = 0;
    for (;;) {
      while (next < states.size() && states[next]->done.load(std::memory_order_acquire)) ++next;
      if (next == states.size()) return true;
      const auto now = clock::now();
      if (now >= deadline) return false;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
      // Short polls: another thread may serve this record's report.
      rd_kafka_poll(h.rk, static_cast<int>(std::clamp<std::int64_t>(left, 1, 10)));
    }
  }

  // librdkafka fails a record itself after message.timeout.ms; this is a
  // backstop for a report that never comes.
  [[nodiscard]] clock::time_point deadline() const {
    return clock::now() + options.delivery_timeout + options.delivery_timeout / 2 + std::chrono::seconds(2);
  }

  expected<std::vector<kafka_delivery>, kafka_error> send(std::span<const kafka_record> records) {
    std::vector<kafka_delivery> deliveries;
    if (records.empty()) return deliveries;
    auto h = acquire();
    if (!h) return unexpected(std::move(h.error()));
    const auto until = deadline();
    std::vector<std::shared_ptr<delivery_state>> states;
    states.reserve(records.size());
    std::optional<kafka_error> failure;
    for (const auto& record : records) {
      states.push_back(std::make_shared<delivery_state>());
      failure = produce(**h, record, states.back(), until);
      if (failure) {
        states.pop_back();
        break;
      }
    }
    // Even when producing failed part way, wait for what was produced, so
    // that the caller's retry does not race the first attempt.
    if (!wait(**h, states, until)) {
      return unexpected(kafka_error{kafka_errc::timeout,
                                    fmt::format("kafka: no delivery report from {} in time", records.front().topic)});
    }
    if (failure) return unexpected(std::move(*failure));
    deliveries.reserve(records.size());
    for (std::size_t i = 0; i < records.size(); ++i) {
      const delivery_state& state = *states[i];
      if (state.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (auto fatal = check_fatal(**h)) return unexpected(std::move(*fatal));
        return unexpected(delivery_failure(records[i].topic, state));
      }
      deliveries.push_back({records[i].topic, state.partition, state.offset});
    }
    return deliveries;
  }
};

kafka_producer::kafka_producer(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
kafka_producer::kafka_producer(kafka_producer&&) noexcept = default;
kafka_producer& kafka_producer::operator=(kafka_producer&&) noexcept = default;
kafka_producer::~kafka_producer() = default;

expected<kafka_producer, kafka_error> kafka_producer::open(kafka_producer_options options) {
  auto state = std::make_unique<impl>();
  state->options = std::move(options);
  auto h = state->connect();
  if (!h) return unexpected(std::move(h.error()));
  state->current = std::move(*h);
  return kafka_producer(std::move(state));
}

expected<kafka_delivery, kafka_error> kafka_producer::send(const kafka_record& record) {
  if (!impl_) return unexpected(kafka_error{kafka_errc::closed, "kafka: the producer was moved from"});
  auto deliveries = impl_->send(std::span(&record, 1));
  if (!deliveries) return unexpected(std::move(deliveries.error()));
  return std::move(deliveries->front());
}

expected<std::vector<kafka_delivery>, kafka_error> kafka_producer::send_batch(std::span<const kafka_record> records) {
  if (!impl_) return unexpected(kafka_error{kafka_errc::closed, "kafka: the producer was moved from"});
  return impl_->send(records);
}

expected<void, kafka_error> kafka_producer::flush() {
  if (!impl_) return unexpected(kafka_error{kafka_errc::closed, "kafka: the producer was moved from"});
  auto h = impl_->acquire();
  if (!h) return unexpected(std::move(h.error()));
  const auto timeout = impl_->options.delivery_timeout + std::chrono::seconds(2);
  if (rd_kafka_flush((*h)->rk, static_cast<int>(timeout.count())) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return unexpected(kafka_error{kafka_errc::timeout, "kafka: records still in flight after the delivery timeout"});
  }
  return {};
}

void kafka_producer::prepare(std::string_view topic) {
  if (!impl_) return;
  std::unique_lock lock(impl_->mutex);
  impl_->prepared.emplace_back(topic);
  if (impl_->current) impl_->current->prepare(impl_->prepared.back());
}

LLMDLQ_END_NAMESPACE
