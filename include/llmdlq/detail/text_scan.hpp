// SPDX-License-Identifier: MIT
// Byte scans shared by the error locator, extraction and the judging
// stages: jumping through JSON string bodies at memchr speed, and over
// blanks a block at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/redaction/byte_masks.hpp"

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

/// The index of the first byte at or after `from` that is not a blank
/// (space, tab, CR or LF), or the text's size: sixty-four bytes a step, as
/// a response padded with blanks can be all blanks.
inline std::size_t skip_blanks(std::string_view text, std::size_t from) noexcept {
  for (std::size_t block = from; block < text.size(); block += byte_block::size) {
    // Past the text's end the block reads zero bytes, which are not blanks.
    const std::uint64_t others = ~byte_block(text, block).equal_any<' ', '\t', '\n', '\r'>();
    if (others != 0) {
      const std::size_t at = block + lowest_bit(others);
      return at < text.size() ? at : text.size();
    }
  }
  return text.size();
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
