// SPDX-License-Identifier: MIT
// Why a Kafka producer or consumer call failed: Kafka's own error domain
// (kafka_sink turns these into sink_errors).
// Part of the llmdlq::kafka library (librdkafka).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

enum class kafka_errc : std::uint8_t {
  invalid_configuration,  ///< librdkafka refused a property, or the topic name is empty: permanent
  unavailable,            ///< no broker answered, or the record was not written: try again
  timeout,                ///< no delivery report in time: the record may or may not be written
  rejected,               ///< the brokers refused the record (too large, unknown topic, not authorized): permanent
  fatal,                  ///< the idempotent producer lost its guarantees; the next send starts a new one
  closed,                 ///< the producer or consumer was moved from
};

/// Whether the same call can never succeed: the options or the record must change.
[[nodiscard]] constexpr bool is_permanent(kafka_errc code) noexcept {
  return code == kafka_errc::invalid_configuration || code == kafka_errc::rejected;
}

[[nodiscard]] constexpr std::string_view to_string(kafka_errc code) noexcept {
  switch (code) {
    case kafka_errc::invalid_configuration: return "invalid_configuration";
    case kafka_errc::unavailable: return "unavailable";
    case kafka_errc::timeout: return "timeout";
    case kafka_errc::rejected: return "rejected";
    case kafka_errc::fatal: return "fatal";
    case kafka_errc::closed: return "closed";
  }
  return "unknown";
}

struct kafka_error {
  kafka_errc code = kafka_errc::unavailable;
  std::string message;
};

LLMDLQ_END_NAMESPACE
