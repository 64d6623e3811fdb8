// SPDX-License-Identifier: MIT
// What more than one Kafka client does with a librdkafka handle: produce a
// kafka_record, and follow a rebalance. Private to llmdlq_kafka.
#pragma once

#include <librdkafka/rdkafka.h>

#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/kafka/producer.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace kafka_detail {

// Produces a copy of `record` (key, value and headers); `opaque` is the
// message's, for its delivery report. On an error nothing was queued.
inline rd_kafka_resp_err_t produce_record(rd_kafka_t* rk, const kafka_record& record, void* opaque) {
  rd_kafka_headers_t* headers = rd_kafka_headers_new(record.headers.size());
  for (const auto& header : record.headers) {
    rd_kafka_header_add(headers, header.name.data(), static_cast<ssize_t>(header.name.size()), header.value.data(),
                        static_cast<ssize_t>(header.value.size()));
  }
  const rd_kafka_resp_err_t err = rd_kafka_producev(
      rk, RD_KAFKA_V_TOPIC(record.topic.c_str()),
      RD_KAFKA_V_PARTITION(record.partition < 0 ? RD_KAFKA_PARTITION_UA : record.partition),
      RD_KAFKA_V_KEY(record.key.empty() ? nullptr : const_cast<char*>(record.key.data()), record.key.size()),
      RD_KAFKA_V_VALUE(record.value.empty() ? nullptr : const_cast<char*>(record.value.data()), record.value.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_END);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_headers_destroy(headers);  // else the message owns them
  return err;
}

// The group's rebalance protocol: "EAGER", "COOPERATIVE" or "NONE"; empty
// when librdkafka cannot tell, as in the revocation a consumer closing
// after the group dropped it gets (rd_kafka_rebalance_protocol answers NULL).
inline std::string_view rebalance_protocol(rd_kafka_t* rk) {
  const char* protocol = rd_kafka_rebalance_protocol(rk);
  return protocol == nullptr ? std::string_view() : std::string_view(protocol);
}

// Takes or gives up the partitions a rebalance callback was handed, with
// the group's protocol (eager or cooperative). When the protocol is not
// known both ways are tried: librdkafka refuses the one that does not fit
// and changes nothing for it.
inline void follow_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions) {
  const std::string_view protocol = rebalance_protocol(rk);
  const bool eager = protocol != "COOPERATIVE";
  const bool cooperative = protocol.empty() || !eager;
  const bool assigning = err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS;
  if (eager) rd_kafka_assign(rk, assigning ? partitions : nullptr);
  if (cooperative) {
    rd_kafka_error_t* e = assigning ? rd_kafka_incremental_assign(rk, partitions)
                                    : rd_kafka_incremental_unassign(rk, partitions);
    if (e != nullptr) rd_kafka_error_destroy(e);
  }
}

}  // namespace kafka_detail
LLMDLQ_END_NAMESPACE
