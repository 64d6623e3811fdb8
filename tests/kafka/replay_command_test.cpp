// SPDX-License-Identifier: MIT
// `llmdlq replay kafka:BROKERS/TOPIC` against librdkafka's mock cluster and a model
// server on loopback: the topic is read only, so what a replay did lives in
// its --state store, whose ledger keeps a second run from asking again what
// was recovered and whose attempt counts hold the cap across runs.
#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("replay kafka: against a model server", "[kafka][tools][replay]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <filesystem>

#include <boost/json/parse.hpp>

#include <llmdlq/kafka/sink.hpp>
#include <llmdlq/sqlite/replay_state.hpp>

#include "kafka_test_support.hpp"
#include "llm/scripted_server.hpp"
#include "support/eventually.hpp"
#include "support/replay_letters.hpp"
#include "tools/run_tool.hpp"

namespace replay_command_test {

using llmdlq::test::chat_completion;
using llmdlq::test::scripted_server;
using llmdlq::test::stored_failure;

namespace {

constexpr const char* topic = "receipts-dlq";

// A topic of two partitions holding `letters`, today's schema, and where the state goes.
struct kafka_dlq {
  llmdlq::test::mock_cluster cluster;
  llmdlq::test::temp_dir dir;
  std::string schema = dir.write("schema.json", llmdlq::test::replay_schema);
  std::filesystem::path state = dir.path() / "state.db";

  explicit kafka_dlq(const std::vector<llmdlq::envelope>& letters) {
    cluster.create_topic(topic, 2);
    auto sink = llmdlq::kafka_sink::open({cluster.properties(), topic, std::chrono::seconds(10), {}});
    REQUIRE(sink.has_value());
    for (const auto& letter : letters) REQUIRE(sink->publish(letter).has_value());
    REQUIRE(sink->flush().has_value());
  }

  llmdlq::test::tool_run replay(const std::string& arguments) const {
    return llmdlq::test::run_llmdlq_reading(std::string("replay kafka:") + cluster.bootstrap() + "/" + topic +
                                                " --schema " + schema + " " + arguments,
                                            "/dev/null");
  }
  boost::json::object replay_json(const std::string& arguments) const {
    const auto run = replay("--json " + arguments);
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    return boost::json::parse(run.out).as_object();
  }
};

}  // namespace

TEST_CASE("replay kafka: a dry run, real runs with a state, the ledger and the attempts cap across runs",
          "[kafka][tools][replay]") {
  kafka_dlq q(llmdlq::test::replay_letters({stored_failure::cut_off, stored_failure::cut_off, stored_failure::cut_off,
                                            stored_failure::schema_failure}));
  // Which letter gets which answer depends on the partitions' order: any
  // accepted answer recovers any letter, and one letter gets the failing one.
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0), "stop", 100, 20),
                          chat_completion(llmdlq::test::recovered_answer(1), "stop", 100, 20),
                          chat_completion(llmdlq::test::failing_answer(2), "stop", 100, 20),
                          chat_completion(llmdlq::test::failing_answer(2), "stop", 100, 20)});
  REQUIRE(server.listening());
  const std::string state = " --state sqlite:" + q.state.string();
  const std::string model = " --rate 0 --model-url " + server.base_url();

  auto summary = q.replay_json("--max-attempts 1" + state + model);
  CHECK(summary.at("dry_run") == true);
  CHECK(summary.at("seen") == 4);
  CHECK(summary.at("by_outcome") == boost::json::parse(R"({"repair_prompt": 3, "held": 1})"));
  CHECK(server.calls() == 0);
  CHECK_FALSE(std::filesystem::exists(q.state));  // a dry run makes no state

  summary = q.replay_json("--execute --max-attempts 1" + state + model);
  CHECK(summary.at("finished") == true);
  CHECK(summary.at("recovered") == 2);
  CHECK(summary.at("exhausted") == 1);
  CHECK(summary.at("held") == 1);
  CHECK(summary.at("calls") == 3);
  CHECK(summary.at("tokens").at("total") == 360);
  CHECK(server.calls() == 3);

  // The topic still holds every letter: the ledger knows two were written,
  // the state counts the other's attempt.
  summary = q.replay_json("--execute --max-attempts 1" + state + model);
  CHECK(summary.at("seen") == 4);
  CHECK(summary.at("recovered") == 0);
  CHECK(summary.at("duplicates") == 2);
  CHECK(summary.at("exhausted") == 1);
  CHECK(summary.at("calls") == 0);
  CHECK(server.calls() == 3);

  // A dry run with the state sees the same.
  summary = q.replay_json("--max-attempts 1" + state + model);
  CHECK(summary.at("by_outcome") == boost::json::parse(R"({"duplicate": 2, "exhausted": 1, "held": 1})"));
  CHECK(server.calls() == 3);

  // A larger cap allows one more call for the failing letter, and no more after it.
  summary = q.replay_json("--execute --max-attempts 2" + state + model);
  CHECK(summary.at("calls") == 1);
  CHECK(summary.at("exhausted") == 1);
  CHECK(summary.at("duplicates") == 2);
  summary = q.replay_json("--execute --max-attempts 2" + state + model);
  CHECK(summary.at("calls") == 0);
  CHECK(server.calls() == 4);

  auto stored = llmdlq::sqlite_replay_state::open(q.state);
  REQUIRE(stored.has_value());
  std::size_t written = 0;
  for (int n = 0; n < 3; ++n) {
    const std::string key = "key-" + std::to_string(n);
    auto output = stored->find_output(key);
    REQUIRE(output.has_value());
    if (output->has_value()) {
      ++written;
      CHECK(stored->attempts(key) == 1u);
    } else {
      CHECK(stored->attempts(key) == 2u);
    }
  }
  CHECK(written == 2);
  CHECK(stored->attempts("key-3") == 0u);
}

TEST_CASE("replay kafka: a letter whose call fails waits in the state, the others go on, a later run asks it",
          "[kafka][tools][replay]") {
  kafka_dlq q(llmdlq::test::cut_off_letters(5));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0)),
                          chat_completion(llmdlq::test::recovered_answer(1)), llmdlq::test::server_error(),
                          chat_completion(llmdlq::test::recovered_answer(3)),
                          chat_completion(llmdlq::test::recovered_answer(4))});
  REQUIRE(server.listening());
  const std::string execute = "--execute --state sqlite:" + q.state.string() + " --rate 0 --model-url " +
                              server.base_url();

  auto summary = q.replay_json(execute);
  CHECK(summary.at("finished") == true);
  CHECK(summary.at("recovered") == 4);
  CHECK(summary.at("by_outcome").at("call_failed") == 1);
  CHECK(server.calls() == 5);

  // Its wait over, the letter that failed is asked again, and only it.
  server.add(chat_completion(llmdlq::test::recovered_answer(2)));
  CHECK(llmdlq::test::eventually([&] {
    summary = q.replay_json(execute);
    return summary.at("recovered") == 1;
  }));
  CHECK(summary.at("duplicates") == 4);  // in the ledger: the topic keeps them, the replay asks nothing again
  CHECK(server.calls() == 6);

  auto stored = llmdlq::sqlite_replay_state::open(q.state);
  REQUIRE(stored.has_value());
  for (int n = 0; n < 5; ++n) CHECK(stored->find_output("key-" + std::to_string(n))->has_value());
}

TEST_CASE("replay kafka: Kafka Connect's dead letters are replayed as llmdlq's own", "[kafka][tools][replay]") {
  llmdlq::test::mock_cluster cluster;
  llmdlq::test::temp_dir dir;
  const std::string schema = dir.write("schema.json", llmdlq::test::replay_schema);
  cluster.create_topic("dlq-receipts-sink", 1);
  const auto connect_letter = [](const std::string& offset) {
    namespace connect = llmdlq::kafka_connect_header_names;
    return std::vector<llmdlq::kafka_header>{
        {std::string(connect::topic), "receipts"},
        {std::string(connect::partition), "0"},
        {std::string(connect::offset), offset},
        {std::string(connect::connector_name), "receipts-sink"},
        {std::string(connect::task_id), "0"},
        {std::string(connect::stage), "TASK_PUT"},
        {std::string(connect::class_name), "com.example.ReceiptSinkTask"},
        {std::string(connect::exception_class), "org.apache.kafka.connect.errors.DataException"},
        {std::string(connect::exception_message), "rejected by the sink"}};
  };
  // JSON the sink task rejected: a schema failure, held as any letter of
  // unchanged versions is (a foreign letter names none); a value cut off:
  // asked again, as a truncated letter of llmdlq's own would be.
  llmdlq::test::produce_raw(cluster.bootstrap(), "dlq-receipts-sink",
                            {{"r-1", llmdlq::test::recovered_answer(0), connect_letter("1"), 0},
                             {"r-2", R"({"name": "letter-1", "total": )", connect_letter("2"), 0}});
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(1))});
  REQUIRE(server.listening());
  const std::string state = (dir.path() / "state.db").string();
  const auto run = llmdlq::test::run_llmdlq_reading(
      "replay kafka:" + cluster.bootstrap() + "/dlq-receipts-sink --schema " + schema +
          " --json --execute --rate 0 --model test-model --state sqlite:" + state + " --model-url " + server.base_url(),
      "/dev/null");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto summary = boost::json::parse(run.out).as_object();
  INFO(run.out);
  CHECK(summary.at("seen") == 2);
  CHECK(summary.at("recovered") == 1);
  CHECK(summary.at("held") == 1);
  CHECK(summary.at("calls") == 1);
  CHECK(server.calls() == 1);
  auto stored = llmdlq::sqlite_replay_state::open(state);
  REQUIRE(stored.has_value());
  auto recovered = stored->find_output("receipts/0@2");  // the key a worker gives the failed record
  REQUIRE(recovered.has_value());
  REQUIRE(recovered->has_value());
  CHECK((*recovered)->output == llmdlq::test::recovered_answer(1));
  CHECK_FALSE(stored->find_output("receipts/0@1")->has_value());
}

TEST_CASE("replay kafka: usage and store errors", "[kafka][tools][replay]") {
  kafka_dlq q(llmdlq::test::cut_off_letters(1));
  scripted_server server;
  REQUIRE(server.listening());
  // A real run needs a state: the topic cannot record anything.
  auto run = q.replay("--execute --model-url " + server.base_url());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--state") != std::string::npos);
  // A topic without its brokers is no store; the form before kafka:BROKERS/TOPIC is still read, with a warning.
  run = llmdlq::test::run_llmdlq_reading(std::string("replay kafka:") + topic + " --schema " + q.schema, "/dev/null");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("kafka:BROKERS/TOPIC") != std::string::npos);
  run = llmdlq::test::run_llmdlq_reading(std::string("replay kafka:") + topic + " --brokers " + q.cluster.bootstrap() +
                                             " --schema " + q.schema,
                                         "/dev/null");
  CHECK(run.exit_code == 0);
  CHECK(run.err.find("--brokers is deprecated") != std::string::npos);
  run = q.replay("--execute --state redis:x --model-url " + server.base_url());
  CHECK(run.exit_code == 2);
  CHECK(server.calls() == 0);
}

TEST_CASE("replay kafka: --group reads the topic in a consumer group and commits its place there",
          "[kafka][tools][replay][group]") {
  kafka_dlq q(llmdlq::test::replay_letters({stored_failure::cut_off, stored_failure::cut_off,
                                            stored_failure::cut_off}));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0)),
                          chat_completion(llmdlq::test::recovered_answer(1)),
                          chat_completion(llmdlq::test::recovered_answer(2))});
  REQUIRE(server.listening());
  const std::string group = "receipt-replayers";
  const auto summary = q.replay_json("--execute --group " + group + " --state sqlite:" + q.state.string() +
                                     " --rate 0 --model-url " + server.base_url());
  CHECK(summary.at("finished") == true);
  CHECK(summary.at("seen") == 3);
  CHECK(summary.at("recovered") == 3);
  CHECK(server.calls() == 3);
  // The group's place is after the last letter of each partition.
  CHECK(llmdlq::test::committed_offsets(q.cluster.bootstrap(), group, topic, 2) ==
        llmdlq::test::consumed_all(q.cluster.bootstrap(), topic, 2));

  // A group is a Kafka topic's: with any other DLQ it is a usage error.
  const auto run = llmdlq::test::run_llmdlq_reading("replay sqlite:" + (q.dir.path() / "dlq.db").string() +
                                                        " --schema " + q.schema + " --group " + group,
                                                    "/dev/null");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--group is for a Kafka topic only") != std::string::npos);
}

}  // namespace replay_command_test

#endif  // LLMDLQ_TEST_HTTPLIB
