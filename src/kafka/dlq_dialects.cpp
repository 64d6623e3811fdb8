// SPDX-License-Identifier: MIT
// Kafka Connect's and Spring Kafka's dead letters read as llmdlq letters: the
// failed record's place from the dialect's headers, its value judged as
// process_llm_response judges a response.
//
// The headers, as those projects write them (read in their sources):
//  - Kafka Connect: DeadLetterQueueReporter.populateContextHeaders
//    (apache/kafka, connect/runtime/src/main/java/org/apache/kafka/connect/
//    runtime/errors/DeadLetterQueueReporter.java) adds `__connect.errors.`
//    followed by topic, partition and offset (String.valueOf: decimal text),
//    connector.name, task.id, stage, class.name, exception.class.name,
//    exception.message and exception.stacktrace, all UTF-8, each only when
//    the record has no header of that name yet (it copies the failed
//    record's headers first): the first of a name is Connect's. The record
//    keeps the failed record's key, value and timestamp.
//  - Spring Kafka: DeadLetterPublishingRecoverer.maybeAddOriginalHeaders and
//    addExceptionInfoHeaders (spring-projects/spring-kafka, spring-kafka/src/
//    main/java/org/springframework/kafka/listener/), named by
//    KafkaHeaders.DLT_*: `kafka_dlt-original-topic` UTF-8,
//    `-original-partition` ByteBuffer.putInt (4 bytes, big-endian),
//    `-original-offset` and `-original-timestamp` putLong (8 bytes, the
//    timestamp -1 when the record had none); `kafka_dlt-exception-fqcn` and
//    `-message` UTF-8. The value is the failed record's. The original headers
//    are appended at every hop through a retry or dead-letter topic
//    (setAppendOriginalHeaders, true by default; false keeps only the
//    first), so the first names the record that failed first; an exception
//    header replaces the one before it (setStripPreviousExceptionHeaders,
//    true by default) or follows it, so the last names the latest failure.
#include "dlq_dialects.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "llmdlq/detail/store/record_check.hpp"
#include "llmdlq/dlq_id.hpp"
#include "llmdlq/kafka/sink.hpp"
#include "llmdlq/process.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace kafka_detail {
namespace {

namespace connect = kafka_connect_header_names;
namespace spring = spring_dlt_header_names;

// A record's headers by name; a header without a value reads as empty.
class header_list {
 public:
  explicit header_list(const rd_kafka_message_t& message) noexcept {
    if (rd_kafka_message_headers(&message, &headers_) != RD_KAFKA_RESP_ERR_NO_ERROR) headers_ = nullptr;
  }
  [[nodiscard]] std::optional<std::string_view> first(std::string_view name) const { return find(name, false); }
  [[nodiscard]] std::optional<std::string_view> last(std::string_view name) const { return find(name, true); }

 private:
  [[nodiscard]] std::optional<std::string_view> find(std::string_view name, bool last) const {
    if (headers_ == nullptr) return std::nullopt;
    const std::string key(name);
    const void* value = nullptr;
    std::size_t size = 0;
    const rd_kafka_resp_err_t err = last ? rd_kafka_header_get_last(headers_, key.c_str(), &value, &size)
                                         : rd_kafka_header_get(headers_, 0, key.c_str(), &value, &size);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
    return value == nullptr ? std::string_view() : std::string_view(static_cast<const char*>(value), size);
  }
  rd_kafka_headers_t* headers_ = nullptr;
};

// What a dialect's headers say of the record that failed.
struct failed_record {
  std::string_view dialect;              // `connect` or `spring`: the failure codes' prefix
  std::string_view who;                  // Kafka Connect, Spring Kafka
  origin_reference origin;               // with its topic, partition and offset
  std::optional<timestamp> received_at;  // the failed record's own time, when the headers give it
  std::string exception_class;
  std::string exception_message;
};

// A failed record, nothing (the record does not speak the dialect), or why its headers do not name one.
using failed_record_reading = expected<std::optional<failed_record>, std::string>;

// A number Connect wrote with String.valueOf.
template <class Int>
expected<Int, std::string> decimal_header(std::string_view name, std::string_view text) {
  Int value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) {
    return unexpected(fmt::format("{} is {}, not a decimal {}", name, detail::store::quoted_value(text),
                                  sizeof(Int) == 4 ? "int" : "long"));
  }
  return value;
}

// A number Spring wrote with ByteBuffer.putInt or putLong.
template <class Int>
expected<Int, std::string> binary_header(std::string_view name, std::string_view bytes) {
  const auto value = from_big_endian<Int>(bytes);
  if (!value) {
    return unexpected(fmt::format("{} is {} bytes, not the {} of a big-endian {}", name, bytes.size(), sizeof(Int),
                                  sizeof(Int) == 4 ? "int" : "long"));
  }
  return *value;
}

// How a dialect names and writes the failed record's place.
struct origin_dialect {
  std::string_view dialect;  // the failure codes' prefix
  std::string_view who;
  std::array<std::string_view, 3> names;  // the topic's, the partition's and the offset's header
  expected<std::int32_t, std::string> (*partition)(std::string_view name, std::string_view value);
  expected<std::int64_t, std::string> (*offset)(std::string_view name, std::string_view value);
};

constexpr origin_dialect connect_origin{"connect",
                                        "Kafka Connect",
                                        {connect::topic, connect::partition, connect::offset},
                                        decimal_header<std::int32_t>,
                                        decimal_header<std::int64_t>};
constexpr origin_dialect spring_origin{"spring",
                                       "Spring Kafka",
                                       {spring::original_topic, spring::original_partition, spring::original_offset},
                                       binary_header<std::int32_t>,
                                       binary_header<std::int64_t>};

// The failed record with its topic, partition and offset (the first header
// of each name); nothing when the record has none of the three, why not
// when it has only some or one does not read.
failed_record_reading read_origin(const origin_dialect& d, const header_list& headers) {
  const std::array found{headers.first(d.names[0]), headers.first(d.names[1]), headers.first(d.names[2])};
  if (!found[0] && !found[1] && !found[2]) return std::optional<failed_record>();
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (!found[i]) return unexpected(fmt::format("{} dead letter without {}", d.who, d.names[i]));
  }
  if (found[0]->empty()) return unexpected(fmt::format("{}: {} is empty", d.who, d.names[0]));
  auto partition = d.partition(d.names[1], *found[1]);
  if (!partition) return unexpected(fmt::format("{}: {}", d.who, partition.error()));
  auto offset = d.offset(d.names[2], *found[2]);
  if (!offset) return unexpected(fmt::format("{}: {}", d.who, offset.error()));
  for (const auto& [name, value] : {std::pair{d.names[1], std::int64_t{*partition}}, std::pair{d.names[2], *offset}}) {
    if (value < 0) return unexpected(fmt::format("{}: {} is {}, not at least 0", d.who, name, value));
  }
  failed_record r{d.dialect, d.who, {}, std::nullopt, {}, {}};
  r.origin.topic = found[0].value_or(std::string_view());  // present (checked above), said so for GCC's -O3 analysis
  r.origin.partition = *partition;
  r.origin.offset = *offset;
  return r;
}

failed_record_reading read_connect(const header_list& headers) {
  auto read = read_origin(connect_origin, headers);
  if (!read || !*read) return read;
  failed_record& r = **read;
  const std::string_view connector = headers.first(connect::connector_name).value_or("");
  r.origin.service = connector.empty() ? std::string("kafka-connect") : fmt::format("kafka-connect/{}", connector);
  r.origin.worker = headers.first(connect::task_id).value_or("");
  r.exception_class = headers.first(connect::exception_class).value_or("");
  r.exception_message = headers.first(connect::exception_message).value_or("");
  return read;
}

failed_record_reading read_spring(const header_list& headers) {
  auto read = read_origin(spring_origin, headers);
  if (!read || !*read) return read;
  failed_record& r = **read;
  r.origin.service = "spring-kafka";
  if (const auto at = headers.first(spring::original_timestamp)) {
    auto millis = binary_header<std::int64_t>(spring::original_timestamp, *at);
    if (!millis) return unexpected(fmt::format("{}: {}", r.who, millis.error()));
    if (*millis >= 0) r.received_at = timestamp(std::chrono::milliseconds(*millis));  // -1: the record had none
  }
  r.exception_class = headers.last(spring::exception_fqcn).value_or("");
  r.exception_message = headers.last(spring::exception_message).value_or("");
  return read;
}

// The envelope process_llm_response makes of the value, judged against no
// schema without repair (empty, poison, truncated, syntax); a value that is
// JSON failed the other processor's own check: `schema`, coded by its exception.
// `written_at`: the dead letter's own timestamp, when it has one.
envelope letter_of(const failed_record& r, std::string_view value, std::optional<timestamp> written_at) {
  static const schema anything = *schema::compile("true");
  request_context context;
  // kafka_input::position(): the key a worker of llmdlq's gives the same input.
  context.idempotency_key = fmt::format("{}/{}@{}", r.origin.topic, *r.origin.partition, *r.origin.offset);
  context.origin = r.origin;
  context.received_at = r.received_at ? r.received_at : written_at;  // none: a dlq_id of the key alone, as stable
  process_config config;
  config.judging.repair = repair_mode::off;
  config.envelope.clock = [created_at = written_at.value_or(system_now())] { return created_at; };
  const std::string prefix = std::string(r.dialect) + ".";
  config.envelope.failure_code = [&prefix](failure_category c) { return prefix + default_failure_code(c); };
  auto judged = process_llm_response(value, anything, context, config);
  if (!judged) return std::move(judged.error());
  const std::string code = prefix + (r.exception_class.empty() ? std::string("unknown") : r.exception_class);
  config.envelope.failure_code = [&code](failure_category) { return code; };
  std::string message = r.exception_message;
  if (message.empty()) message = fmt::format("{} gave no exception message", r.who);
  return make_envelope({.category = failure_category::schema, .message = std::move(message)}, value, context, config);
}

}  // namespace

expected<std::optional<envelope>, std::string> read_foreign_letter(const rd_kafka_message_t& message) {
  const header_list headers(message);
  if (headers.first(kafka_header_names::dlq_id)) return std::nullopt;
  auto failed = read_connect(headers);
  if (failed && !*failed) failed = read_spring(headers);
  if (!failed) return unexpected(std::move(failed.error()));
  if (!*failed) return std::nullopt;
  rd_kafka_timestamp_type_t type;
  const std::int64_t millis = rd_kafka_message_timestamp(&message, &type);
  const auto written_at = millis >= 0 ? std::optional(timestamp(std::chrono::milliseconds(millis))) : std::nullopt;
  const std::string_view value(static_cast<const char*>(message.payload), message.payload != nullptr ? message.len : 0);
  return letter_of(**failed, value, written_at);
}

}  // namespace kafka_detail
LLMDLQ_END_NAMESPACE
