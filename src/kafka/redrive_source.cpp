// SPDX-License-Identifier: MIT
// kafka_redrive_source: a consumer assigned to one offset at a time, and
// kafka_producer for the sends.
#include "llmdlq/kafka/redrive_source.hpp"

#include <utility>

#include "kafka_common.hpp"
#include "llmdlq/detail/identifiers.hpp"

LLMDLQ_BEGIN_NAMESPACE

using namespace kafka_detail;

namespace {

bool is_link_header(std::string_view name) {
  return name == kafka_redrive_header_names::of || name == kafka_redrive_header_names::attempt ||
         name == kafka_redrive_header_names::idempotency_key;
}

// The record a consumer read, as an input to send again.
void copy_record(const rd_kafka_message_t& m, redrive_input& input) {
  if (m.key != nullptr) input.key.assign(static_cast<const char*>(m.key), m.key_len);
  if (m.payload != nullptr) input.value.assign(static_cast<const char*>(m.payload), m.len);
  for (auto& header : headers_of(m)) {
    if (is_link_header(header.name)) continue;  // a link of an earlier redrive is replaced
    input.headers.emplace_back(std::move(header.name), std::move(header.value));
  }
}

}  // namespace

struct kafka_redrive_source::impl {
  kafka_redrive_options options;
  kafka_producer producer;
  handle_context context{&options.log, this};
  rd_kafka_t* reader = nullptr;

  impl(kafka_redrive_options o, kafka_producer p) : options(std::move(o)), producer(std::move(p)) {}
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl() { close_reader(reader); }

  expected<void, replay_error> open_reader() {
    // A record that is gone is an error, not a jump to the partition's start or end.
    auto made = assigned_reader(options.properties, "llmdlq-redrive", &context, {{"auto.offset.reset", "error"}});
    if (!made) return unexpected(target_error_of(std::move(made.error())));
    reader = *made;
    return {};
  }

  // Whether `record` holds the letter's input: the text the model saw, or the answer the worker read.
  [[nodiscard]] bool is_input_of(const redrive_input& record, const envelope& letter) const {
    if (!options.verify_records) return true;
    const std::string hash = detail::sha256_hex(record.value);
    return hash == letter.raw_response.sha256 || (letter.original_input && hash == letter.original_input->sha256);
  }

  // The record at `origin`, or nothing when it is gone.
  expected<std::optional<redrive_input>, replay_error> read(const origin_reference& origin) {
    partition_list_ptr at(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(at.get(), origin.topic.c_str(), *origin.partition)->offset = *origin.offset;
    if (const auto err = rd_kafka_assign(reader, at.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return detail::target_failure(replay_errc::target_unavailable,
                                    fmt::format("kafka: assigning {} partition {}: {}", origin.topic, *origin.partition,
                                                errstr_of(err)));
    }
    std::optional<redrive_input> found;
    std::optional<replay_error> failed;
    const auto deadline = std::chrono::steady_clock::now() + options.read_timeout;
    while (true) {
      if (std::chrono::steady_clock::now() > deadline) {
        failed = replay_error{replay_errc::target_unavailable,
                              fmt::format("kafka: reading {} partition {} offset {} took longer than {} ms",
                                          origin.topic, *origin.partition, *origin.offset,
                                          options.read_timeout.count()),
                              {},
                              {}};
        break;
      }
      message_ptr m(rd_kafka_consumer_poll(reader, 200));
      if (!m) continue;
      // The end of the partition, or an offset below its start: the record is gone.
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF || m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE ||
          m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET) {
        break;
      }
      if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        const bool refused = m->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
                             m->err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
                             m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
        if (refused) break;  // the topic is gone too: the stored input may stand in
        failed = replay_error{replay_errc::target_unavailable,
                              fmt::format("kafka: reading {}: {}", origin.topic, rd_kafka_message_errstr(m.get())),
                              {},
                              {}};
        break;
      }
      if (m->offset == *origin.offset) {  // a later one: compacted away
        copy_record(*m, found.emplace());
      }
      break;
    }
    rd_kafka_assign(reader, nullptr);
    if (failed) return unexpected(std::move(*failed));
    return found;
  }
};

kafka_redrive_source::kafka_redrive_source(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
kafka_redrive_source::kafka_redrive_source(kafka_redrive_source&&) noexcept = default;
kafka_redrive_source& kafka_redrive_source::operator=(kafka_redrive_source&&) noexcept = default;
kafka_redrive_source::~kafka_redrive_source() = default;

expected<kafka_redrive_source, replay_error> kafka_redrive_source::open(kafka_redrive_options options) {
  auto producer = target_producer(options.properties, options.delivery_timeout, options.log);
  if (!producer) return unexpected(std::move(producer.error()));
  auto state = std::make_unique<impl>(std::move(options), std::move(*producer));
  if (auto opened = state->open_reader(); !opened) return unexpected(std::move(opened.error()));
  return kafka_redrive_source(std::move(state));
}

expected<redrive_input, replay_error> kafka_redrive_source::fetch(const envelope& letter) {
  impl& s = *impl_;
  const origin_reference& origin = letter.origin;
  const std::string destination = s.options.topic.empty() ? origin.topic : s.options.topic;
  // Why the record itself cannot be sent, when it cannot.
  std::string missing = "the letter names no Kafka record of origin";
  if (!origin.topic.empty() && origin.partition && origin.offset) {
    const std::string where = fmt::format("{}/{}@{}", origin.topic, *origin.partition, *origin.offset);
    auto record = s.read(origin);
    if (!record) return unexpected(std::move(record.error()));
    if (!*record) {
      missing = fmt::format("its record {} is gone", where);
    } else if (!s.is_input_of(**record, letter)) {
      missing = fmt::format("the record at {} is not its input (another hash: a topic made again, another cluster?)",
                            where);
    } else {
      (*record)->destination = destination;
      (*record)->from = where;
      return std::move(**record);
    }
  }
  if (destination.empty()) {
    return detail::target_failure(replay_errc::target_refused, missing + ", and no topic was given to send it to");
  }
  auto stored = stored_original_input(letter, s.options.cipher);
  if (!stored) {
    return detail::target_failure(replay_errc::target_refused, fmt::format("{}, and {}", missing, stored.error()));
  }
  return redrive_input{.destination = destination,
                       .from = "the stored input",
                       .key = letter.idempotency_key,
                       .idempotency_key = letter.idempotency_key,
                       .value = std::move(*stored),
                       .headers = {}};
}

expected<void, replay_error> kafka_redrive_source::send(const redrive_input& input, const redrive_reference& link) {
  kafka_record record{input.destination, -1, input.key, input.value, {}};
  for (const auto& [name, value] : input.headers) record.headers.push_back({name, value});
  record.headers.push_back({std::string(kafka_redrive_header_names::of), link.of});
  record.headers.push_back({std::string(kafka_redrive_header_names::attempt), std::to_string(link.count)});
  if (!input.idempotency_key.empty()) {
    record.headers.push_back({std::string(kafka_redrive_header_names::idempotency_key), input.idempotency_key});
  }
  if (auto sent = impl_->producer.send(record); !sent) return unexpected(target_error_of(std::move(sent.error())));
  return {};
}

LLMDLQ_END_NAMESPACE
