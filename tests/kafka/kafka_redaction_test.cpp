// SPDX-License-Identifier: MIT
// What the Kafka sink produces holds no detected value: the record's key,
// value and headers, consumed back raw from the mock cluster.
#include <string>

#include <llmdlq/kafka/sink.hpp>

#include "catch.hpp"
#include "kafka_test_support.hpp"
#include "support/pii_sample.hpp"

namespace kafka_redaction_test {

TEST_CASE("kafka_sink: no byte of the produced record holds a detected value", "[kafka][redaction]") {
  llmdlq::test::mock_cluster cluster;
  cluster.create_topic("redaction-dlq", 1);
  auto sink = llmdlq::kafka_sink::open({cluster.properties(), "redaction-dlq", std::chrono::seconds(10), {}});
  REQUIRE(sink.has_value());
  REQUIRE(sink->publish(llmdlq::test::pii_envelope()).has_value());

  const auto records = llmdlq::test::read_topic(cluster.bootstrap(), "redaction-dlq", 1);
  REQUIRE(records.size() == 1);
  std::string stored = records[0].key.value_or("") + records[0].value;
  for (const auto& h : records[0].headers) stored += h.name + h.value;
  llmdlq::test::check_no_pii(stored);
}

}  // namespace kafka_redaction_test
