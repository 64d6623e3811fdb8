// SPDX-License-Identifier: MIT
// Why a Redis call failed: Redis's own error domain (redis_stream_sink
// turns these into sink_errors).
// Part of the llmdlq::redis library (hiredis).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/error_category.hpp"

LLMDLQ_BEGIN_NAMESPACE

enum class redis_errc : std::uint8_t {
  unavailable,     ///< the server cannot be reached, or cannot serve now (LOADING, READONLY, ...): try again
  timeout,         ///< no reply in time: the command may or may not have run
  protocol_error,  ///< a reply llmdlq cannot read, or hiredis ran out of memory
  rejected,        ///< the server refused the command (OOM, WRONGTYPE, NOPERM, ...) or the options: permanent
  closed,          ///< the object was moved from
};

LLMDLQ_END_NAMESPACE
template <>
struct std::is_error_code_enum<llmdlq::redis_errc> : std::true_type {};
LLMDLQ_BEGIN_NAMESPACE

namespace detail {
template <>
struct errc_table<redis_errc> {
  static constexpr const char* category = "llmdlq.redis";
  static constexpr std::string_view unknown = "unknown";
  static constexpr bool has_permanence = true;
  static constexpr errc_entry<redis_errc> entries[] = {
      {redis_errc::unavailable, "unavailable"},
      {redis_errc::timeout, "timeout"},
      {redis_errc::protocol_error, "protocol_error"},
      {redis_errc::rejected, "rejected", true},
      {redis_errc::closed, "closed"},
  };
};
}  // namespace detail

/// Whether the same call can never succeed: the options, the data or the
/// server's configuration must change. A std::error_code of it says the
/// same by comparing equal to failure_condition::permanent.
[[nodiscard]] constexpr bool is_permanent(redis_errc code) noexcept { return detail::errc_permanent(code); }

/// The enumerator's name ("rejected"), also the message() of its
/// std::error_code, whose category is named "llmdlq.redis".
[[nodiscard]] constexpr std::string_view to_string(redis_errc code) noexcept { return detail::errc_name(code); }

struct redis_error {
  redis_errc code = redis_errc::unavailable;
  std::string message;
};

LLMDLQ_END_NAMESPACE
