// SPDX-License-Identifier: MIT
#include "kafka_replay_source.hpp"

#include <librdkafka/rdkafka.h>

#include <charconv>
#include <chrono>
#include <set>

#include <fmt/format.h>

namespace llmdlq::cli {

namespace {

constexpr int timeout_ms = 10000;

using offsets = std::map<std::int32_t, std::int64_t>;  // partition → last offset read

offsets parse_position(std::string_view text) {
  offsets read;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view pair = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const auto colon = pair.find(':');
    if (colon == std::string_view::npos) continue;
    std::int32_t partition = 0;
    std::int64_t offset = 0;
    std::from_chars(pair.data(), pair.data() + colon, partition);
    std::from_chars(pair.data() + colon + 1, pair.data() + pair.size(), offset);
    read[partition] = offset;
  }
  return read;
}

std::string format_position(const offsets& read) {
  std::string text;
  for (const auto& [partition, offset] : read) {
    if (!text.empty()) text.push_back(',');
    text += fmt::format("{}:{}", partition, offset);
  }
  return text;
}

}  // namespace

struct kafka_replay_source::impl {
  std::string topic;
  rd_kafka_t* consumer = nullptr;
  std::vector<std::int32_t> partitions;
  std::size_t skipped = 0;

  ~impl() {
    if (consumer != nullptr) {
      rd_kafka_consumer_close(consumer);
      rd_kafka_destroy(consumer);
    }
  }
};

kafka_replay_source::kafka_replay_source(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
kafka_replay_source::kafka_replay_source(kafka_replay_source&&) noexcept = default;
kafka_replay_source& kafka_replay_source::operator=(kafka_replay_source&&) noexcept = default;
kafka_replay_source::~kafka_replay_source() = default;
std::size_t kafka_replay_source::skipped() const noexcept { return impl_->skipped; }

expected<kafka_replay_source, std::string> kafka_replay_source::open(std::string topic,
                                                                     std::map<std::string, std::string> properties) {
  auto state = std::make_unique<impl>();
  state->topic = std::move(topic);
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  properties.try_emplace("group.id", "llmdlq-replay");  // required by the API; nothing is committed
  properties["enable.auto.commit"] = "false";
  properties["enable.partition.eof"] = "true";
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return unexpected(fmt::format("Kafka property {}: {}", name, error));
    }
  }
  state->consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (state->consumer == nullptr) {
    rd_kafka_conf_destroy(conf);
    return unexpected(fmt::format("Kafka consumer: {}", error));
  }
  rd_kafka_topic_t* handle = rd_kafka_topic_new(state->consumer, state->topic.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(state->consumer, 0, handle, &metadata, timeout_ms);
  rd_kafka_topic_destroy(handle);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return unexpected(fmt::format("reading the metadata of {}: {}", state->topic, rd_kafka_err2str(err)));
  }
  for (int t = 0; t < metadata->topic_cnt; ++t) {
    const auto& info = metadata->topics[t];
    if (info.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const std::string why = rd_kafka_err2str(info.err);
      rd_kafka_metadata_destroy(metadata);
      return unexpected(fmt::format("topic {}: {}", state->topic, why));
    }
    for (int p = 0; p < info.partition_cnt; ++p) state->partitions.push_back(info.partitions[p].id);
  }
  rd_kafka_metadata_destroy(metadata);
  if (state->partitions.empty()) return unexpected(fmt::format("topic {} has no partitions", state->topic));
  return kafka_replay_source(std::move(state));
}

expected<std::vector<stored_letter>, std::string> kafka_replay_source::next(std::string_view after,
                                                                            std::size_t limit) {
  impl& s = *impl_;
  offsets read = parse_position(after);
  rd_kafka_topic_partition_list_t* assignment =
      rd_kafka_topic_partition_list_new(static_cast<int>(s.partitions.size()));
  for (const std::int32_t p : s.partitions) {
    const auto it = read.find(p);
    rd_kafka_topic_partition_list_add(assignment, s.topic.c_str(), p)->offset =
        it == read.end() ? RD_KAFKA_OFFSET_BEGINNING : it->second + 1;
  }
  const rd_kafka_resp_err_t assigned = rd_kafka_assign(s.consumer, assignment);
  rd_kafka_topic_partition_list_destroy(assignment);
  if (assigned != RD_KAFKA_RESP_ERR_NO_ERROR) return unexpected(rd_kafka_err2str(assigned));

  std::vector<stored_letter> letters;
  // Each partition counts once: one that hears of new messages after its end ends again.
  std::set<std::int32_t> at_end;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (letters.size() < limit && at_end.size() < s.partitions.size()) {
    if (std::chrono::steady_clock::now() > deadline) return unexpected("no answer from the cluster in time");
    rd_kafka_message_t* message = rd_kafka_consumer_poll(s.consumer, 200);
    if (message == nullptr) continue;
    if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end.insert(message->partition);
    } else if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const std::string why = rd_kafka_message_errstr(message);
      rd_kafka_message_destroy(message);
      return unexpected(why);
    } else {
      read[message->partition] = message->offset;
      auto letter = parse_envelope(std::string_view(static_cast<const char*>(message->payload), message->len));
      if (letter) {
        letters.push_back({std::move(*letter), format_position(read)});
      } else {
        ++s.skipped;
      }
    }
    rd_kafka_message_destroy(message);
  }
  rd_kafka_assign(s.consumer, nullptr);
  return letters;
}

}  // namespace llmdlq::cli
