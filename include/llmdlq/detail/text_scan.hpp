// SPDX-License-Identifier: MIT
// Byte scans shared by the error locator and extraction: jumping through JSON
// string bodies at memchr speed.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Jumps through JSON string bodies at memchr speed: next() gives the index
/// of the next quote or backslash at or after `from` (or the text's size).
/// It remembers where the next quote is, so that a body with many escapes
/// and no closing quote is still searched for quotes once, not once per
/// escape.
class string_body_scanner {
 public:
  std::size_t next(std::string_view text, std::size_t from) noexcept {
    if (from >= text.size()) return text.size();
    if (quote_ == unknown || quote_ < from) {
      const void* quote = std::memchr(text.data() + from, '"', text.size() - from);
      quote_ = quote ? static_cast<std::size_t>(static_cast<const char*>(quote) - text.data()) : text.size();
    }
    const void* backslash = std::memchr(text.data() + from, '\\', quote_ - from);
    return backslash ? static_cast<std::size_t>(static_cast<const char*>(backslash) - text.data()) : quote_;
  }

 private:
  static constexpr std::size_t unknown = std::string_view::npos;
  std::size_t quote_ = unknown;  // the next quote at or after the last `from`, or the size
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
