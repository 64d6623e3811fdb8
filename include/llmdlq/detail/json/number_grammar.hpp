// SPDX-License-Identifier: MIT
// JSON's number grammar (RFC 8259 section 6) as one transition function:
// the stream judge steps it a byte at a time across chunks, and redaction
// runs it over a whole lexeme with scan_number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// The part of a number its last byte is in: `-`, a lone `0`, the integer
/// digits, `.`, the fraction digits, `e`/`E`, the exponent's sign, its
/// digits; `none` when the byte does not belong to a number.
enum class number_part : std::uint8_t { none, minus, zero, integer, dot, fraction, e, e_sign, exponent };

/// The part a number's first byte makes, or none when `c` starts no number.
constexpr number_part number_start(char c) noexcept {
  if (c == '-') return number_part::minus;
  if (c == '0') return number_part::zero;
  return is_ascii_digit(c) ? number_part::integer : number_part::none;
}

/// The part `c` makes after `part`, or none when the number cannot go on
/// with `c` (it ends before `c` if number_complete(part)).
constexpr number_part number_next(number_part part, char c) noexcept {
  const bool digit = is_ascii_digit(c);
  switch (part) {
    case number_part::minus:
      if (c == '0') return number_part::zero;
      return digit ? number_part::integer : number_part::none;
    case number_part::integer:
      if (digit) return number_part::integer;
      [[fallthrough]];
    case number_part::zero:
      if (c == '.') return number_part::dot;
      return c == 'e' || c == 'E' ? number_part::e : number_part::none;
    case number_part::dot: return digit ? number_part::fraction : number_part::none;
    case number_part::fraction:
      if (digit) return number_part::fraction;
      return c == 'e' || c == 'E' ? number_part::e : number_part::none;
    case number_part::e:
      if (c == '+' || c == '-') return number_part::e_sign;
      [[fallthrough]];
    case number_part::e_sign:
    case number_part::exponent: return digit ? number_part::exponent : number_part::none;
    case number_part::none: return number_part::none;
  }
  return number_part::none;
}

/// Whether a number may end after a byte of `part`.
constexpr bool number_complete(number_part part) noexcept {
  return part == number_part::zero || part == number_part::integer || part == number_part::fraction ||
         part == number_part::exponent;
}

/// The longest prefix of `text` the grammar reads, and whether it is a
/// whole number.
struct number_lexeme {
  std::size_t length = 0;
  bool complete = false;
};

/// Reads the number at the start of `text`; `visit(part, bytes)` sees the
/// bytes the grammar takes, a run of digits of one part at a time.
template <class Visit>
constexpr number_lexeme scan_number(std::string_view text, Visit&& visit) {
  number_part part = number_part::none;
  std::size_t at = 0;
  while (at < text.size()) {
    const number_part next = at == 0 ? number_start(text[0]) : number_next(part, text[at]);
    if (next == number_part::none) break;
    std::size_t end = at + 1;
    // A digit goes on in the integer, the fraction and the exponent alike.
    if (next == number_part::integer || next == number_part::fraction || next == number_part::exponent) {
      while (end < text.size() && is_ascii_digit(text[end])) ++end;
    }
    visit(next, text.substr(at, end - at));
    part = next;
    at = end;
  }
  return {at, number_complete(part)};
}

constexpr number_lexeme scan_number(std::string_view text) noexcept {
  return scan_number(text, [](number_part, std::string_view) noexcept {});
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
