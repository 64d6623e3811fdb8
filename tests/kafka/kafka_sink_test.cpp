// SPDX-License-Identifier: MIT
// kafka_sink on librdkafka's mock cluster: the record it writes (key, value,
// headers), batches, threads, and a broker that goes down during a publish.
#include <atomic>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include <llmdlq/kafka/sink.hpp>
#include <llmdlq/pipeline.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"
#include "kafka_test_support.hpp"
#include "support/envelope_check.hpp"

namespace kafka_sink_test {

namespace {

using llmdlq::test::mock_cluster;
using llmdlq::test::read_topic;

const std::string dlq_topic = "receipts-dead-letter-queue";

llmdlq::envelope sample(std::string key, std::string origin_topic = "receipts", std::int64_t offset = 42) {
  llmdlq::request_context context;
  context.idempotency_key = std::move(key);
  context.versions.schema = "receipt-v3";
  if (!origin_topic.empty()) context.origin = {"receipt-processor", "worker-1", origin_topic, 2, offset};
  llmdlq::process_options options;
  options.failure_code_prefix = "ocr";
  return llmdlq::test::check_envelope(
      llmdlq::make_envelope({.category = llmdlq::failure_category::syntax, .message = "not JSON"}, "{\"total\": 1,,}",
                            context, options));
}

llmdlq::kafka_sink make_sink(const mock_cluster& cluster, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  auto sink = llmdlq::kafka_sink::open({cluster.properties(), dlq_topic, timeout, {}});
  REQUIRE(sink.has_value());
  return std::move(*sink);
}

// The first publish to a topic waits for its metadata (librdkafka looks new
// topics up once a second), which a short delivery timeout may not cover.
void warm_up(llmdlq::kafka_sink& sink) {
  REQUIRE(llmdlq::test::eventually([&] { return sink.publish(sample("warm-up")).has_value(); }));
}

std::string location(const llmdlq::test::consumed_record& r) {
  return "kafka:" + dlq_topic + "/" + std::to_string(r.partition) + "@" + std::to_string(r.offset);
}

}  // namespace

TEST_CASE("kafka_sink writes the envelope as the value, keyed by the idempotency key, with text headers",
          "[kafka]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 3);
  auto sink = make_sink(cluster);

  const auto e = sample("receipts:2:42");
  auto r = sink.publish(e);
  REQUIRE(r.has_value());
  CHECK(r->dlq_id == e.dlq_id);
  CHECK_FALSE(r->duplicate);

  // No key: the dlq_id is the key; no origin: no origin headers.
  auto bare = sample("", "");
  bare.idempotency_key.clear();
  auto r2 = sink.publish(bare);
  REQUIRE(r2.has_value());

  const auto records = read_topic(cluster.bootstrap(), dlq_topic, 3);
  REQUIRE(records.size() == 2);
  for (const auto& record : records) {
    auto stored = llmdlq::parse_envelope(record.value);
    REQUIRE(stored.has_value());
    const bool first = stored->dlq_id == e.dlq_id;
    const auto& expected = first ? e : bare;
    CHECK(*stored == expected);
    CHECK(record.value == llmdlq::serialize(expected));
    CHECK(location(record) == (first ? r->location : r2->location));
    CHECK(record.key == (first ? "receipts:2:42" : bare.dlq_id));
    namespace names = llmdlq::kafka_header_names;
    CHECK(record.header(names::dlq_id) == expected.dlq_id);
    CHECK(record.header(names::category) == "syntax");
    CHECK(record.header(names::triage) == "transient");
    CHECK(record.header(names::failure_code) == "ocr_structural_broken_json");
    CHECK(record.header(names::envelope_version) == "1");
    CHECK(record.header(names::schema_version) == "receipt-v3");
    if (first) {
      CHECK(record.header(names::origin_topic) == "receipts");
      CHECK(record.header(names::origin_partition) == "2");
      CHECK(record.header(names::origin_offset) == "42");
      CHECK(record.headers.size() == 9);
    } else {
      CHECK_FALSE(record.header(names::origin_topic));
      CHECK_FALSE(record.header(names::origin_partition));
      CHECK_FALSE(record.header(names::origin_offset));
      CHECK(record.headers.size() == 6);
    }
  }
  // The record the sink writes is to_kafka_record's, header for header.
  const auto expected_record = llmdlq::to_kafka_record(e, dlq_topic);
  const auto& first = records[0].header("dlq-id") == e.dlq_id ? records[0] : records[1];
  CHECK(first.headers == expected_record.headers);
}

TEST_CASE("kafka_sink: Kafka Connect's and Spring Kafka's dead-letter headers, in their encodings", "[kafka]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 1);
  llmdlq::kafka_sink_options options{cluster.properties(), dlq_topic, std::chrono::seconds(5), {}};
  options.dialects = {.connect = true, .spring = true};
  auto sink = llmdlq::kafka_sink::open(std::move(options));
  REQUIRE(sink.has_value());
  // An offset past 2^32, so that all eight of Spring's bytes count.
  const auto e = sample("receipts:2:5000000000", "receipts", 5'000'000'000);
  REQUIRE(sink->publish(e).has_value());
  auto bare = sample("", "");
  bare.idempotency_key.clear();
  REQUIRE(sink->publish(bare).has_value());

  const auto records = read_topic(cluster.bootstrap(), dlq_topic, 1);
  REQUIRE(records.size() == 2);
  const auto& r = records[0];
  namespace connect = llmdlq::kafka_connect_header_names;
  namespace spring = llmdlq::spring_dlt_header_names;
  // Connect: text, numbers in decimal (DeadLetterQueueReporter's toBytes(String.valueOf(...))).
  CHECK(r.header(connect::topic) == "receipts");
  CHECK(r.header(connect::partition) == "2");
  CHECK(r.header(connect::offset) == "5000000000");
  CHECK(r.header(connect::connector_name) == "receipt-processor");
  CHECK(r.header(connect::task_id) == "worker-1");
  CHECK(r.header(connect::stage) == "llmdlq");
  CHECK(r.header(connect::class_name) == "llmdlq");
  CHECK(r.header(connect::exception_class) == "llmdlq.syntax");
  CHECK(r.header(connect::exception_message) == "not JSON");
  // Spring: ByteBuffer.putInt and putLong, big-endian.
  CHECK(r.header(spring::original_topic) == "receipts");
  CHECK(r.header(spring::original_partition) == std::string("\0\0\0\x02", 4));
  CHECK(r.header(spring::original_offset) == std::string("\0\0\0\x01\x2a\x05\xf2\0", 8));
  CHECK(r.header(spring::exception_fqcn) == "llmdlq.syntax");
  CHECK(r.header(spring::exception_message) == "not JSON");
  // llmdlq's own come first, and each name once.
  CHECK(r.headers.size() == 9 + 9 + 5);
  CHECK(r.headers[0].name == "dlq-id");
  // Without an origin, neither dialect names one.
  const auto& b = records[1];
  CHECK_FALSE(b.header(connect::topic));
  CHECK_FALSE(b.header(spring::original_offset));
  CHECK(b.header(spring::exception_fqcn) == "llmdlq.syntax");
  CHECK(b.headers.size() == 6 + 4 + 2);
  CHECK(r.headers == llmdlq::to_kafka_record(e, dlq_topic, {.connect = true, .spring = true}).headers);
}

TEST_CASE("kafka_sink: every attempt at one input lands on one partition, in order", "[kafka]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 4);
  auto sink = make_sink(cluster);
  std::vector<std::string> ids;
  std::set<std::string> locations;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto e = sample("receipts:0:7", "receipts", 7);
    auto r = sink.publish(e);
    REQUIRE(r.has_value());
    ids.push_back(e.dlq_id);
    locations.insert(r->location);
  }
  CHECK(locations.size() == 5);
  const auto records = read_topic(cluster.bootstrap(), dlq_topic, 4);
  REQUIRE(records.size() == 5);
  for (std::size_t i = 0; i < records.size(); ++i) {
    CHECK(records[i].partition == records[0].partition);
    CHECK(records[i].header("dlq-id") == ids[i]);  // in publish order
  }
}

TEST_CASE("kafka_sink publish_batch produces the batch, then waits for every delivery report", "[kafka]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 3);
  auto sink = make_sink(cluster);
  std::vector<llmdlq::envelope> batch;
  for (int i = 0; i < 50; ++i) batch.push_back(sample("receipts:1:" + std::to_string(i), "receipts", i));
  auto receipts = sink.publish_batch(batch);
  REQUIRE(receipts.has_value());
  REQUIRE(receipts->size() == batch.size());
  std::set<std::string> locations;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    CHECK((*receipts)[i].dlq_id == batch[i].dlq_id);
    locations.insert((*receipts)[i].location);
  }
  CHECK(locations.size() == batch.size());
  const auto records = read_topic(cluster.bootstrap(), dlq_topic, 3);
  CHECK(records.size() == batch.size());
  std::set<std::string> stored;
  for (const auto& r : records) stored.insert(location(r));
  CHECK(stored == locations);
  CHECK(sink.flush().has_value());
  CHECK(sink.publish_batch({}).value().empty());
}

TEST_CASE("kafka_sink is safe to publish from many threads at once", "[kafka]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 3);
  auto sink = make_sink(cluster);
  // The envelopes are made (and checked, with Catch2, which is not
  // thread-safe) before the threads start.
  std::vector<std::vector<llmdlq::envelope>> batches(4);
  for (int t = 0; t < 4; ++t) {
    for (int i = 0; i < 25; ++i) batches[t].push_back(sample("receipts:" + std::to_string(t) + ":" + std::to_string(i)));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&sink, &failures, &batch = batches[t]] {
      for (const auto& e : batch) {
        if (!sink.publish(e)) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
  const auto records = read_topic(cluster.bootstrap(), dlq_topic, 3);
  std::set<std::string> ids;
  for (const auto& r : records) ids.insert(*r.header("dlq-id"));
  CHECK(records.size() == 100);
  CHECK(ids.size() == 100);
}

TEST_CASE("kafka_sink: a broker down during publish is a sink_error, the pipeline says retry, and after recovery "
          "the dead letter is written once",
          "[kafka][fault]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 1);
  // With debug context "conf", librdkafka logs the configuration it runs
  // with: the delivery timeout reached it as message.timeout.ms.
  std::mutex log_mutex;
  std::vector<std::string> log_lines;
  auto properties = cluster.properties();
  properties["debug"] = "conf";
  auto opened = llmdlq::kafka_sink::open(
      {properties, dlq_topic, std::chrono::milliseconds(800), [&](int, std::string_view, std::string_view line) {
         const std::lock_guard lock(log_mutex);
         log_lines.emplace_back(line);
       }});
  REQUIRE(opened.has_value());
  auto& sink = *opened;
  warm_up(sink);
  {
    const std::lock_guard lock(log_mutex);
    std::vector<std::string> timeouts;  // for the producer's default topic configuration and for the topic
    for (const auto& line : log_lines) {
      constexpr std::string_view name = "message.timeout.ms = ";
      if (const auto at = line.find(name); at != std::string::npos) timeouts.push_back(line.substr(at + name.size()));
    }
    REQUIRE_FALSE(timeouts.empty());
    CHECK(timeouts == std::vector<std::string>(timeouts.size(), "800"));
  }

  const auto schema = llmdlq::schema::compile(R"({"type": "object", "required": ["total"]})");
  REQUIRE(schema.has_value());
  const llmdlq::pipeline pipeline{*schema, sink};
  llmdlq::request_context context;
  context.idempotency_key = "receipts:0:43";

  // The publish ends with librdkafka's verdict at that timeout, not with
  // the sink's later backstop (a publish that never returns is ctest's timeout).
  REQUIRE(rd_kafka_mock_broker_set_down(cluster.get(), 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
  auto failed = sink.publish(sample("receipts:0:42"));
  REQUIRE_FALSE(failed.has_value());
  INFO(failed.error().message);
  CHECK((failed.error().code == llmdlq::sink_errc::unavailable || failed.error().code == llmdlq::sink_errc::timeout));
  CHECK(failed.error().message.find(rd_kafka_err2str(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)) != std::string::npos);

  const llmdlq::disposition d = pipeline.handle(R"({"amount": 1})", context);  // no total: schema
  CHECK(d == llmdlq::disposition::retry);
  CHECK_FALSE(d.should_commit());
  REQUIRE(d.dead_letter.has_value());
  REQUIRE(d.error.has_value());

  REQUIRE(rd_kafka_mock_broker_set_up(cluster.get(), 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
  // The host tries again with the same envelope (same dlq_id), until it is durable.
  llmdlq::disposition again;
  REQUIRE(llmdlq::test::eventually([&] {
    again = pipeline.dead_letter(*d.dead_letter);
    return again.should_commit();
  }));
  REQUIRE(again.stored.has_value());

  const auto records = read_topic(cluster.bootstrap(), dlq_topic, 1);
  std::multiset<std::string> keys;
  for (const auto& r : records) keys.insert(*r.key);
  CHECK(keys.count("warm-up") == 1);
  CHECK(keys.count("receipts:0:42") == 0);  // its delivery failed: not written
  CHECK(keys.count("receipts:0:43") == 1);  // written once, with the envelope the pipeline made
  CHECK(records.back().header("dlq-id") == d.dead_letter->dlq_id);
}

TEST_CASE("kafka_sink: produce requests refused by the broker fail the publish, and the next publish succeeds",
          "[kafka][fault]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 1);
  auto sink = make_sink(cluster, std::chrono::milliseconds(600));
  warm_up(sink);

  // More retriable errors than retries fit in the delivery timeout.
  std::vector<rd_kafka_resp_err_t> errors(200, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS);
  rd_kafka_mock_push_request_errors_array(cluster.get(), llmdlq::test::produce_api_key, errors.size(), errors.data());
  auto failed = sink.publish(sample("receipts:0:1"));
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().message.find("kafka: delivery to " + dlq_topic + " failed") == 0);

  rd_kafka_mock_clear_request_errors(cluster.get(), llmdlq::test::produce_api_key);
  std::optional<llmdlq::receipt> written;
  REQUIRE(llmdlq::test::eventually([&] {
    auto r = sink.publish(sample("receipts:0:2"));
    if (r) written = *r;
    return r.has_value();
  }));
  const auto records = read_topic(cluster.bootstrap(), dlq_topic, 1);
  std::multiset<std::string> keys;
  for (const auto& r : records) keys.insert(*r.key);
  CHECK(keys.count("receipts:0:1") == 0);
  CHECK(keys.count("receipts:0:2") == 1);
}

TEST_CASE("kafka_sink: after a fatal producer error the publish fails and the next one uses a new producer",
          "[kafka][fault]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 1);
  auto sink = make_sink(cluster);
  warm_up(sink);
  // A sequence gap: the idempotent producer cannot go on with its producer id.
  rd_kafka_mock_push_request_errors(cluster.get(), llmdlq::test::produce_api_key, 1,
                                    RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
  auto failed = sink.publish(sample("receipts:0:1"));
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().code == llmdlq::sink_errc::unavailable);
  CHECK(failed.error().message.find("fatal") != std::string::npos);
  auto next = sink.publish(sample("receipts:0:2"));
  REQUIRE(next.has_value());
  const auto records = read_topic(cluster.bootstrap(), dlq_topic, 1);
  REQUIRE(records.size() == 2);
  CHECK(records[1].key == "receipts:0:2");
  CHECK(location(records[1]) == next->location);
}

TEST_CASE("kafka_producer: a fatal producer error is kafka_errc::fatal, and the next send uses a new producer",
          "[kafka][fault]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 1);
  auto sink = make_sink(cluster);
  warm_up(sink);
  llmdlq::kafka_producer& producer = sink.producer();
  rd_kafka_mock_push_request_errors(cluster.get(), llmdlq::test::produce_api_key, 1,
                                    RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
  auto failed = producer.send(llmdlq::to_kafka_record(sample("receipts:0:1"), dlq_topic));
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().code == llmdlq::kafka_errc::fatal);
  CHECK_FALSE(llmdlq::is_permanent(failed.error().code));
  CHECK(producer.send(llmdlq::to_kafka_record(sample("receipts:0:2"), dlq_topic)).has_value());
}

TEST_CASE("kafka_producer reports bad configuration as invalid_configuration", "[kafka]") {
  auto producer = llmdlq::kafka_producer::open({{{"no.such.property", "1"}}, std::chrono::seconds(1), {}});
  REQUIRE_FALSE(producer.has_value());
  CHECK(producer.error().code == llmdlq::kafka_errc::invalid_configuration);
  CHECK(llmdlq::to_string(producer.error().code) == "invalid_configuration");
  CHECK(llmdlq::is_permanent(producer.error().code));
  CHECK(producer.error().message.find("no.such.property") != std::string::npos);
}

TEST_CASE("kafka_sink reports bad configuration as an error, not an exception or a print", "[kafka]") {
  auto sink = llmdlq::kafka_sink::open({{{"no.such.property", "1"}}, dlq_topic, std::chrono::seconds(1), {}});
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == llmdlq::sink_errc::rejected);
  CHECK(sink.error().message.find("no.such.property") != std::string::npos);
  auto no_topic = llmdlq::kafka_sink::open({{{"bootstrap.servers", "localhost:1"}}, "", std::chrono::seconds(1), {}});
  REQUIRE_FALSE(no_topic.has_value());
  CHECK(no_topic.error().code == llmdlq::sink_errc::rejected);
}

TEST_CASE("kafka_sink forwards librdkafka's log lines to the host's function only", "[kafka]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 1);
  std::atomic<int> lines{0};
  auto properties = cluster.properties();
  properties["debug"] = "msg";
  auto sink = llmdlq::kafka_sink::open(
      {properties, dlq_topic, std::chrono::seconds(5), [&lines](int, std::string_view, std::string_view) { ++lines; }});
  REQUIRE(sink.has_value());
  REQUIRE(sink->publish(sample("logged")).has_value());
  CHECK(lines > 0);
}

}  // namespace kafka_sink_test
