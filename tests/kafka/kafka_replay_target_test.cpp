// SPDX-License-Identifier: MIT
// kafka_replay_target on librdkafka's mock cluster: what a delivery looks
// like to a consumer of the output topic, once per key across target
// instances, and `llmdlq deliver --to kafka:` killed at random moments.
#include <map>
#include <string>

#include <llmdlq/kafka/replay_target.hpp>
#include <llmdlq/stores/open.hpp>

#include "catch.hpp"
#include "kafka_test_support.hpp"
#include "support/target_kill_run.hpp"

namespace kafka_replay_target_test {

using llmdlq::test::mock_cluster;
using llmdlq::test::read_topic;

using llmdlq::test::sample_delivery;

namespace {

llmdlq::ledger_entry recorded_at(const std::string& key, llmdlq::timestamp at) {
  auto e = sample_delivery(key);
  e.written_at = at;
  return e;
}

llmdlq::kafka_target_options options_for(const mock_cluster& cluster, const std::string& topic) {
  llmdlq::kafka_target_options options;
  options.properties = cluster.properties();
  options.topic = topic;
  return options;
}

std::map<std::string, std::size_t> keys_in(const mock_cluster& cluster, const std::string& topic, int partitions) {
  std::map<std::string, std::size_t> keys;
  for (const auto& record : read_topic(cluster.bootstrap(), topic, partitions)) ++keys[record.key.value_or("")];
  return keys;
}

}  // namespace

TEST_CASE("kafka target: a delivery is a record keyed by its idempotency key, the output as its value",
          "[kafka][target]") {
  mock_cluster cluster;
  cluster.create_topic("receipts", 3);
  auto target = llmdlq::kafka_replay_target::open(options_for(cluster, "receipts"));
  REQUIRE(target.has_value());
  REQUIRE(target->deliver(sample_delivery("k0")).has_value());
  REQUIRE(target->deliver(sample_delivery("k0")).has_value());  // again, in the same process: nothing new
  const auto records = read_topic(cluster.bootstrap(), "receipts", 3);
  REQUIRE(records.size() == 1);
  CHECK(records[0].key == "k0");
  CHECK(records[0].value == R"({"total": 2920.00})");
  CHECK(records[0].header("llmdlq-source") == "operator");
  CHECK(records[0].header("dlq-id") == "dlq-k0");
  CHECK(records[0].header("resolved-by") == "ann");
  CHECK(records[0].header("note") == "read off the scan");

  auto not_json = sample_delivery("k1");
  not_json.output = "{\"total\": ";
  auto refused = target->deliver(not_json);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == llmdlq::replay_errc::target_refused);
  CHECK(keys_in(cluster, "receipts", 3).size() == 1);
}

TEST_CASE("kafka target: a payload recorded before the target opened is looked for, and found, not sent again",
          "[kafka][target]") {
  mock_cluster cluster;
  cluster.create_topic("receipts", 2);
  const auto recorded = llmdlq::system_now() - std::chrono::minutes(1);
  {
    auto first = llmdlq::kafka_replay_target::open(options_for(cluster, "receipts"));
    REQUIRE(first.has_value());
    for (const char* key : {"k0", "k1", "k2"}) REQUIRE(first->deliver(recorded_at(key, recorded)).has_value());
  }
  // A replay killed before the ledger confirmed k0..k2 delivers them again, with k3 it never sent.
  auto second = llmdlq::kafka_replay_target::open(options_for(cluster, "receipts"));
  REQUIRE(second.has_value());
  for (const char* key : {"k0", "k1", "k2", "k3"}) REQUIRE(second->deliver(recorded_at(key, recorded)).has_value());
  CHECK(keys_in(cluster, "receipts", 2) ==
        std::map<std::string, std::size_t>{{"k0", 1}, {"k1", 1}, {"k2", 1}, {"k3", 1}});
}

TEST_CASE("kafka target: a topic without a name is refused when the target opens", "[kafka][target]") {
  mock_cluster cluster;
  auto empty = llmdlq::kafka_replay_target::open(options_for(cluster, ""));
  REQUIRE_FALSE(empty.has_value());
  CHECK(empty.error().code == llmdlq::replay_errc::target_refused);
  CHECK(empty.error().message == "kafka: the topic name is empty");
}

TEST_CASE("kafka target: llmdlq deliver killed at random moments delivers every correction once",
          "[kafka][target][tools][kill]") {
  mock_cluster cluster;
  cluster.create_topic("corrections", 3);
  const std::string spec = "kafka:" + cluster.bootstrap() + "/corrections";
  const auto tally = llmdlq::test::run_target_kill_rounds({spec, [&] { return keys_in(cluster, "corrections", 3); }},
                                                          10, 40);
  CHECK(tally.killed > 0);  // the kills landed midway, not only before or after the runs
  CHECK(tally.lost == 0);
  CHECK(tally.duplicated == 0);
  CHECK(tally.delivered_once == tally.corrections);
}

}  // namespace kafka_replay_target_test
