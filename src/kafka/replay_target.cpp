// SPDX-License-Identifier: MIT
// kafka_replay_target: kafka_producer for the deliveries, and a consumer
// that reads a stretch of the topic when an earlier delivery may be there.
#include "llmdlq/kafka/replay_target.hpp"

#include <set>
#include <utility>
#include <vector>

#include "kafka_common.hpp"
#include "llmdlq/detail/deliverable.hpp"
#include "llmdlq/kafka/producer.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

using namespace kafka_detail;

namespace {

// Whether a send that failed so may still have written the record.
bool may_have_written(kafka_errc code) noexcept { return code == kafka_errc::timeout || code == kafka_errc::fatal; }

}  // namespace

struct kafka_replay_target::impl {
  kafka_target_options options;
  kafka_producer producer;
  std::vector<std::int32_t> partitions;
  timestamp opened_at;
  handle_context context{&options.log, this};
  rd_kafka_t* reader = nullptr;                  // made for the first look
  std::set<std::string, std::less<>> delivered;  // keys produced here or found in the topic
  std::set<std::string, std::less<>> doubtful;   // keys whose send here may have written the record
  // The topic is read from `read_from` to the partitions' ends as they were
  // when it was read; nothing since (a doubtful send) has been left out.
  std::optional<timestamp> read_from;
  std::optional<bool> cluster_finds_by_time;  // asked once, of a nonempty partition

  impl(kafka_target_options o, kafka_producer p, std::vector<std::int32_t> parts)
      : options(std::move(o)), producer(std::move(p)), partitions(std::move(parts)), opened_at(system_now()) {}
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl() { close_reader(reader); }

  // Whether the payload may have been produced before this delivery.
  [[nodiscard]] bool may_be_there(const ledger_entry& entry) const {
    return doubtful.contains(entry.idempotency_key) || entry.written_at < opened_at + options.clock_skew;
  }

  expected<void, replay_error> open_reader() {
    if (reader != nullptr) return {};
    auto made = assigned_reader(options.properties, "llmdlq-target", &context);
    if (!made) return unexpected(target_error_of(std::move(made.error())));
    reader = *made;
    return {};
  }

  // Whether the partition is empty or the cluster finds its first record by
  // time (epoch 0); asked once of a nonempty partition.
  expected<bool, replay_error> finds_by_time(std::int32_t partition) {
    const int wait = milliseconds_of(options.read_timeout);
    std::int64_t low = 0;
    std::int64_t high = 0;
    if (const auto err = rd_kafka_query_watermark_offsets(reader, options.topic.c_str(), partition, &low, &high, wait);
        err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return detail::target_failure(replay_errc::target_unavailable,
                                    fmt::format("kafka: reading {} partition {}'s ends: {}", options.topic, partition,
                                                errstr_of(err)));
    }
    if (high <= low) return true;
    if (cluster_finds_by_time) return *cluster_finds_by_time;
    partition_list_ptr first(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(first.get(), options.topic.c_str(), partition)->offset = 0;
    if (const auto err = rd_kafka_offsets_for_times(reader, first.get(), wait); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return detail::target_failure(replay_errc::target_unavailable,
                                    fmt::format("kafka: finding {}'s first record: {}", options.topic, errstr_of(err)));
    }
    cluster_finds_by_time = first->elems[0].err == RD_KAFKA_RESP_ERR_NO_ERROR && first->elems[0].offset >= 0;
    return *cluster_finds_by_time;
  }

  // Reads every partition from the first record at or after `since` to its
  // end, adding the keys of its records to `delivered`.
  expected<void, replay_error> read_topic(timestamp since) {
    if (auto opened = open_reader(); !opened) return opened;
    const int wait = milliseconds_of(options.read_timeout);
    partition_list_ptr starts(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
    for (const std::int32_t p : partitions) {
      rd_kafka_topic_partition_list_add(starts.get(), options.topic.c_str(), p)->offset =
          since.time_since_epoch().count();
    }
    if (const auto err = rd_kafka_offsets_for_times(reader, starts.get(), wait); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return detail::target_failure(replay_errc::target_unavailable,
                                    fmt::format("kafka: finding {}'s records since {}: {}", options.topic,
                                                format_rfc3339(since), errstr_of(err)));
    }
    std::set<std::int32_t> at_end;
    for (int i = 0; i < starts->cnt; ++i) {
      auto& start = starts->elems[i];
      if (start.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return detail::target_failure(replay_errc::target_unavailable,
                                      fmt::format("kafka: finding {} partition {}'s records: {}", options.topic,
                                                  start.partition, errstr_of(start.err)));
      }
      if (start.offset >= 0) continue;
      // No record at or after `since`, the cluster says: an empty partition,
      // or one whose records are older. A cluster that finds no offset by
      // time at all (librdkafka's mock cluster) says so of every partition:
      // such a partition is read from its start.
      auto reads_by_time = finds_by_time(start.partition);
      if (!reads_by_time) return unexpected(std::move(reads_by_time.error()));
      if (*reads_by_time) {
        at_end.insert(start.partition);
      } else {
        start.offset = RD_KAFKA_OFFSET_BEGINNING;
      }
    }
    if (at_end.size() == partitions.size()) return {};
    if (const auto err = rd_kafka_assign(reader, starts.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return detail::target_failure(replay_errc::target_unavailable,
                                    fmt::format("kafka: assigning {}: {}", options.topic, errstr_of(err)));
    }
    std::optional<replay_error> failure;
    const auto deadline = std::chrono::steady_clock::now() + options.read_timeout;
    while (at_end.size() < partitions.size()) {
      if (std::chrono::steady_clock::now() > deadline) {
        failure = replay_error{replay_errc::target_unavailable,
                               fmt::format("kafka: reading {} for earlier deliveries took longer than {} ms",
                                           options.topic, options.read_timeout.count()),
                               {},
                               {}};
        break;
      }
      message_ptr message(rd_kafka_consumer_poll(reader, 200));
      if (!message) continue;
      if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        at_end.insert(message->partition);
      } else if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        failure = replay_error{replay_errc::target_unavailable,
                               fmt::format("kafka: reading {} for earlier deliveries: {}", options.topic,
                                           rd_kafka_message_errstr(message.get())),
                               {},
                               {}};
        break;
      } else if (message->key != nullptr) {
        delivered.emplace(static_cast<const char*>(message->key), message->key_len);
      }
    }
    rd_kafka_assign(reader, nullptr);
    if (failure) return unexpected(std::move(*failure));
    return {};
  }

  // Whether the topic holds a record with the entry's key, reading what of
  // it has not been read.
  expected<bool, replay_error> found(const ledger_entry& entry) {
    const timestamp since = entry.written_at - options.clock_skew;
    if (!read_from || since < *read_from) {
      if (auto read = read_topic(since); !read) return unexpected(std::move(read.error()));
      read_from = since;
    }
    return delivered.contains(entry.idempotency_key);
  }

  kafka_record record_of(const ledger_entry& entry) const {
    kafka_record record{options.topic, -1, entry.idempotency_key, entry.output, {}};
    const auto add = [&](std::string_view name, const std::string& value) {
      if (!value.empty()) record.headers.push_back({std::string(name), value});
    };
    add(kafka_target_header_names::source, entry.source);
    add(kafka_target_header_names::dlq_id, entry.dlq_id);
    add(kafka_target_header_names::resolved_by, entry.resolved_by);
    add(kafka_target_header_names::note, entry.note);
    return record;
  }
};

kafka_replay_target::kafka_replay_target(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
kafka_replay_target::kafka_replay_target(kafka_replay_target&&) noexcept = default;
kafka_replay_target& kafka_replay_target::operator=(kafka_replay_target&&) noexcept = default;
kafka_replay_target::~kafka_replay_target() = default;

const kafka_target_options& kafka_replay_target::options() const noexcept { return impl_->options; }

expected<kafka_replay_target, replay_error> kafka_replay_target::open(kafka_target_options options) {
  if (options.topic.empty())
    return detail::target_failure(replay_errc::target_refused, "kafka: the topic name is empty");
  auto producer = target_producer(options.properties, options.delivery_timeout, options.log);
  if (!producer) return unexpected(std::move(producer.error()));
  auto state = std::make_unique<impl>(std::move(options), std::move(*producer), std::vector<std::int32_t>{});
  if (auto opened = state->open_reader(); !opened) return unexpected(std::move(opened.error()));
  auto partitions = topic_partitions(state->reader, state->options.topic, state->options.read_timeout);
  if (!partitions) return unexpected(target_error_of(std::move(partitions.error())));
  state->partitions = std::move(*partitions);
  state->producer.prepare(state->options.topic);
  return kafka_replay_target(std::move(state));
}

expected<void, replay_error> kafka_replay_target::deliver(const ledger_entry& entry) {
  impl& s = *impl_;
  if (s.delivered.contains(entry.idempotency_key)) return {};
  if (auto json = detail::deliverable(entry); !json) return json;
  if (s.may_be_there(entry)) {
    auto there = s.found(entry);
    if (!there) return unexpected(std::move(there.error()));
    if (*there) return {};
  }
  auto sent = s.producer.send(s.record_of(entry));
  if (!sent) {
    if (may_have_written(sent.error().code)) {
      s.doubtful.insert(entry.idempotency_key);
      s.read_from.reset();  // the record may have landed after the last read
    }
    return unexpected(target_error_of(std::move(sent.error())));
  }
  s.doubtful.erase(entry.idempotency_key);
  s.delivered.insert(entry.idempotency_key);
  return {};
}

LLMDLQ_END_NAMESPACE
