// SPDX-License-Identifier: MIT
#include "llmdlq/kafka/replay_source.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "client_calls.hpp"
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

// Whether a commit was turned down because the group is rebalancing (the
// partition's next owner starts from the offset committed before), not failed.
bool turned_down_by_rebalance(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION:
    case RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID:
    case RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST:
    case RD_KAFKA_RESP_ERR__STATE: return true;
    default: return false;
  }
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

  // With a group: what the group assigns this source, and where it stands.
  struct held_partition {
    std::int64_t committed = RD_KAFKA_OFFSET_INVALID;  // the group's offset: the next message not passed
    bool at_end = false;                               // read to its end since the last message
  };
  // Guards `held`: the replayer's workers call passed() while its reader is in next().
  mutable std::mutex held_mutex;
  bool assigned = false;  // the group assigned this source partitions (maybe none), and no rebalance is under way
  std::map<std::int32_t, held_partition> held;
  offsets reading;  // the last message read on each held partition: the letters' positions
  offsets known;    // the furthest offset `after` named or this source read, by partition
  std::optional<replay_error> rebalance_failure;

  ~impl() {
    if (consumer == nullptr) return;
    rd_kafka_consumer_close(consumer);
    rd_kafka_destroy(consumer);
  }

  [[nodiscard]] bool grouped() const { return !options.group.empty(); }

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

  static void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions,
                           void* opaque) {
    auto* self = static_cast<impl*>(static_cast<handle_context*>(opaque)->owner);
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      self->take(partitions);
    } else {
      self->give_up(partitions);
    }
    follow_rebalance(rk, err, partitions);
  }

  // Each partition starts at the group's committed offset, or after the
  // furthest one this source knows to be read, when that is further on.
  void take(rd_kafka_topic_partition_list_t* given) {
    if (const rd_kafka_resp_err_t err = rd_kafka_committed(consumer, given, milliseconds_of(options.timeout));
        err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      // Without the group's offsets the partitions are taken from where
      // the group stands (the consumer fetches them), and the next() fails.
      rebalance_failure = read_failure(err, fmt::format("kafka: reading the committed offsets of {}: {}", options.topic,
                                                        errstr_of(err)));
      for (int i = 0; i < given->cnt; ++i) given->elems[i].offset = RD_KAFKA_OFFSET_INVALID;
    }
    const std::lock_guard lock(held_mutex);
    for (int i = 0; i < given->cnt; ++i) {
      auto& partition = given->elems[i];
      held_partition h;
      h.committed = partition.err == RD_KAFKA_RESP_ERR_NO_ERROR ? partition.offset : RD_KAFKA_OFFSET_INVALID;
      if (const auto it = known.find(partition.partition);
          it != known.end() && (partition.offset < 0 || it->second + 1 > partition.offset)) {
        partition.offset = it->second + 1;
      }
      partition.err = RD_KAFKA_RESP_ERR_NO_ERROR;
      held[partition.partition] = h;
      // Every letter before the start is done with, or read by this
      // source before the letters it reads now: the positions say so.
      if (partition.offset > 0) {
        reading[partition.partition] = partition.offset - 1;
      } else {
        reading.erase(partition.partition);
      }
    }
    assigned = true;
  }

  void give_up(const rd_kafka_topic_partition_list_t* taken) {
    const std::lock_guard lock(held_mutex);
    for (int i = 0; i < taken->cnt; ++i) {
      held.erase(taken->elems[i].partition);
      reading.erase(taken->elems[i].partition);
    }
    // An eager rebalance takes every partition and assigns them anew; a cooperative one moves only these.
    if (rebalance_protocol(consumer) != "COOPERATIVE") assigned = false;
  }

  // The message read, as the letters' positions count it.
  void note_read(std::int32_t partition, std::int64_t offset) {
    auto& furthest = known.try_emplace(partition, offset).first->second;
    furthest = std::max(furthest, offset);
    if (grouped()) {
      reading[partition] = offset;
      const std::lock_guard lock(held_mutex);
      if (const auto h = held.find(partition); h != held.end()) h->second.at_end = false;
    }
  }

  // Whether the pass is over: every partition (with a group, every one it
  // holds) is read to its end.
  [[nodiscard]] bool read_to_end(const std::set<std::int32_t>& at_end) const {
    if (!grouped()) return at_end.size() >= partitions.size();
    if (!assigned) return false;
    const std::lock_guard lock(held_mutex);
    return std::all_of(held.begin(), held.end(), [](const auto& h) { return h.second.at_end; });
  }

  void reached_end(std::int32_t partition, std::set<std::int32_t>& at_end) {
    at_end.insert(partition);
    const std::lock_guard lock(held_mutex);
    if (const auto h = held.find(partition); h != held.end()) h->second.at_end = true;
  }

  [[nodiscard]] bool holds(std::int32_t partition) const {
    if (!grouped()) return true;
    const std::lock_guard lock(held_mutex);
    return held.contains(partition);
  }

  expected<void, replay_error> subscribe() {
    partition_list_ptr topics(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(topics.get(), options.topic.c_str(), RD_KAFKA_PARTITION_UA);
    if (const rd_kafka_resp_err_t err = rd_kafka_subscribe(consumer, topics.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return unexpected(read_failure(err, fmt::format("kafka: subscribing to {} in group {}: {}", options.topic,
                                                      options.group, errstr_of(err))));
    }
    return {};
  }

  // Commits the offset after `done`'s on each partition held, where it is
  // further on than the group's. The commit waits for the cluster outside
  // the lock: a rebalance meanwhile turns it down, or it commits letters
  // that are done all the same.
  expected<void, replay_error> commit(const offsets& done) {
    partition_list_ptr list(rd_kafka_topic_partition_list_new(static_cast<int>(done.size())));
    {
      const std::lock_guard lock(held_mutex);
      for (const auto& [partition, offset] : done) {
        const auto h = held.find(partition);
        if (h == held.end() || offset + 1 <= h->second.committed) continue;
        rd_kafka_topic_partition_list_add(list.get(), options.topic.c_str(), partition)->offset = offset + 1;
      }
    }
    if (list->cnt == 0) return {};
    rd_kafka_resp_err_t err = rd_kafka_commit(consumer, list.get(), 0);
    for (int i = 0; i < list->cnt && err == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) err = list->elems[i].err;
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const std::lock_guard lock(held_mutex);
      for (int i = 0; i < list->cnt; ++i) {
        if (const auto h = held.find(list->elems[i].partition); h != held.end()) {
          h->second.committed = std::max(h->second.committed, list->elems[i].offset);
        }
      }
      return {};
    }
    if (turned_down_by_rebalance(err)) return {};
    return unexpected(read_failure(err, fmt::format("kafka: committing the offsets of {} in group {}: {}",
                                                    options.topic, options.group, errstr_of(err))));
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

std::vector<std::int32_t> kafka_replay_source::assigned() const {
  if (!impl_->grouped()) return impl_->partitions;
  std::vector<std::int32_t> held;
  const std::lock_guard lock(impl_->held_mutex);
  for (const auto& [partition, h] : impl_->held) held.push_back(partition);
  return held;
}

expected<kafka_replay_source, kafka_error> kafka_replay_source::open(kafka_topic_options options) {
  if (options.topic.empty()) {
    return unexpected(kafka_error{kafka_errc::invalid_configuration, "kafka: the topic name is empty"});
  }
  auto state = std::make_unique<impl>();
  state->options = std::move(options);
  kafka_properties properties = state->options.properties;
  if (state->grouped()) {
    properties.insert_or_assign("group.id", state->options.group);
    properties.try_emplace("auto.offset.reset", "earliest");
  } else {
    properties.try_emplace("group.id", "llmdlq-replay");  // librdkafka wants one; no group is joined
  }
  auto conf = make_conf(properties,
                        {{"enable.auto.commit", "false"},
                         {"enable.partition.eof", "true"},
                         {"allow.auto.create.topics", "false"}},  // reading a topic never makes one
                        &state->context);
  if (!conf) return unexpected(std::move(conf.error()));
  if (state->grouped()) rd_kafka_conf_set_rebalance_cb(conf->get(), impl::on_rebalance);
  char errstr[512];
  state->consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf->get(), errstr, sizeof errstr);
  if (state->consumer == nullptr) {
    return unexpected(kafka_error{kafka_errc::invalid_configuration, fmt::format("kafka: consumer: {}", errstr)});
  }
  (void)conf->release();  // the consumer owns it now
  auto partitions = topic_partitions(state->consumer, state->options.topic, state->options.timeout);
  if (!partitions) return unexpected(std::move(partitions.error()));
  state->partitions = std::move(*partitions);
  if (state->grouped()) {
    if (auto subscribed = state->subscribe(); !subscribed) {
      return unexpected(kafka_error{kafka_errc::unavailable, std::move(subscribed.error().message)});
    }
  }
  return kafka_replay_source(std::move(state));
}

expected<std::vector<stored_letter>, replay_error> kafka_replay_source::next(std::string_view after,
                                                                             std::size_t limit) {
  impl& s = *impl_;
  offsets read = parse_position(after);
  if (s.grouped()) {
    // What `after` says of a partition counts when the group assigns it this source.
    for (const auto& [partition, offset] : read) {
      auto& furthest = s.known.try_emplace(partition, offset).first->second;
      furthest = std::max(furthest, offset);
    }
  } else if (auto assigned = s.assign(read); !assigned) {
    return unexpected(std::move(assigned.error()));
  }
  std::vector<stored_letter> letters;
  // Each partition ends once: one that hears of new messages after its end ends again.
  std::set<std::int32_t> at_end;
  std::optional<replay_error> failure;
  // With a group, the wait is for the cluster's answers: joining the group and a rebalance take their time.
  auto deadline = std::chrono::steady_clock::now() + s.options.timeout;
  // A group's member polls once at least: what the group did meanwhile (a
  // rebalance, new messages) is heard in a poll.
  bool polled = !s.grouped();
  while (letters.size() < limit && (!polled || !s.read_to_end(at_end))) {
    if (s.rebalance_failure) {
      failure = std::exchange(s.rebalance_failure, std::nullopt);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      failure = read_failure(RD_KAFKA_RESP_ERR__TIMED_OUT,
                             fmt::format("kafka: no answer from the cluster for {} in time", s.options.topic));
      break;
    }
    message_ptr message(rd_kafka_consumer_poll(s.consumer, 200));
    polled = true;
    if (!message) continue;
    if (s.grouped()) deadline = std::chrono::steady_clock::now() + s.options.timeout;
    if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      s.reached_end(message->partition, at_end);
    } else if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      failure = read_failure(message->err, fmt::format("kafka: reading {}: {}", s.options.topic,
                                                       rd_kafka_message_errstr(message.get())));
      break;
    } else if (s.holds(message->partition)) {
      s.note_read(message->partition, message->offset);
      offsets& positions = s.grouped() ? s.reading : read;
      positions[message->partition] = message->offset;
      auto letter = read_letter(*message);
      if (letter) {
        letters.push_back({std::move(*letter), format_position(positions), {}});
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
  if (!s.grouped()) rd_kafka_assign(s.consumer, nullptr);
  if (failure) return unexpected(std::move(*failure));
  return letters;
}

expected<void, replay_error> kafka_replay_source::passed(std::string_view position) {
  if (!impl_->grouped()) return {};
  return impl_->commit(parse_position(position));
}

LLMDLQ_END_NAMESPACE
