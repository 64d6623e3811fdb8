// SPDX-License-Identifier: MIT
// librdkafka's mock cluster in the benchmark's process: one broker, topics
// of 3 partitions.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <cstdlib>
#include <string>

#include <llmdlq/kafka/properties.hpp>

namespace bench {

class mock_cluster {
 public:
  mock_cluster() {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, [](const rd_kafka_t*, int, const char*, const char*) {});
    char error[512];
    owner_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    if (owner_ == nullptr) std::abort();
    mock_ = rd_kafka_mock_cluster_new(owner_, 1);
    if (mock_ == nullptr) std::abort();
  }
  ~mock_cluster() {
    rd_kafka_mock_cluster_destroy(mock_);
    rd_kafka_destroy(owner_);
  }
  mock_cluster(const mock_cluster&) = delete;
  mock_cluster& operator=(const mock_cluster&) = delete;

  [[nodiscard]] llmdlq::kafka_properties properties() const {
    return {{"bootstrap.servers", rd_kafka_mock_cluster_bootstraps(mock_)}};
  }
  void create(const std::string& topic) const { rd_kafka_mock_topic_create(mock_, topic.c_str(), 3, 1); }

 private:
  rd_kafka_t* owner_ = nullptr;
  rd_kafka_mock_cluster_t* mock_ = nullptr;
};

}  // namespace bench
