// SPDX-License-Identifier: MIT
// Why a Redis call failed: Redis's own error domain (redis_stream_sink
// turns these into sink_errors).
// Part of the llmdlq::redis library (hiredis).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

enum class redis_errc : std::uint8_t {
  unavailable,     ///< the server cannot be reached, or cannot serve now (LOADING, READONLY, ...): try again
  timeout,         ///< no reply in time: the command may or may not have run
  protocol_error,  ///< a reply llmdlq cannot read, or hiredis ran out of memory
  rejected,        ///< the server refused the command (OOM, WRONGTYPE, NOPERM, ...) or the options: permanent
  closed,          ///< the object was moved from
};

/// Whether the same call can never succeed: the options, the data or the
/// server's configuration must change.
[[nodiscard]] constexpr bool is_permanent(redis_errc code) noexcept { return code == redis_errc::rejected; }

[[nodiscard]] constexpr std::string_view to_string(redis_errc code) noexcept {
  switch (code) {
    case redis_errc::unavailable: return "unavailable";
    case redis_errc::timeout: return "timeout";
    case redis_errc::protocol_error: return "protocol_error";
    case redis_errc::rejected: return "rejected";
    case redis_errc::closed: return "closed";
  }
  return "unknown";
}

struct redis_error {
  redis_errc code = redis_errc::unavailable;
  std::string message;
};

LLMDLQ_END_NAMESPACE
