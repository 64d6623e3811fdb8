// SPDX-License-Identifier: MIT
// A Kafka cluster for trying llmdlq's Kafka commands without a broker:
// librdkafka's mock cluster (it speaks the real protocol), with the topics
// named on the command line, for as long as standard input stays open.
//
//   mock_kafka_cluster TOPIC[:PARTITIONS]... < fifo
//
// prints `bootstrap HOST:PORT` once the topics exist, then serves until its
// standard input ends. Nothing is kept: the cluster lives in this process.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

namespace {

void drop_log(const rd_kafka_t*, int, const char*, const char*) {}

}  // namespace

int main(int argc, char** argv) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, drop_log);
  char error[512];
  rd_kafka_t* owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (owner == nullptr) {
    std::fprintf(stderr, "mock_kafka_cluster: %s\n", error);
    return 1;
  }
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(owner, 1);
  if (cluster == nullptr) {
    std::fprintf(stderr, "mock_kafka_cluster: cannot start the mock cluster\n");
    rd_kafka_destroy(owner);
    return 1;
  }
  int status = 0;
  for (int i = 1; i < argc && status == 0; ++i) {
    const std::string_view arg = argv[i];
    const auto colon = arg.find(':');
    const std::string topic(arg.substr(0, colon));
    int partitions = 1;
    if (colon != std::string_view::npos) {
      const auto count = arg.substr(colon + 1);
      if (std::from_chars(count.data(), count.data() + count.size(), partitions).ptr != count.data() + count.size() ||
          partitions < 1) {
        std::fprintf(stderr, "mock_kafka_cluster: '%s' is not TOPIC[:PARTITIONS]\n", argv[i]);
        status = 2;
        break;
      }
    }
    if (rd_kafka_mock_topic_create(cluster, topic.c_str(), partitions, 1) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::fprintf(stderr, "mock_kafka_cluster: cannot create %s\n", topic.c_str());
      status = 1;
    }
  }
  if (status == 0) {
    std::printf("bootstrap %s\n", rd_kafka_mock_cluster_bootstraps(cluster));
    std::fflush(stdout);
    while (std::getchar() != EOF) {
    }
  }
  rd_kafka_mock_cluster_destroy(cluster);
  rd_kafka_destroy(owner);
  return status;
}
