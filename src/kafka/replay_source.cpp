// SPDX-License-Identifier: MIT
#include "llmdlq/kafka/replay_source.hpp"

#include <charconv>
#include <map>
#include <set>

#include "dlq_dialects.hpp"
#include "kafka_common.hpp"
#include "llmdlq/detail/store/record_check.hpp"

LLMDLQ_BEGIN_NAMESPACE

using namespace kafka_detail;

namespace {

using offsets = std::map<std::int32_t, std::int64_t>;  // partition → last offset read

// A position the source wrote; pairs it cannot read are ignored (the
// partition starts from its beginning).
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
    const char* end = pair.data() + pair.size();
    if (std::from_chars(pair.data(), pair.data() + colon, partition).ptr != pair.data() + colon ||
        std::from_chars(pair.data() + colon + 1, end, offset).ptr != end) {
      continue;
    }
    read[partition] = offset;
  }
  return read;
}

std::string format_position(const offsets& read) {
  std::string text;
  for (const auto& [partition, offset] : read) {
    if (!text.empty()) text.push_back(',');
    fmt::format_to(std::back_inserter(text), "{}:{}", partition, offset);
  }
  return text;
}

// Whether the cluster refuses the topic itself (reading it again gets the same answer), not just fails.
bool refuses_topic(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED: return true;
    default: return false;
  }
}

// The message's envelope: llmdlq's own, else one made for a dead letter of
// Kafka Connect's or Spring Kafka's; else why it is neither.
expected<envelope, std::string> read_letter(const rd_kafka_message_t& message) {
  auto own = parse_envelope(std::string_view(static_cast<const char*>(message.payload), message.len));
  if (own) return std::move(*own);
  auto foreign = read_foreign_letter(message);
  if (!foreign) return unexpected(std::move(foreign.error()));
  if (!*foreign) return unexpected(detail::store::envelope_reason(own.error()));
  return std::move(**foreign);
}

replay_error read_failure(rd_kafka_resp_err_t err, std::string message) {
  const replay_errc code = refuses_topic(err) ? replay_errc::source_refused : replay_errc::source_unavailable;
  return {code, std::move(message), {}, {}};
}

}  // namespace

struct kafka_replay_source::impl {
  kafka_topic_options options;
  handle_context context{&options.log, this};
  rd_kafka_t* consumer = nullptr;
  std::vector<std::int32_t> partitions;
  std::size_t skipped = 0;
  std::vector<unreadable_record> skipped_messages;  // the first max_listed_unreadable of them
  offsets skipped_up_to;  // the last message counted in `skipped`, by partition: a page read again counts none twice

  ~impl() {
    if (consumer == nullptr) return;
    rd_kafka_consumer_close(consumer);
    rd_kafka_destroy(consumer);
  }

  // Assigns every partition, each just after the offset `read` names.
  expected<void, replay_error> assign(const offsets& read) {
    partition_list_ptr assignment(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
    for (const std::int32_t p : partitions) {
      const auto it = read.find(p);
      rd_kafka_topic_partition_list_add(assignment.get(), options.topic.c_str(), p)->offset =
          it == read.end() ? RD_KAFKA_OFFSET_BEGINNING : it->second + 1;
    }
    if (const rd_kafka_resp_err_t err = rd_kafka_assign(consumer, assignment.get());
        err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return unexpected(read_failure(err, fmt::format("kafka: assigning {}: {}", options.topic, errstr_of(err))));
    }
    return {};
  }
};

kafka_replay_source::kafka_replay_source(std::unique_ptr<impl> state) noexcept : impl_(std::move(state)) {}
kafka_replay_source::kafka_replay_source(kafka_replay_source&&) noexcept = default;
kafka_replay_source& kafka_replay_source::operator=(kafka_replay_source&&) noexcept = default;
kafka_replay_source::~kafka_replay_source() = default;
const std::string& kafka_replay_source::topic() const noexcept { return impl_->options.topic; }
std::size_t kafka_replay_source::skipped() const noexcept { return impl_->skipped; }
const std::vector<unreadable_record>& kafka_replay_source::skipped_messages() const noexcept {
  return impl_->skipped_messages;
}

expected<kafka_replay_source, kafka_error> kafka_replay_source::open(kafka_topic_options options) {
  if (options.topic.empty()) {
    return unexpected(kafka_error{kafka_errc::invalid_configuration, "kafka: the topic name is empty"});
  }
  auto state = std::make_unique<impl>();
  state->options = std::move(options);
  kafka_properties properties = state->options.properties;
  properties.try_emplace("group.id", "llmdlq-replay");  // librdkafka wants one; no group is joined
  auto conf = make_conf(properties,
                        {{"enable.auto.commit", "false"},
                         {"enable.partition.eof", "true"},
                         {"allow.auto.create.topics", "false"}},  // reading a topic never makes one
                        &state->context);
  if (!conf) return unexpected(std::move(conf.error()));
  char errstr[512];
  state->consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf->get(), errstr, sizeof errstr);
  if (state->consumer == nullptr) {
    return unexpected(kafka_error{kafka_errc::invalid_configuration, fmt::format("kafka: consumer: {}", errstr)});
  }
  (void)conf->release();  // the consumer owns it now
  auto partitions = topic_partitions(state->consumer, state->options.topic, state->options.timeout);
  if (!partitions) return unexpected(std::move(partitions.error()));
  state->partitions = std::move(*partitions);
  return kafka_replay_source(std::move(state));
}

expected<std::vector<stored_letter>, replay_error> kafka_replay_source::next(std::string_view after,
                                                                             std::size_t limit) {
  impl& s = *impl_;
  offsets read = parse_position(after);
  if (auto assigned = s.assign(read); !assigned) return unexpected(std::move(assigned.error()));
  std::vector<stored_letter> letters;
  // Each partition ends once: one that hears of new messages after its end ends again.
  std::set<std::int32_t> at_end;
  std::optional<replay_error> failure;
  const auto deadline = std::chrono::steady_clock::now() + s.options.timeout;
  while (letters.size() < limit && at_end.size() < s.partitions.size()) {
    if (std::chrono::steady_clock::now() > deadline) {
      failure = read_failure(RD_KAFKA_RESP_ERR__TIMED_OUT,
                             fmt::format("kafka: no answer from the cluster for {} in time", s.options.topic));
      break;
    }
    message_ptr message(rd_kafka_consumer_poll(s.consumer, 200));
    if (!message) continue;
    if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end.insert(message->partition);
    } else if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      failure = read_failure(message->err, fmt::format("kafka: reading {}: {}", s.options.topic,
                                                       rd_kafka_message_errstr(message.get())));
      break;
    } else {
      read[message->partition] = message->offset;
      auto letter = read_letter(*message);
      if (letter) {
        letters.push_back({std::move(*letter), format_position(read), {}});
      } else if (const auto counted = s.skipped_up_to.find(message->partition);
                 counted == s.skipped_up_to.end() || counted->second < message->offset) {
        s.skipped_up_to[message->partition] = message->offset;
        ++s.skipped;
        if (s.skipped_messages.size() < max_listed_unreadable) {
          s.skipped_messages.push_back({fmt::format("partition {} offset {}", message->partition, message->offset),
                                        std::move(letter.error())});
        }
      }
    }
  }
  rd_kafka_assign(s.consumer, nullptr);
  if (failure) return unexpected(std::move(*failure));
  return letters;
}

LLMDLQ_END_NAMESPACE
