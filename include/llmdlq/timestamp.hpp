// SPDX-License-Identifier: MIT
// UTC timestamps with millisecond precision, and their RFC 3339 text form.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// A UTC time, to the millisecond: the precision of every llmdlq record.
using timestamp = std::chrono::sys_time<std::chrono::milliseconds>;

/// Where llmdlq reads the time. Inject one in tests and replays; the
/// default is the system clock.
using clock_function = std::function<timestamp()>;

/// The system clock, truncated to milliseconds.
[[nodiscard]] inline timestamp system_now() noexcept {
  return std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
}

/// `2026-11-29T18:44:12.345Z`: RFC 3339, UTC, always three fraction digits.
[[nodiscard]] LLMDLQ_INLINE std::string format_rfc3339(timestamp t);

/// Parses an RFC 3339 date-time (any offset, any fraction digits, `T`/`t`,
/// `Z`/`z`); fractions beyond milliseconds are truncated. Nothing when the
/// text is not one.
[[nodiscard]] LLMDLQ_INLINE std::optional<timestamp> parse_rfc3339(std::string_view text) noexcept;

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/timestamp.ipp"
#endif
