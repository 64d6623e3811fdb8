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
  std::size_t end = 0;  // where the number ends
  bool negative = false;
  bool dot = false;
  bool e = false;
  bool json = false;                // whether RFC 8259's grammar reads these bytes
  std::uint64_t mantissa = 0;       // the first 19 digits of integer and fraction, as one integer
  std::size_t digits = 0;           // how many digits they are, a leading zero not counted
  std::size_t fraction_digits = 0;  // how many of them follow the '.'
  int exponent_value = 0;           // the written exponent, its magnitude capped at 100000
  // The parts' spans, kept by the lenient reading only (the forward pass
  // needs none, and keeping them costs it a tenth of its time on numbers):
  std::size_t integer = 0;  // the integer's digits: [integer, integer_end)
  std::size_t integer_end = 0;
  std::size_t fraction_end = 0;  // after the fraction's digits
  std::size_t exponent = 0;      // the exponent's digits: [exponent, end) after an e

  constexpr std::size_t integer_digits() const noexcept { return integer_end - integer; }
  constexpr std::size_t exponent_digits() const noexcept { return e ? end - exponent : 0; }
  constexpr bool integral() const noexcept { return !dot && !e; }
};

/// How scan_number meets a byte RFC 8259 does not allow.
enum class number_reading : std::uint8_t {
  strict,   // it stops: `json` is false, and the rest is of no use
  lenient,  // it reads on through a `+`, missing digits and leading zeros, and keeps the spans
};

/// Reads the number at the start of `text`. Inlined: a call would return
/// the result through memory, which costs the forward pass as much as the scan.
template <number_reading reading = number_reading::strict>
LLMDLQ_ALWAYS_INLINE constexpr number_scan scan_number(std::string_view text) noexcept {
  constexpr bool strict = reading == number_reading::strict;
  // Locals, written to the result at the end: a store through a char
  // pointer may alias the result's members, which would keep them in memory.
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  const char* p = begin;
  std::uint64_t mantissa = 0;
  std::size_t digits = 0;
  auto take_digits = [&]() LLMDLQ_INLINE_LAMBDA {
    for (; p != end && is_ascii_digit(*p); ++p) {
      if (digits < 19) mantissa = mantissa * 10 + static_cast<std::uint64_t>(*p - '0');
      ++digits;
    }
  };
  number_scan n;
  const bool negative = p != end && *p == '-';
  const bool plus = !strict && p != end && *p == '+';
  p += negative || plus;
  const char* const integer = p;
  bool json = p != end && is_ascii_digit(*p) && !plus;
  if (strict && !json) return n;
  if (json && *p == '0') {
    ++p;
    json = p == end || !is_ascii_digit(*p);  // a leading zero
    if (strict && !json) return n;
  }
  take_digits();
  const char* const integer_end = p;
  const bool dot = p != end && *p == '.';
  std::size_t fraction_digits = 0;
  if (dot) {
    ++p;
    const std::size_t before = digits;
    take_digits();
    fraction_digits = digits - before;
    if (strict && fraction_digits == 0) return n;
    json = json && fraction_digits != 0;
  }
  const char* const fraction_end = p;
  const bool e = p != end && (*p == 'e' || *p == 'E');
  const char* exponent = p;
  int exponent_value = 0;
  if (e) {
    ++p;
    const bool negative_exponent = p != end && *p == '-';
    if (p != end && (*p == '+' || *p == '-')) ++p;
    exponent = p;
    int written = 0;
    for (; p != end && is_ascii_digit(*p); ++p) {
      if (written < 100000) written = written * 10 + (*p - '0');
    }
    if (strict && p == exponent) return n;
    json = json && p != exponent;
    exponent_value = negative_exponent ? -written : written;
  }
  n.end = static_cast<std::size_t>(p - begin);
  n.negative = negative;
  n.dot = dot;
  n.e = e;
  n.json = json;
  n.mantissa = mantissa;
  n.digits = digits;
  n.fraction_digits = fraction_digits;
  n.exponent_value = exponent_value;
  if constexpr (!strict) {
    n.integer = static_cast<std::size_t>(integer - begin);
    n.integer_end = static_cast<std::size_t>(integer_end - begin);
    n.fraction_end = static_cast<std::size_t>(fraction_end - begin);
    n.exponent = static_cast<std::size_t>(exponent - begin);
  }
  return n;
}

/// Whether `text` is one JSON number and nothing else.
constexpr bool is_json_number(std::string_view text) noexcept {
  const number_scan n = scan_number(text);
  return n.json && n.end == text.size();
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
