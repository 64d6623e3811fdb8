// SPDX-License-Identifier: MIT
// RFC 3339 date, time, date-time and duration scanners for llmdlq::matches_format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

constexpr unsigned digit_value(char c) noexcept { return static_cast<unsigned>(c - '0'); }

constexpr unsigned two_digits(const char* p) noexcept { return digit_value(p[0]) * 10 + digit_value(p[1]); }

constexpr bool is_leap_year(unsigned year) noexcept {
  return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
}

constexpr unsigned days_in_month(unsigned year, unsigned month) noexcept {
  if (month == 2) return is_leap_year(year) ? 29 : 28;
  return 30 + ((month + (month >> 3)) & 1);  // 31 for 1 3 5 7 8 10 12
}

/// Whether the ten bytes at `p` are an RFC 3339 full-date (YYYY-MM-DD, a real day).
inline bool scan_full_date(const char* p) noexcept {
  const std::uint64_t digits = load_word<std::uint32_t>(p) |
                               std::uint64_t{load_word<std::uint16_t>(p + 5)} << 32 |
                               std::uint64_t{load_word<std::uint16_t>(p + 8)} << 48;
  if (!all_digits(digits) || p[4] != '-' || p[7] != '-') return false;
  const unsigned year = two_digits(p) * 100 + two_digits(p + 2);
  const unsigned month = two_digits(p + 5);
  const unsigned day = two_digits(p + 8);
  return month - 1 < 12 && day - 1 < days_in_month(year, month);
}

/// RFC 3339 full-time: partial-time, then `Z` or a numeric offset (T and Z may be
/// lower case, as RFC 3339 section 5.6 allows). Second 60 is accepted only when
/// the time, moved to UTC by its offset, is 23:59:60.
inline bool scan_full_time(std::string_view s) noexcept {
  const std::size_t n = s.size();
  if (n < 9) return false;
  const char* p = s.data();
  const std::uint64_t digits = load_word<std::uint16_t>(p) |
                               std::uint64_t{load_word<std::uint16_t>(p + 3)} << 16 |
                               std::uint64_t{load_word<std::uint16_t>(p + 6)} << 32 |
                               std::uint64_t{0x3030} << 48;  // two more '0's fill the word
  if (!all_digits(digits) || p[2] != ':' || p[5] != ':') return false;
  const unsigned hour = two_digits(p);
  const unsigned minute = two_digits(p + 3);
  const unsigned second = two_digits(p + 6);
  if (hour > 23 || minute > 59 || second > 60) return false;
  std::size_t i = 8;
  if (p[i] == '.') {
    const std::size_t first = ++i;
    while (i < n && is_ascii_digit(p[i])) ++i;
    if (i == first || i == n) return false;
  }
  int offset = 0;  // minutes east of UTC
  if (p[i] == 'Z' || p[i] == 'z') {
    if (i + 1 != n) return false;
  } else if (p[i] == '+' || p[i] == '-') {
    if (n - i != 6) return false;
    const char* o = p + i + 1;
    if (!(is_ascii_digit(o[0]) && is_ascii_digit(o[1]) && is_ascii_digit(o[3]) && is_ascii_digit(o[4])) ||
        o[2] != ':')
      return false;
    const unsigned offset_hour = two_digits(o);
    const unsigned offset_minute = two_digits(o + 3);
    if (offset_hour > 23 || offset_minute > 59) return false;
    offset = static_cast<int>(offset_hour * 60 + offset_minute);
    if (p[i] == '-') offset = -offset;
  } else {
    return false;
  }
  if (second == 60) {
    const int utc = (static_cast<int>(hour * 60 + minute) - offset + 2 * 1440) % 1440;
    return utc == 23 * 60 + 59;
  }
  return true;
}

inline bool is_date(std::string_view s) noexcept { return s.size() == 10 && scan_full_date(s.data()); }

inline bool is_time(std::string_view s) noexcept { return scan_full_time(s); }

inline bool is_date_time(std::string_view s) noexcept {
  return s.size() >= 20 && scan_full_date(s.data()) && (s[10] == 'T' || s[10] == 't') &&
         scan_full_time(s.substr(11));
}

/// RFC 3339 appendix A duration. Designators are upper case, as in ISO 8601;
/// a unit may only be followed by the next smaller one (`P1Y2D` is invalid),
/// and weeks stand alone.
constexpr bool is_duration(std::string_view s) noexcept {
  const std::size_t n = s.size();
  if (n < 2 || s[0] != 'P') return false;
  std::size_t i = 1;
  // Reads `1*DIGIT unit` and yields the unit, or '\0' when malformed.
  const auto component = [&]() noexcept -> char {
    const std::size_t first = i;
    while (i < n && is_ascii_digit(s[i])) ++i;
    if (i == first || i == n) return '\0';
    return s[i++];
  };
  // Reads components whose units follow `units` in order without gaps.
  const auto run = [&](std::string_view units) noexcept -> bool {
    std::size_t next = std::string_view::npos;  // index in `units` the next unit must have
    while (i < n && s[i] != 'T') {
      const std::size_t at = units.find(component());
      if (at == std::string_view::npos) return false;
      if (next != std::string_view::npos && at != next) return false;
      next = at + 1;
    }
    return next != std::string_view::npos;
  };
  if (s[i] != 'T') {
    const std::size_t first = i;
    while (i < n && is_ascii_digit(s[i])) ++i;
    if (i > first && i + 1 == n && s[i] == 'W') return true;
    i = first;
    if (!run("YMD")) return false;
    if (i == n) return true;
  }
  ++i;  // 'T'
  return run("HMS") && i == n;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
