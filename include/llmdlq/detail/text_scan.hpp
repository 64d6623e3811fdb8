// SPDX-License-Identifier: MIT
// Byte scans shared by the error locator and extraction: jumping through JSON
// string bodies at memchr speed.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

namespace llmdlq::detail {

/// The index of the next quote or backslash at or after `from` in `text`
/// (or its size): inside a string nothing else matters, and memchr finds
/// both at memory speed.
inline std::size_t skip_string_body(std::string_view text, std::size_t from) noexcept {
  if (from >= text.size()) return text.size();
  const char* start = text.data() + from;
  const std::size_t left = text.size() - from;
  const void* quote = std::memchr(start, '"', left);
  const std::size_t limit = quote ? static_cast<std::size_t>(static_cast<const char*>(quote) - start) : left;
  const void* backslash = std::memchr(start, '\\', limit);
  const std::size_t at = backslash ? static_cast<std::size_t>(static_cast<const char*>(backslash) - start) : limit;
  return from + at;
}

}  // namespace llmdlq::detail
