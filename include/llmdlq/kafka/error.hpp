// SPDX-License-Identifier: MIT
// Why a Kafka producer or consumer call failed: Kafka's own error domain
// (kafka_sink turns these into sink_errors).
// Part of the llmdlq::kafka library (librdkafka).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/error_category.hpp"

LLMDLQ_BEGIN_NAMESPACE

enum class kafka_errc : std::uint8_t {
  invalid_configuration,  ///< librdkafka refused a property, or the topic name is empty: permanent
  unavailable,            ///< no broker answered, or the record was not written: try again
  timeout,                ///< no delivery report in time: the record may or may not be written
  rejected,               ///< the brokers refused the record (too large, unknown topic, not authorized): permanent
  fatal,                  ///< the idempotent producer lost its guarantees; the next send starts a new one
  closed,                 ///< the producer or consumer was moved from, or the worker closed
  aborted,                ///< a worker's batch was abandoned and its transaction aborted: its inputs come again
  fenced,                 ///< another producer took the transactional.id: this worker must stop
};

LLMDLQ_END_NAMESPACE
template <>
struct std::is_error_code_enum<llmdlq::kafka_errc> : std::true_type {};
LLMDLQ_BEGIN_NAMESPACE

namespace detail {
template <>
struct errc_table<kafka_errc> {
  static constexpr const char* category = "llmdlq.kafka";
  static constexpr std::string_view unknown = "unknown";
  static constexpr bool has_permanence = true;
  static constexpr errc_entry<kafka_errc> entries[] = {
      {kafka_errc::invalid_configuration, "invalid_configuration", true},
      {kafka_errc::unavailable, "unavailable"},
      {kafka_errc::timeout, "timeout"},
      {kafka_errc::rejected, "rejected", true},
      {kafka_errc::fatal, "fatal"},
      {kafka_errc::closed, "closed"},
      {kafka_errc::aborted, "aborted"},
      {kafka_errc::fenced, "fenced", true},
  };
};
}  // namespace detail

/// Whether the same call can never succeed: the options or the record must
/// change. A std::error_code of it says the same by comparing equal to
/// failure_condition::permanent.
[[nodiscard]] constexpr bool is_permanent(kafka_errc code) noexcept { return detail::errc_permanent(code); }

/// The enumerator's name ("rejected"), also the message() of its
/// std::error_code, whose category is named "llmdlq.kafka".
[[nodiscard]] constexpr std::string_view to_string(kafka_errc code) noexcept { return detail::errc_name(code); }

struct kafka_error {
  kafka_errc code = kafka_errc::unavailable;
  std::string message;
};

LLMDLQ_END_NAMESPACE
