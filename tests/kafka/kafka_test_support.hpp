// SPDX-License-Identifier: MIT
// librdkafka's mock cluster for one test, and plain librdkafka readers that
// check what a topic holds and what a group committed, independently of the
// code under test.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <llmdlq/kafka/sink.hpp>

#include "catch.hpp"
#include "support/eventually.hpp"

namespace llmdlq::test {

inline void drop_kafka_log(const rd_kafka_t*, int, const char*, const char*) {}

/// The Produce request's API key (librdkafka's public headers do not name it).
inline constexpr std::int16_t produce_api_key = 0;

/// Properties that keep a client quick against the mock cluster: short
/// backoffs, so that recovery takes milliseconds rather than seconds.
inline kafka_properties fast_client(const std::string& bootstrap) {
  return {{"bootstrap.servers", bootstrap},
          {"reconnect.backoff.ms", "20"},
          {"reconnect.backoff.max.ms", "200"},
          {"retry.backoff.ms", "50"},
          {"socket.connection.setup.timeout.ms", "2000"}};
}

/// A mock cluster with `brokers` brokers (ids 1..brokers), destroyed with the test.
class mock_cluster {
 public:
  explicit mock_cluster(int brokers = 1) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, drop_kafka_log);
    char error[512];
    owner_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    REQUIRE(owner_ != nullptr);
    cluster_ = rd_kafka_mock_cluster_new(owner_, brokers);
    REQUIRE(cluster_ != nullptr);
  }
  ~mock_cluster() {
    rd_kafka_mock_cluster_destroy(cluster_);
    rd_kafka_destroy(owner_);
  }
  mock_cluster(const mock_cluster&) = delete;
  mock_cluster& operator=(const mock_cluster&) = delete;

  [[nodiscard]] rd_kafka_mock_cluster_t* get() const noexcept { return cluster_; }
  [[nodiscard]] std::string bootstrap() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }
  [[nodiscard]] kafka_properties properties() const { return fast_client(bootstrap()); }

  void create_topic(const std::string& name, int partitions, int leader = -1) const {
    REQUIRE(rd_kafka_mock_topic_create(cluster_, name.c_str(), partitions, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
    for (int p = 0; leader > 0 && p < partitions; ++p) {
      REQUIRE(rd_kafka_mock_partition_set_leader(cluster_, name.c_str(), p, leader) == RD_KAFKA_RESP_ERR_NO_ERROR);
    }
  }

 private:
  rd_kafka_t* owner_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
};

/// A record as a consumer sees it.
struct consumed_record {
  std::int32_t partition = -1;
  std::int64_t offset = -1;
  std::optional<std::string> key;
  std::string value;
  std::vector<kafka_header> headers;

  [[nodiscard]] std::optional<std::string> header(std::string_view name) const {
    std::optional<std::string> found;
    for (const auto& h : headers) {
      if (h.name == name) {
        REQUIRE_FALSE(found.has_value());  // each header at most once
        found = h.value;
      }
    }
    return found;
  }
};

namespace detail_kafka {

inline rd_kafka_t* plain_consumer(const std::string& bootstrap, const std::string& group, bool eof) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, drop_kafka_log);
  char error[512];
  const std::map<std::string, std::string> settings = {{"bootstrap.servers", bootstrap},
                                                       {"group.id", group},
                                                       {"enable.auto.commit", "false"},
                                                       {"enable.partition.eof", eof ? "true" : "false"}};
  for (const auto& [name, value] : settings) {
    REQUIRE(rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error) == RD_KAFKA_CONF_OK);
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  REQUIRE(rk != nullptr);
  return rk;
}

}  // namespace detail_kafka

/// A record as another program produces it: key (none when absent), value,
/// headers in order (a name may repeat) and timestamp in milliseconds (0:
/// the producer's clock).
struct raw_record {
  std::optional<std::string> key;
  std::string value;
  std::vector<kafka_header> headers;
  std::int64_t timestamp_ms = 0;
};

/// `v` as Java's ByteBuffer.putInt (4 bytes) or putLong (8 bytes) writes it:
/// big-endian, two's complement (Spring Kafka's binary dead-letter headers).
template <class Int>
std::string java_bytes(Int v) {
  std::string out(sizeof(Int), '\0');
  const auto bits = static_cast<std::make_unsigned_t<Int>>(v);
  for (std::size_t i = 0; i < sizeof(Int); ++i)
    out[i] = static_cast<char>((bits >> (8 * (sizeof(Int) - 1 - i))) & 0xffu);
  return out;
}

/// Produces `records` to partition 0 of `topic` with plain librdkafka, as a
/// program that is not llmdlq writes them, and waits until every one is written.
inline void produce_raw(const std::string& bootstrap, const std::string& topic,
                        const std::vector<raw_record>& records) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, drop_kafka_log);
  int failed = 0;
  rd_kafka_conf_set_opaque(conf, &failed);
  rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t* rk, const rd_kafka_message_t* m, void*) {
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) ++*static_cast<int*>(rd_kafka_opaque(rk));
  });
  char error[512];
  REQUIRE(rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), error, sizeof error) == RD_KAFKA_CONF_OK);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  REQUIRE(rk != nullptr);
  for (const auto& r : records) {
    rd_kafka_headers_t* headers = rd_kafka_headers_new(r.headers.size());
    for (const auto& h : r.headers) {
      REQUIRE(rd_kafka_header_add(headers, h.name.c_str(), -1, h.value.data(), h.value.size()) ==
              RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    const void* key = r.key ? r.key->data() : nullptr;
    const std::size_t key_size = r.key ? r.key->size() : 0;
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_KEY(key, key_size), RD_KAFKA_V_VALUE(const_cast<char*>(r.value.data()), r.value.size()),
        RD_KAFKA_V_TIMESTAMP(r.timestamp_ms), RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_headers_destroy(headers);  // else the record owns them
    REQUIRE(err == RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  CHECK(rd_kafka_flush(rk, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(rk);
  REQUIRE(failed == 0);
}

/// Everything in `topic` (partitions 0..partitions-1), read from the start by
/// an assigned consumer (no group join), in partition then offset order.
inline std::vector<consumed_record> read_topic(const std::string& bootstrap, const std::string& topic,
                                               int partitions) {
  rd_kafka_t* rk = detail_kafka::plain_consumer(bootstrap, "llmdlq-test-reader", true);
  // Ask for the topic's metadata now rather than at librdkafka's next scan of new topics (a second away).
  rd_kafka_topic_t* handle = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  if (rd_kafka_metadata(rk, 0, handle, &metadata, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_metadata_destroy(metadata);
  }
  rd_kafka_topic_destroy(handle);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  REQUIRE(rd_kafka_assign(rk, list) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(list);
  std::vector<consumed_record> records;
  std::set<std::int32_t> at_end;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (static_cast<int>(at_end.size()) < partitions && std::chrono::steady_clock::now() < until) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end.insert(m->partition);
    } else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      consumed_record r;
      r.partition = m->partition;
      r.offset = m->offset;
      if (m->key != nullptr) r.key = std::string(static_cast<const char*>(m->key), m->key_len);
      if (m->payload != nullptr) r.value = std::string(static_cast<const char*>(m->payload), m->len);
      rd_kafka_headers_t* headers = nullptr;
      if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name = nullptr;
        const void* value = nullptr;
        std::size_t size = 0;
        for (std::size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
             ++i) {
          r.headers.push_back({name, std::string(static_cast<const char*>(value), size)});
        }
      }
      records.push_back(std::move(r));
    }
    rd_kafka_message_destroy(m);
  }
  CHECK(static_cast<int>(at_end.size()) == partitions);
  rd_kafka_destroy(rk);
  std::sort(records.begin(), records.end(),
            [](const auto& a, const auto& b) { return std::pair(a.partition, a.offset) < std::pair(b.partition, b.offset); });
  return records;
}

/// What a group that consumed all of `topic` has committed: each partition's
/// end offset, or -1 for a partition that holds nothing.
inline std::vector<std::int64_t> consumed_all(const std::string& bootstrap, const std::string& topic, int partitions) {
  std::vector<std::int64_t> ends(static_cast<std::size_t>(partitions), -1);
  for (const auto& r : read_topic(bootstrap, topic, partitions)) {
    auto& end = ends[static_cast<std::size_t>(r.partition)];
    end = std::max(end, r.offset + 1);
  }
  return ends;
}

/// The offsets `group` committed on `topic`'s partitions (-1: none yet).
inline std::vector<std::int64_t> committed_offsets(const std::string& bootstrap, const std::string& group,
                                                   const std::string& topic, int partitions) {
  rd_kafka_t* rk = detail_kafka::plain_consumer(bootstrap, group, false);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) rd_kafka_topic_partition_list_add(list, topic.c_str(), p);
  REQUIRE(rd_kafka_committed(rk, list, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(partitions), -1);
  for (int i = 0; i < list->cnt; ++i) {
    offsets[static_cast<std::size_t>(list->elems[i].partition)] = list->elems[i].offset < 0 ? -1 : list->elems[i].offset;
  }
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_destroy(rk);
  return offsets;
}

}  // namespace llmdlq::test
