// SPDX-License-Identifier: MIT
// JSON's number grammar (RFC 8259 section 6), read two ways: a transition
// function the stream judge steps a byte at a time across chunks, and
// scan_number, straight-line over a whole lexeme, for the forward pass,
// repair and redaction. A test holds the two to one language.
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

/// A number as JSON texts and models write it, read straight through:
/// `[+-]? digits* ('.' digits*)? ([eE] [+-]? digits*)?`, each part possibly
/// empty. Where that breaks RFC 8259 (a `+`, no digits, a leading zero) is
/// the reader's to decide: the forward pass refuses it, repair rewrites it.
/// The value's digits are gathered on the way, for the forward pass.
struct number_scan {
  std::size_t end = 0;      // where the number ends
  std::size_t integer = 0;  // the integer's digits: [integer, integer_end)
  std::size_t integer_end = 0;
  std::size_t fraction_end = 0;  // the fraction's digits: [integer_end + 1, fraction_end) after a '.'
  std::size_t exponent = 0;      // the exponent's digits: [exponent, end) after an e
  bool negative = false;
  bool dot = false;
  bool e = false;
  std::uint64_t mantissa = 0;  // the first 19 digits of integer and fraction, as one integer
  std::size_t digits = 0;      // how many digits they are, a leading zero not counted
  int exponent_value = 0;      // the written exponent, its magnitude capped at 100000

  constexpr std::size_t integer_digits() const noexcept { return integer_end - integer; }
  constexpr std::size_t fraction_digits() const noexcept { return dot ? fraction_end - integer_end - 1 : 0; }
  constexpr std::size_t exponent_digits() const noexcept { return e ? end - exponent : 0; }
  constexpr bool integral() const noexcept { return !dot && !e; }

  /// Whether these bytes are a number RFC 8259's grammar reads.
  constexpr bool json(std::string_view text) const noexcept {
    return (integer == 0 || text[0] == '-') && integer_digits() != 0 &&
           (text[integer] != '0' || integer_digits() == 1) && (!dot || fraction_digits() != 0) &&
           (!e || exponent_digits() != 0);
  }
};

/// Reads the number at the start of `text`.
constexpr number_scan scan_number(std::string_view text) noexcept {
  number_scan n;
  const std::size_t size = text.size();
  std::size_t at = 0;
  auto take_digits = [&] {
    for (; at < size && is_ascii_digit(text[at]); ++at) {
      if (n.digits < 19) n.mantissa = n.mantissa * 10 + static_cast<std::uint64_t>(text[at] - '0');
      ++n.digits;
    }
  };
  if (at < size && (text[at] == '-' || text[at] == '+')) n.negative = text[at++] == '-';
  n.integer = at;
  if (at < size && text[at] == '0') ++at;  // a leading zero adds nothing to the value
  take_digits();                           // (and digits after it break the grammar)
  n.integer_end = at;
  if (at < size && text[at] == '.') {
    n.dot = true;
    ++at;
    take_digits();
  }
  n.fraction_end = at;
  if (at < size && (text[at] == 'e' || text[at] == 'E')) {
    n.e = true;
    ++at;
    const bool negative = at < size && text[at] == '-';
    if (at < size && (text[at] == '+' || text[at] == '-')) ++at;
    n.exponent = at;
    int written = 0;
    for (; at < size && is_ascii_digit(text[at]); ++at) {
      if (written < 100000) written = written * 10 + (text[at] - '0');
    }
    n.exponent_value = negative ? -written : written;
  }
  n.end = at;
  return n;
}

/// Whether `text` is one JSON number and nothing else.
constexpr bool is_json_number(std::string_view text) noexcept {
  const number_scan n = scan_number(text);
  return n.end == text.size() && n.json(text);
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
