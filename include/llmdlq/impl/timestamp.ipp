// SPDX-License-Identifier: MIT
// Definitions for timestamp.hpp, on <chrono>'s civil calendar.
#pragma once

#include <cstdio>

#include "llmdlq/config.hpp"
#include "llmdlq/format.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE std::string format_rfc3339(timestamp t) {
  using namespace std::chrono;
  const auto day = floor<days>(t);
  const year_month_day date{day};
  const hh_mm_ss time{t - day};
  char text[32];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                static_cast<int>(time.seconds().count()), static_cast<int>(time.subseconds().count()));
  return text;
}

LLMDLQ_INLINE std::optional<timestamp> parse_rfc3339(std::string_view text) noexcept {
  using namespace std::chrono;
  // The format scanner checks the grammar and the calendar (leap years,
  // leap seconds); what follows only reads the fields it accepted.
  if (!matches_format(format_kind::date_time, text)) return std::nullopt;
  auto number = [&](std::size_t at, std::size_t digits) {
    int value = 0;
    for (std::size_t i = 0; i < digits; ++i) value = value * 10 + (text[at + i] - '0');
    return value;
  };
  const year_month_day date{year{number(0, 4)}, month{static_cast<unsigned>(number(5, 2))},
                            day{static_cast<unsigned>(number(8, 2))}};
  int second = number(17, 2);
  std::size_t at = 19;
  int millis = 0;
  if (text[at] == '.') {
    int scale = 100;
    for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, scale /= 10) {
      millis += (text[at] - '0') * scale;
    }
  }
  if (second == 60) second = 59, millis = 999;  // a leap second: the last instant of the minute before
  auto t = sys_days{date} + hours{number(11, 2)} + minutes{number(14, 2)} + seconds{second} +
           milliseconds{millis};
  if (text[at] != 'Z' && text[at] != 'z') {
    const auto offset = hours{number(at + 1, 2)} + minutes{number(at + 4, 2)};
    t = text[at] == '+' ? t - offset : t + offset;
  }
  return time_point_cast<milliseconds>(t);
}

LLMDLQ_END_NAMESPACE
