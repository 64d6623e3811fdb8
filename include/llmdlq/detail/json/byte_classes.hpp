// SPDX-License-Identifier: MIT
// Byte classes every reader of JSON text and of formats shares: digits, hex
// digits and their values, JSON's blanks, ASCII case, and the same tests
// eight bytes at a time (SWAR).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

constexpr bool is_ascii_digit(char c) noexcept { return static_cast<unsigned char>(c - '0') < 10; }

/// JSON's insignificant whitespace (RFC 8259 `ws`): space, tab, line feed, carriage return.
constexpr bool is_json_blank(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// Whether strict JSON allows `c` as the first byte that is not a blank
/// after the opening `bracket` (`{`: a key or `}`; `[`: a value or `]`).
constexpr bool may_follow_bracket(char bracket, char c) noexcept {
  if (bracket == '{') return c == '"' || c == '}';
  return c == ']' || c == '"' || c == '{' || c == '[' || c == '-' || is_ascii_digit(c) || c == 't' || c == 'f' ||
         c == 'n';
}

constexpr bool is_ascii_upper(char c) noexcept { return static_cast<unsigned char>(c - 'A') < 26; }

/// `c` in lower case when it is an ASCII letter, else `c`.
constexpr char ascii_lower(char c) noexcept { return is_ascii_upper(c) ? static_cast<char>(c | 0x20) : c; }

constexpr bool is_hex_digit(char c) noexcept {
  return is_ascii_digit(c) || static_cast<unsigned char>((c | 0x20) - 'a') < 6;
}

/// A hex digit's value, or -1.
constexpr int hex_value(char c) noexcept {
  if (is_ascii_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// The four hex digits at `s[i]` (a `\uXXXX` escape's code unit), or -1,
/// also when fewer than four bytes are left.
constexpr long hex4_at(std::string_view s, std::size_t i) noexcept {
  if (i > s.size() || s.size() - i < 4) return -1;
  long value = 0;
  for (std::size_t k = i; k < i + 4; ++k) {
    const int digit = hex_value(s[k]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/// The bytes at `p` as an unsigned integer of type `word` (host byte order;
/// callers test all bytes of a word alike, so the order is moot).
template <class word>
inline word load_word(const char* p) noexcept {
  word value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

namespace swar {
inline constexpr std::uint64_t ones = 0x0101010101010101;
inline constexpr std::uint64_t high = ones * 0x80;

/// High bit of each byte set where that byte is in [lo, hi]; exact only for
/// bytes below 0x80 (callers reject words with a high bit set).
constexpr std::uint64_t in_range(std::uint64_t word, unsigned char lo, unsigned char hi) noexcept {
  return (word + ones * (0x80 - lo)) & ~(word + ones * (0x7F - hi)) & high;
}
}  // namespace swar

/// Whether every byte of `word` is an ASCII digit.
constexpr bool all_digits(std::uint64_t word) noexcept {
  return (word & swar::high) == 0 && swar::in_range(word, '0', '9') == swar::high;
}

/// High bit of each byte of `word` set where that byte is not an ASCII hex
/// digit (either case), for words whose results are OR-ed together.
constexpr std::uint64_t non_hex_bytes(std::uint64_t word) noexcept {
  const std::uint64_t letters = swar::in_range(word | swar::ones * 0x20, 'a', 'f');
  return (word | ~(swar::in_range(word, '0', '9') | letters)) & swar::high;
}

/// Whether every byte of `word` is an ASCII hex digit (either case).
constexpr bool all_hex_digits(std::uint64_t word) noexcept { return non_hex_bytes(word) == 0; }

}  // namespace detail
LLMDLQ_END_NAMESPACE
