// SPDX-License-Identifier: MIT
// Dead-letter topics Kafka Connect and Spring Kafka wrote, read by
// kafka_replay_source and kafka_topic_store on librdkafka's mock cluster:
// the records are produced with plain librdkafka, with the headers and byte
// encodings DeadLetterQueueReporter and DeadLetterPublishingRecoverer write.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <llmdlq/dlq_id.hpp>
#include <llmdlq/kafka/replay_source.hpp>
#include <llmdlq/kafka/sink.hpp>
#include <llmdlq/kafka/topic_store.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"
#include "kafka_test_support.hpp"
#include "support/envelope_check.hpp"

namespace kafka_foreign_letters_test {

namespace {

using namespace std::string_literals;
using llmdlq::failure_category;
using llmdlq::test::mock_cluster;
using llmdlq::test::raw_record;
namespace connect = llmdlq::kafka_connect_header_names;
namespace spring = llmdlq::spring_dlt_header_names;

llmdlq::timestamp at(std::string_view rfc3339) { return llmdlq::parse_rfc3339(rfc3339).value(); }
std::int64_t millis(llmdlq::timestamp t) { return t.time_since_epoch().count(); }

std::string java_int(std::int32_t v) { return llmdlq::test::java_bytes(v); }
std::string java_long(std::int64_t v) { return llmdlq::test::java_bytes(v); }

// The headers DeadLetterQueueReporter adds with context headers enabled,
// after the failed record's own.
std::vector<llmdlq::kafka_header> connect_headers(const std::string& partition, const std::string& offset,
                                                  bool with_exception = true) {
  std::vector<llmdlq::kafka_header> h{
      {"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
      {std::string(connect::topic), "receipts"},
      {std::string(connect::partition), partition},
      {std::string(connect::offset), offset},
      {std::string(connect::connector_name), "receipts-s3-sink"},
      {std::string(connect::task_id), "0"},
      {std::string(connect::stage), "VALUE_CONVERTER"},
      {std::string(connect::class_name), "org.apache.kafka.connect.json.JsonConverter"}};
  if (with_exception) {
    h.push_back({std::string(connect::exception_class), "org.apache.kafka.connect.errors.DataException"});
    h.push_back({std::string(connect::exception_message),
                 "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields"});
    h.push_back({"__connect.errors.exception.stacktrace",
                 "org.apache.kafka.connect.errors.DataException: JsonConverter with schemas.enable requires ...\n"
                 "\tat org.apache.kafka.connect.json.JsonConverter.toConnectData(JsonConverter.java:328)\n"});
  }
  return h;
}

// The headers DeadLetterPublishingRecoverer adds for one failure of the record at topic/partition@offset.
std::vector<llmdlq::kafka_header> spring_original(const std::string& topic, std::int32_t partition, std::int64_t offset,
                                                  std::int64_t timestamp_ms) {
  return {{std::string(spring::original_topic), topic},
          {std::string(spring::original_partition), java_int(partition)},
          {std::string(spring::original_offset), java_long(offset)},
          {std::string(spring::original_timestamp), java_long(timestamp_ms)},
          {"kafka_dlt-original-timestamp-type", "CreateTime"}};
}
std::vector<llmdlq::kafka_header> spring_exception(const std::string& fqcn, const std::string& message) {
  return {
      {std::string(spring::exception_fqcn), fqcn},
      {"kafka_dlt-exception-cause-fqcn", "java.lang.IllegalArgumentException"},
      {std::string(spring::exception_message), message},
      {"kafka_dlt-exception-stacktrace", fqcn + ": " + message + "\n\tat com.example.Orders.listen(Orders.java:42)\n"}};
}
template <class... Lists>
std::vector<llmdlq::kafka_header> joined(Lists... lists) {
  std::vector<llmdlq::kafka_header> all;
  (all.insert(all.end(), lists.begin(), lists.end()), ...);
  return all;
}

llmdlq::kafka_topic_options topic_options(const mock_cluster& cluster, const std::string& topic) {
  llmdlq::kafka_topic_options options;
  options.properties = cluster.properties();
  options.properties["fetch.wait.max.ms"] = "20";
  options.topic = topic;
  return options;
}

llmdlq::kafka_replay_source open_source(const mock_cluster& cluster, const std::string& topic) {
  auto source = llmdlq::kafka_replay_source::open(topic_options(cluster, topic));
  REQUIRE(source.has_value());
  return std::move(*source);
}

// Every letter on the topic, each checked against the envelope schema.
std::vector<llmdlq::envelope> read_all(llmdlq::kafka_replay_source& source) {
  auto page = source.next("", 100);
  REQUIRE(page.has_value());
  std::vector<llmdlq::envelope> letters;
  for (auto& l : *page) letters.push_back(llmdlq::test::check_envelope(std::move(l.letter)));
  return letters;
}

}  // namespace

TEST_CASE("kafka_replay_source reads Kafka Connect's dead letters: the failed record's place and value, judged",
          "[kafka][replay][dialects]") {
  mock_cluster cluster;
  const std::string topic = "dlq-receipts-s3-sink";
  cluster.create_topic(topic, 1);
  const auto t0 = at("2026-03-02T08:15:00.250Z");
  const std::string converter_failed = R"({"merchant": "ACME", "total": 12.5})";
  // An llmdlq letter that also speaks both dialects: its envelope wins.
  llmdlq::request_context own_context;
  own_context.idempotency_key = "receipts/0@1";
  own_context.origin = {"receipt-processor", "worker-1", "receipts", 0, 1};
  const auto own = llmdlq::test::check_envelope(
      llmdlq::make_envelope({.category = failure_category::syntax, .message = "not JSON"}, "{,}", own_context));
  const auto own_record = llmdlq::to_kafka_record(own, topic, {.connect = true, .spring = true});
  llmdlq::test::produce_raw(
      cluster.bootstrap(), topic,
      {{"receipt-7", converter_failed, connect_headers("2", "41"), millis(t0)},
       {"receipt-8", R"({"merchant": "ACME", "total": 1)", connect_headers("2", "42"), millis(t0) + 1},
       {"receipt-9", "", connect_headers("2", "43"), millis(t0) + 2},
       {std::nullopt, "{\"merchant\": \"AC\0ME\"}"s, connect_headers("2", "44"), millis(t0) + 3},
       {"receipt-11", R"({"merchant": "ACME"})", connect_headers("0", "9", false), millis(t0) + 4},
       {"receipt-12", converter_failed, connect_headers("two", "45"), millis(t0) + 5},
       {"receipt-13", converter_failed, connect_headers("2", "9223372036854775808"), millis(t0) + 6},
       {"receipt-14",
        converter_failed,
        {{std::string(connect::topic), "receipts"}, {std::string(connect::partition), "2"}},
        millis(t0) + 7},
       {std::nullopt, "not an envelope", {}, millis(t0) + 8},
       {own_record.key, own_record.value, own_record.headers, 0},
       {"receipt-7", converter_failed, connect_headers("2", "41"), millis(t0)}});  // reported again after a restart

  auto source = open_source(cluster, topic);
  const auto letters = read_all(source);
  REQUIRE(letters.size() == 7);

  const llmdlq::envelope& converter = letters[0];
  CHECK(converter.idempotency_key == "receipts/2@41");
  CHECK_FALSE(converter.idempotency_key_derived);
  CHECK(converter.dlq_id == llmdlq::derive_dlq_id("receipts/2@41", 1, t0));  // Connect keeps the record's timestamp
  CHECK(converter.created_at == t0);
  CHECK(converter.origin ==
        llmdlq::origin_reference{"kafka-connect/receipts-s3-sink", "0", "receipts", 2, std::int64_t{41}});
  CHECK(converter.failure.category == failure_category::schema);
  CHECK(converter.triage.kind == llmdlq::triage_class::deterministic);
  CHECK(converter.failure.code == "connect.org.apache.kafka.connect.errors.dataexception");
  CHECK(converter.failure.message == "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields");
  CHECK(converter.raw_response.text == converter_failed);
  CHECK(converter.versions == llmdlq::version_set{});  // unknown: absent from the JSON
  CHECK(converter.attempts.count == 1);

  CHECK(letters[1].idempotency_key == "receipts/2@42");
  CHECK(letters[1].failure.category == failure_category::truncated);
  CHECK(letters[1].failure.code == "connect.truncated_output");
  CHECK(letters[1].triage.kind == llmdlq::triage_class::transient);
  CHECK(letters[2].failure.category == failure_category::empty);
  CHECK(letters[2].failure.code == "connect.empty_output");
  CHECK(letters[3].failure.category == failure_category::poison);
  CHECK(letters[3].failure.code == "connect.poison_input");
  CHECK(letters[4].idempotency_key == "receipts/0@9");
  CHECK(letters[4].failure.category == failure_category::schema);
  CHECK(letters[4].failure.code == "connect.unknown");
  CHECK(letters[4].failure.message == "Kafka Connect gave no exception message");
  CHECK(llmdlq::serialize(letters[5]) == llmdlq::serialize(own));
  CHECK(letters[6].dlq_id == converter.dlq_id);  // the same failed record, the same letter

  CHECK(source.skipped() == 4);
  const auto& skipped = source.skipped_messages();
  REQUIRE(skipped.size() == 4);
  CHECK(skipped[0].dlq_id == "partition 0 offset 5");
  CHECK(skipped[0].reason == "Kafka Connect: __connect.errors.partition is 'two', not a decimal int");
  CHECK(skipped[1].reason == "Kafka Connect: __connect.errors.offset is '9223372036854775808', not a decimal long");
  CHECK(skipped[2].reason == "Kafka Connect dead letter without __connect.errors.offset");
  CHECK(skipped[3].reason.rfind("envelope: ", 0) == 0);

  // The topic as a store: each failed record once, by category.
  auto store = llmdlq::kafka_topic_store::open(topic_options(cluster, topic));
  REQUIRE(store.has_value());
  auto stats = (*store)->statistics();
  REQUIRE(stats.has_value());
  CHECK(stats->total == 6);
  CHECK(stats->by_category == std::map<std::string, std::uint64_t>{
                                  {"empty", 1}, {"poison", 1}, {"schema", 2}, {"syntax", 1}, {"truncated", 1}});
  auto record = (*store)->get(converter.dlq_id);
  REQUIRE(record.has_value());
  REQUIRE(record->has_value());
  CHECK((*record)->raw_response == converter_failed);
  CHECK((*record)->failure_code == "connect.org.apache.kafka.connect.errors.dataexception");
  CHECK((*store)->unreadable_records().value().count == 4);
}

TEST_CASE("kafka_replay_source reads Spring Kafka's dead-letter topic: binary partition, offset and timestamp",
          "[kafka][replay][dialects]") {
  mock_cluster cluster;
  const std::string topic = "orders.DLT";
  cluster.create_topic(topic, 1);
  const auto original_time = at("2026-03-01T23:59:59.999Z");
  const auto published = at("2026-03-02T00:00:03.000Z");
  const std::string fqcn = "org.springframework.kafka.listener.ListenerExecutionFailedException";
  const std::string message = "Listener method 'void com.example.Orders.listen(Order)' threw exception";
  llmdlq::test::produce_raw(
      cluster.bootstrap(), topic,
      {{"order-7", R"({"order": 7, "total": -3})",
        joined(spring_original("orders", 1, 5000000000, millis(original_time)), spring_exception(fqcn, message)),
        millis(published)},
       // Through a retry topic: the original headers appended at each hop (the first names the input), the
       // exception headers kept (setStripPreviousExceptionHeaders(false): the last names the latest failure).
       {"order-8", R"({"order": 8})",
        joined(spring_original("orders", 0, 7, millis(original_time)),
               spring_exception("java.lang.IllegalStateException", "first attempt"),
               spring_original("orders-retry-0", 0, 3, millis(original_time) + 1000),
               spring_exception("org.springframework.kafka.support.serializer.DeserializationException",
                                "failed to deserialize")),
        millis(published) + 1},
       {"order-9", "total: 12", joined(spring_original("orders", 0, 8, -1), spring_exception(fqcn, message)),
        millis(published) + 2},
       {"order-10",
        "{}",
        {{std::string(spring::original_topic), "orders"},
         {std::string(spring::original_partition), std::string("\0\x01", 2)},
         {std::string(spring::original_offset), java_long(10)}},
        millis(published) + 3},
       {"order-11",
        "{}",
        {{std::string(spring::original_topic), "orders"},
         {std::string(spring::original_partition), java_int(0)},
         {std::string(spring::original_offset), "11"}},
        millis(published) + 4},
       {"order-12",
        "{}",
        {{std::string(spring::original_topic), "orders"},
         {std::string(spring::original_partition), java_int(-1)},
         {std::string(spring::original_offset), java_long(12)}},
        millis(published) + 5},
       {"order-13", "{}", {{std::string(spring::original_topic), "orders"}}, millis(published) + 6}});

  auto source = open_source(cluster, topic);
  const auto letters = read_all(source);
  REQUIRE(letters.size() == 3);

  const llmdlq::envelope& listener = letters[0];
  CHECK(listener.idempotency_key == "orders/1@5000000000");
  CHECK(listener.dlq_id == llmdlq::derive_dlq_id("orders/1@5000000000", 1, original_time));
  CHECK(listener.created_at == published);
  CHECK(listener.origin == llmdlq::origin_reference{"spring-kafka", "", "orders", 1, std::int64_t{5000000000}});
  CHECK(listener.failure.category == failure_category::schema);
  CHECK(listener.failure.code == "spring.org.springframework.kafka.listener.listenerexecutionfailedexception");
  CHECK(listener.failure.message == message);
  CHECK(listener.raw_response.text == R"({"order": 7, "total": -3})");

  CHECK(letters[1].idempotency_key == "orders/0@7");
  CHECK(letters[1].failure.code == "spring.org.springframework.kafka.support.serializer.deserializationexception");
  CHECK(letters[1].failure.message == "failed to deserialize");

  // No original timestamp (-1): the dead letter's own stands for it.
  CHECK(letters[2].dlq_id == llmdlq::derive_dlq_id("orders/0@8", 1, published + std::chrono::milliseconds(2)));
  CHECK(letters[2].failure.category == failure_category::syntax);
  CHECK(letters[2].failure.code == "spring.structural_broken_json");
  CHECK(letters[2].failure.syntax.has_value());

  const auto& skipped = source.skipped_messages();
  REQUIRE(skipped.size() == 4);
  CHECK(skipped[0].reason == "Spring Kafka: kafka_dlt-original-partition is 2 bytes, not the 4 of a big-endian int");
  CHECK(skipped[1].reason == "Spring Kafka: kafka_dlt-original-offset is 2 bytes, not the 8 of a big-endian long");
  CHECK(skipped[2].reason == "Spring Kafka: kafka_dlt-original-partition is -1, not at least 0");
  CHECK(skipped[3].reason == "Spring Kafka dead letter without kafka_dlt-original-partition");
}

TEST_CASE("A foreign letter too large for an envelope keeps its hash and length, and stays one envelope",
          "[kafka][replay][dialects]") {
  mock_cluster cluster;
  const std::string topic = "orders.DLT";
  cluster.create_topic(topic, 1);
  std::string big = R"({"items": [)";
  while (big.size() < (400u << 10)) big += R"({"sku": "A-1", "qty": 1},)";
  big += "{}]}";
  llmdlq::test::produce_raw(cluster.bootstrap(), topic,
                            {{"order-1", big,
                              joined(spring_original("orders", 0, 1, -1),
                                     spring_exception("java.lang.RuntimeException", std::string(5000, 'x'))),
                              0}});
  auto source = open_source(cluster, topic);
  const auto letters = read_all(source);
  REQUIRE(letters.size() == 1);
  const auto& e = letters[0];
  CHECK(e.raw_response.cut);
  CHECK(e.raw_response.length == big.size());
  CHECK(llmdlq::serialize(e).size() <= (256u << 10));
  CHECK(e.failure.message.size() <= llmdlq::envelope_limits::message + 4);
}

}  // namespace kafka_foreign_letters_test
