// SPDX-License-Identifier: MIT
// What the Kafka producer and the moderation consumer share: librdkafka handles
// as owned objects, configuration, and the log trampoline. Private to
// llmdlq_kafka.
#pragma once

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/kafka/error.hpp"
#include "llmdlq/kafka/producer.hpp"
#include "llmdlq/kafka/properties.hpp"
#include "llmdlq/replay_error.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace kafka_detail {

struct conf_deleter {
  void operator()(rd_kafka_conf_t* conf) const noexcept { rd_kafka_conf_destroy(conf); }
};
using conf_ptr = std::unique_ptr<rd_kafka_conf_t, conf_deleter>;

struct partition_list_deleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const noexcept { rd_kafka_topic_partition_list_destroy(list); }
};
using partition_list_ptr = std::unique_ptr<rd_kafka_topic_partition_list_t, partition_list_deleter>;

struct message_deleter {
  void operator()(rd_kafka_message_t* message) const noexcept { rd_kafka_message_destroy(message); }
};
using message_ptr = std::unique_ptr<rd_kafka_message_t, message_deleter>;

// What a librdkafka handle's opaque points at: the host's log function and
// the object that owns the handle (for the consumer's rebalance callback).
struct handle_context {
  const kafka_log_function* log = nullptr;
  void* owner = nullptr;
};

// librdkafka logs through this, from its own threads; without a host
// function the line is dropped.
inline void forward_log(const rd_kafka_t* rk, int level, const char* facility, const char* line) {
  const auto* context = static_cast<const handle_context*>(rd_kafka_opaque(rk));
  if (context != nullptr && context->log != nullptr && *context->log) {
    (*context->log)(level, facility ? facility : "", line ? line : "");
  }
}

// A configuration with the host's properties, then llmdlq's overrides; the
// context must outlive the handle made from it.
inline expected<conf_ptr, kafka_error> make_conf(
    const kafka_properties& properties, std::initializer_list<std::pair<std::string_view, std::string>> overrides,
    handle_context* context) {
  conf_ptr conf(rd_kafka_conf_new());
  char errstr[512];
  // Set the log callback first, so that nothing is ever printed.
  rd_kafka_conf_set_log_cb(conf.get(), forward_log);
  rd_kafka_conf_set_opaque(conf.get(), context);
  auto set = [&](std::string_view name, const std::string& value) -> expected<void, kafka_error> {
    const std::string key(name);
    if (rd_kafka_conf_set(conf.get(), key.c_str(), value.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      return unexpected(kafka_error{kafka_errc::invalid_configuration,
                                    fmt::format("kafka: configuration {}: {}", key, errstr)});
    }
    return {};
  };
  for (const auto& [name, value] : properties) {
    if (auto r = set(name, value); !r) return unexpected(std::move(r.error()));
  }
  for (const auto& [name, value] : overrides) {
    if (auto r = set(name, value); !r) return unexpected(std::move(r.error()));
  }
  return conf;
}

inline std::string errstr_of(rd_kafka_resp_err_t err) { return rd_kafka_err2str(err); }

// A producer's or a reader's failure as a replay target or a redrive source
// reports it: refused for good, or unavailable for now.
inline replay_error target_error_of(kafka_error&& e) {
  const bool refused = e.code == kafka_errc::rejected || e.code == kafka_errc::invalid_configuration;
  return {refused ? replay_errc::target_refused : replay_errc::target_unavailable, std::move(e.message), {}, {}};
}

// The acknowledging producer a replay target or a redrive source sends with.
inline expected<kafka_producer, replay_error> target_producer(const kafka_properties& properties,
                                                              std::chrono::milliseconds delivery_timeout,
                                                              const kafka_log_function& log) {
  kafka_producer_options options;
  options.properties = properties;
  options.delivery_timeout = delivery_timeout;
  options.log = log;
  auto producer = kafka_producer::open(std::move(options));
  if (!producer) return unexpected(target_error_of(std::move(producer.error())));
  return std::move(*producer);
}

// A consumer that reads the partitions it is assigned, `read_committed`:
// it joins no group (librdkafka wants a group.id all the same), commits
// nothing and creates no topic. `overrides` come on top.
inline expected<rd_kafka_t*, kafka_error> assigned_reader(
    kafka_properties properties, std::string_view group, handle_context* context,
    std::initializer_list<std::pair<std::string_view, std::string>> overrides = {}) {
  properties.try_emplace("group.id", std::string(group));
  auto conf = make_conf(properties,
                        {{"enable.auto.commit", "false"},
                         {"enable.partition.eof", "true"},
                         {"isolation.level", "read_committed"},
                         {"allow.auto.create.topics", "false"}},
                        context);
  if (!conf) return unexpected(std::move(conf.error()));
  char errstr[512];
  for (const auto& [name, value] : overrides) {
    const std::string key(name);
    if (rd_kafka_conf_set(conf->get(), key.c_str(), value.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      return unexpected(kafka_error{kafka_errc::invalid_configuration,
                                    fmt::format("kafka: configuration {}: {}", key, errstr)});
    }
  }
  rd_kafka_t* reader = rd_kafka_new(RD_KAFKA_CONSUMER, conf->get(), errstr, sizeof errstr);
  if (reader == nullptr) {
    return unexpected(kafka_error{kafka_errc::invalid_configuration, fmt::format("kafka: consumer: {}", errstr)});
  }
  (void)conf->release();  // the consumer owns it now
  return reader;
}

// Closes and destroys a consumer made by assigned_reader, if any.
inline void close_reader(rd_kafka_t* reader) noexcept {
  if (reader == nullptr) return;
  rd_kafka_consumer_close(reader);
  rd_kafka_destroy(reader);
}

// A record's headers, in order; a header without a value reads as empty.
inline std::vector<kafka_header> headers_of(const rd_kafka_message_t& m) {
  std::vector<kafka_header> out;
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&m, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return out;
  const char* name = nullptr;
  const void* value = nullptr;
  std::size_t size = 0;
  for (std::size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
       ++i) {
    out.push_back({name, value != nullptr ? std::string(static_cast<const char*>(value), size) : std::string()});
  }
  return out;
}

// A timeout as librdkafka's int milliseconds, at most a day.
inline int milliseconds_of(std::chrono::milliseconds timeout) {
  return static_cast<int>(std::min<std::chrono::milliseconds::rep>(timeout.count(), 24 * 3600 * 1000));
}

// The partitions of `topic`, from the cluster's metadata: rejected for a
// topic the cluster refuses or one without partitions.
inline expected<std::vector<std::int32_t>, kafka_error> topic_partitions(rd_kafka_t* handle, const std::string& topic,
                                                                         std::chrono::milliseconds timeout) {
  rd_kafka_topic_t* named = rd_kafka_topic_new(handle, topic.c_str(), nullptr);
  if (named == nullptr) {
    return unexpected(kafka_error{kafka_errc::invalid_configuration,
                                  fmt::format("kafka: topic {}: {}", topic, errstr_of(rd_kafka_last_error()))});
  }
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(handle, 0, named, &metadata, milliseconds_of(timeout));
  rd_kafka_topic_destroy(named);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return unexpected(kafka_error{err == RD_KAFKA_RESP_ERR__TIMED_OUT ? kafka_errc::timeout : kafka_errc::unavailable,
                                  fmt::format("kafka: reading the metadata of {}: {}", topic, errstr_of(err))});
  }
  std::vector<std::int32_t> partitions;
  std::optional<kafka_error> failure;
  for (int t = 0; t < metadata->topic_cnt && !failure; ++t) {
    const auto& info = metadata->topics[t];
    if (info.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      failure = kafka_error{kafka_errc::rejected, fmt::format("kafka: topic {}: {}", topic, errstr_of(info.err))};
      break;
    }
    for (int p = 0; p < info.partition_cnt; ++p) partitions.push_back(info.partitions[p].id);
  }
  rd_kafka_metadata_destroy(metadata);
  if (failure) return unexpected(std::move(*failure));
  if (partitions.empty()) {
    return unexpected(kafka_error{kafka_errc::rejected, fmt::format("kafka: topic {} has no partitions", topic)});
  }
  return partitions;
}

}  // namespace kafka_detail
LLMDLQ_END_NAMESPACE
