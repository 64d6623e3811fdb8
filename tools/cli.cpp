// SPDX-License-Identifier: MIT
// Helpers shared by the `llmdlq` subcommands.
#include "cli.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>

#include <fmt/format.h>

namespace llmdlq::cli {

std::optional<std::size_t> parse_byte_count(std::string_view text) {
  std::size_t count = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (ec != std::errc() || count == 0) return std::nullopt;
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  const int shift = unit.empty() ? 0 : unit == "K" || unit == "k" ? 10 : unit == "M" || unit == "m" ? 20
                                   : unit == "G" || unit == "g" ? 30 : -1;
  if (shift < 0 || count > (std::numeric_limits<std::size_t>::max() >> shift)) return std::nullopt;
  return count << shift;
}

void complain(std::string_view command, std::string_view message) {
  std::cerr << "llmdlq " << command << ": " << message << '\n';
}

int usage_error(std::string_view command, std::string_view usage, std::string_view message) {
  complain(command, message);
  std::cerr << usage;
  return exit_usage;
}

std::optional<timestamp> parse_time_or_age(std::string_view text, timestamp now) {
  if (auto t = parse_rfc3339(text)) return t;
  std::int64_t count = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (ec != std::errc() || count < 0 || end + 1 != text.data() + text.size()) return std::nullopt;
  std::chrono::seconds unit;
  switch (*end) {
    case 's': unit = std::chrono::seconds(1); break;
    case 'm': unit = std::chrono::minutes(1); break;
    case 'h': unit = std::chrono::hours(1); break;
    case 'd': unit = std::chrono::days(1); break;
    default: return std::nullopt;
  }
  if (count > std::int64_t{100} * 365 * 86400 / unit.count()) return std::nullopt;  // a century is enough
  return now - unit * count;
}

std::string format_age(std::chrono::milliseconds age) {
  const auto seconds = std::max<std::int64_t>(std::chrono::duration_cast<std::chrono::seconds>(age).count(), 0);
  if (seconds < 60) return fmt::format("{}s", seconds);
  if (seconds < 3600) return fmt::format("{}m", seconds / 60);
  if (seconds < 86400) return fmt::format("{}h", seconds / 3600);
  return fmt::format("{}d", seconds / 86400);
}

std::string login_name() {
  if (const passwd* user = ::getpwuid(::getuid()); user && user->pw_name && *user->pw_name) return user->pw_name;
  return fmt::format("uid {}", ::getuid());
}

bool colour_for(int fd) {
  const char* no_colour = std::getenv("NO_COLOR");
  return ::isatty(fd) == 1 && (no_colour == nullptr || *no_colour == '\0');
}

}  // namespace llmdlq::cli
