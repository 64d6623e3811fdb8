// SPDX-License-Identifier: MIT
// `llmdlq list|show|stats|top kafka:BROKERS/TOPIC` against librdkafka's mock
// cluster: a topic is read as a queue of pending letters, never written.
#include <sstream>

#include <boost/json.hpp>
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
  std::vector<boost::json::object> lines;
  std::istringstream in(run.out);
  for (std::string line; std::getline(in, line);) lines.push_back(boost::json::parse(line).as_object());
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

}  // namespace operator_commands_test
