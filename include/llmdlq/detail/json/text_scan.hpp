// SPDX-License-Identifier: MIT
// Byte scans shared by the error locator, extraction, the judging stages
// and the forward pass: jumping through JSON string bodies, and over
// blanks a block at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_block.hpp"

#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

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

/// Where a search through a string body stopped, and whether at a quote
/// (else at a backslash).
struct string_stop {
  const char* at;
  bool quote;
};

/// The first quote or backslash from `p` on, eight bytes a step. The
/// caller guarantees one within the buffer, and eight readable bytes from
/// every step's start (a padded text whose string is closed).
inline string_stop quote_or_backslash_by_words(const char* p) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  constexpr std::uint64_t quotes = 0x2222222222222222ull, backslashes = 0x5C5C5C5C5C5C5C5Cull;
  auto zero_bytes = [](std::uint64_t v) { return (v - ones) & ~v & highs; };
  for (;; p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    if ((zero_bytes(word ^ quotes) | zero_bytes(word ^ backslashes)) != 0) {
      // The flags are exact only up to the first (a borrow can flag the byte after it).
      for (int i = 0; i < 8; ++i) {
        if (p[i] == '"' || p[i] == '\\') return {p + i, p[i] == '"'};
      }
    }
  }
}

#if defined(__SSE2__)
/// The same, thirty-two bytes a step: most strings end in the first, whose
/// branch is then predicted, and the masks tell a quote from a backslash
/// without loading the byte again. Thirty-two readable bytes from each step.
inline string_stop quote_or_backslash_by_vectors(const char* p) noexcept {
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  auto mask = [](const char* at, __m128i byte) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, byte)));
  };
  for (;; p += 32) {
    const std::uint32_t quotes = mask(p, quote) | mask(p + 16, quote) << 16;
    const std::uint32_t backslashes = mask(p, backslash) | mask(p + 16, backslash) << 16;
    if (const std::uint32_t either = quotes | backslashes; either != 0) {
      const int first = __builtin_ctz(either);
      return {p + first, ((quotes >> first) & 1u) != 0};
    }
  }
}
#endif

/// The first quote or backslash from `p` on, as fast as the target allows;
/// the caller guarantees one, and simdjson's padding after the text.
inline string_stop quote_or_backslash(const char* p) noexcept {
#if defined(__SSE2__)
  return quote_or_backslash_by_vectors(p);
#else
  return quote_or_backslash_by_words(p);
#endif
}

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
