// SPDX-License-Identifier: MIT
// `llmdlq list|show|stats|top kafka:BROKERS/TOPIC` against librdkafka's mock
// cluster: a topic is read as a queue of pending letters, never written.
#include <sstream>

#include <boost/json.hpp>
#include <llmdlq/dlq_id.hpp>
#include <llmdlq/kafka/sink.hpp>
#include <llmdlq/process.hpp>

#include "kafka_test_support.hpp"
#include "support/envelope_check.hpp"
#include "tools/run_tool.hpp"

namespace operator_commands_test {

using llmdlq::test::run_llmdlq;

namespace {

llmdlq::envelope letter(const std::string& key, llmdlq::failure_category category, llmdlq::timestamp at) {
  llmdlq::request_context context;
  context.idempotency_key = key;
  llmdlq::process_options options;
  options.clock = [at] { return at; };
  return llmdlq::test::check_envelope(
      llmdlq::make_envelope({.category = category, .message = "test failure"}, "raw text", context, options));
}

// What `--json` printed: one object a line.
std::vector<boost::json::object> json_lines(const std::string& out) {
  std::vector<boost::json::object> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(boost::json::parse(line).as_object());
  return lines;
}

}  // namespace

TEST_CASE("operator commands read a Kafka DLQ topic", "[kafka][tools][operator]") {
  llmdlq::test::mock_cluster cluster;
  cluster.create_topic("receipts-dlq", 2);
  const auto t0 = *llmdlq::parse_rfc3339("2026-11-30T10:00:00.000Z");
  const auto first = letter("a", llmdlq::failure_category::syntax, t0);
  const auto second = letter("b", llmdlq::failure_category::schema, t0 + std::chrono::minutes(1));
  const auto third = letter("c", llmdlq::failure_category::schema, t0 + std::chrono::minutes(2));
  {
    auto sink = llmdlq::kafka_sink::open({cluster.properties(), "receipts-dlq", std::chrono::seconds(10), {}});
    REQUIRE(sink.has_value());
    for (const auto& e : {first, second, third, second}) REQUIRE(sink->publish(e).has_value());  // one redelivered
    REQUIRE(sink->flush().has_value());
  }
  const std::string store = "'kafka:" + cluster.bootstrap() + "/receipts-dlq'";

  auto run = run_llmdlq("list --json --limit 1 --category schema " + store);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto lines = json_lines(run.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].at("dlq_id").as_string() == second.dlq_id);
  CHECK(lines[0].at("status") == "pending");
  run = run_llmdlq("list --json --category schema --after '" + std::string(lines[1].at("next").as_string()) + "' " +
                   store);
  REQUIRE(run.exit_code == 0);
  CHECK(boost::json::parse(run.out).at("dlq_id").as_string() == third.dlq_id);

  run = run_llmdlq("show --json " + store + " " + first.dlq_id);
  REQUIRE(run.exit_code == 0);
  CHECK(boost::json::parse(run.out).at("category") == "syntax");
  CHECK(run_llmdlq("show " + store + " no-such-id").exit_code == 5);

  run = run_llmdlq("stats --json " + store);
  REQUIRE(run.exit_code == 0);
  CHECK(boost::json::parse(run.out).at("total") == 3);
  CHECK(run_llmdlq("top --once " + store).exit_code == 0);

  run = run_llmdlq("claim " + store + " " + first.dlq_id + " --operator ann");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("read only") != std::string::npos);
}

TEST_CASE("llmdlq list reads the dead letters Kafka Connect and Spring Kafka wrote", "[kafka][tools][operator]") {
  llmdlq::test::mock_cluster cluster;
  cluster.create_topic("shared-dlq", 1);
  const auto t0 = *llmdlq::parse_rfc3339("2026-11-30T10:00:00.000Z");
  const auto ms = [](llmdlq::timestamp t) { return t.time_since_epoch().count(); };
  namespace connect = llmdlq::kafka_connect_header_names;
  namespace spring = llmdlq::spring_dlt_header_names;
  llmdlq::test::produce_raw(
      cluster.bootstrap(), "shared-dlq",
      {{"r-1",
        R"({"total": "12.50"})",
        {{std::string(connect::topic), "receipts"},
         {std::string(connect::partition), "3"},
         {std::string(connect::offset), "17"},
         {std::string(connect::connector_name), "receipts-sink"},
         {std::string(connect::task_id), "1"},
         {std::string(connect::stage), "VALUE_CONVERTER"},
         {std::string(connect::class_name), "org.apache.kafka.connect.json.JsonConverter"},
         {std::string(connect::exception_class), "org.apache.kafka.connect.errors.DataException"},
         {std::string(connect::exception_message), "Converting byte[] to Kafka Connect data failed"}},
        ms(t0)},
       {"o-2",
        R"({"order": 2, "total": 3)",
        {{std::string(spring::original_topic), "orders"},
         {std::string(spring::original_partition), llmdlq::test::java_bytes(std::int32_t{0})},
         {std::string(spring::original_offset), llmdlq::test::java_bytes(std::int64_t{99})},
         {std::string(spring::original_timestamp), llmdlq::test::java_bytes(ms(t0))},
         {std::string(spring::exception_fqcn), "org.springframework.kafka.listener.ListenerExecutionFailedException"},
         {std::string(spring::exception_message), "Listener failed"}},
        ms(t0 + std::chrono::minutes(1))}});
  const std::string store = "'kafka:" + cluster.bootstrap() + "/shared-dlq'";

  auto run = run_llmdlq("list --json " + store);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto lines = json_lines(run.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].at("dlq_id").as_string() == llmdlq::derive_dlq_id("receipts/3@17", 1, t0));
  CHECK(lines[0].at("category") == "schema");
  CHECK(lines[0].at("triage") == "deterministic");
  CHECK(lines[0].at("failure_code") == "connect.org.apache.kafka.connect.errors.dataexception");
  CHECK(lines[0].at("status") == "pending");
  CHECK(lines[1].at("dlq_id").as_string() == llmdlq::derive_dlq_id("orders/0@99", 1, t0));
  CHECK(lines[1].at("category") == "truncated");
  CHECK(lines[1].at("failure_code") == "spring.truncated_output");

  run = run_llmdlq("show --json " + store + " " + std::string(lines[0].at("dlq_id").as_string()));
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("kafka-connect/receipts-sink") != std::string::npos);
}

}  // namespace operator_commands_test
