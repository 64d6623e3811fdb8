// SPDX-License-Identifier: MIT
// UUID, JSON Pointer, IBAN and Luhn scanners for llmdlq::matches_format.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// RFC 4122 string form, 8-4-4-4-12 hex digits in either case; any version
/// and variant nibble.
inline bool is_uuid(std::string_view s) noexcept {
  if (s.size() != 36) return false;
  const char* p = s.data();
  // The 32 hex digits as four words: 0-7, 9-12 with 14-17, 19-22 with 24-27, 28-35.
  const auto pair = [p](std::size_t a, std::size_t b) {
    return load_word<std::uint32_t>(p + a) | std::uint64_t{load_word<std::uint32_t>(p + b)} << 32;
  };
  return p[8] == '-' && p[13] == '-' && p[18] == '-' && p[23] == '-' &&
         (non_hex_bytes(load_word<std::uint64_t>(p)) | non_hex_bytes(pair(9, 14)) |
          non_hex_bytes(pair(19, 24)) | non_hex_bytes(load_word<std::uint64_t>(p + 28))) == 0;
}

/// RFC 6901: empty, or "/"-prefixed tokens in which "~" is only "~0" or "~1".
constexpr bool is_json_pointer(std::string_view s) noexcept {
  if (s.empty()) return true;
  if (s[0] != '/') return false;
  for (std::size_t i = s.find('~'); i != std::string_view::npos; i = s.find('~', i + 2)) {
    if (i + 1 == s.size() || (s[i + 1] != '0' && s[i + 1] != '1')) return false;
  }
  return true;
}

/// draft-handrews-relative-json-pointer-01 (the one draft 2020-12 cites): a
/// non-negative integer without leading zeros, then "#" or a JSON Pointer.
constexpr bool is_relative_json_pointer(std::string_view s) noexcept {
  if (s.empty() || !is_ascii_digit(s[0])) return false;
  std::size_t i = 1;
  if (s[0] != '0') {
    while (i < s.size() && is_ascii_digit(s[i])) ++i;
  }
  if (i == s.size()) return true;
  if (s[i] == '#') return i + 1 == s.size();
  return s[i] == '/' && is_json_pointer(s.substr(i));
}

/// IBAN character values: 0-9 for digits, 10-35 for A-Z, 0xFF for the rest.
inline constexpr auto iban_value_table = [] {
  std::array<std::uint8_t, 256> table{};
  table.fill(0xFF);
  for (unsigned c = 0; c < 10; ++c) table['0' + c] = static_cast<std::uint8_t>(c);
  for (unsigned c = 0; c < 26; ++c) table['A' + c] = static_cast<std::uint8_t>(10 + c);
  return table;
}();

/// 10^k mod 97 for every k an IBAN can need (below 6 + 2 * 30).
inline constexpr auto iban_power_of_ten = [] {
  std::array<std::uint8_t, 72> table{};
  unsigned power = 1;
  for (auto& entry : table) {
    entry = static_cast<std::uint8_t>(power);
    power = power * 10 % 97;
  }
  return table;
}();

/// ISO 13616 IBAN: two capital letters (country), two check digits 02 to 98,
/// then 11 to 30 digits or capital letters, 15 to 34 characters in all, whose
/// ISO 7064 mod 97-10 check (country and check digits moved to the end,
/// letters as 10 to 35) leaves 1. Accepted in the electronic form (no spaces)
/// and in the paper form with a single space after every group of four.
/// Lower case is refused, as ISO 13616 allows only A-Z. Country codes and
/// per-country lengths are not looked up.
inline bool is_iban(std::string_view s) noexcept {
  const std::size_t n = s.size();
  if (n < 15 || n > (s[4] == ' ' ? 34 + 8 : 34)) return false;  // so at most 30 BBAN characters
  const auto value = [](char c) -> unsigned { return iban_value_table[static_cast<unsigned char>(c)]; };
  const unsigned country_0 = value(s[0]), country_1 = value(s[1]);
  const unsigned check_0 = value(s[2]), check_1 = value(s[3]);
  if (country_0 < 10 || country_0 > 35 || country_1 < 10 || country_1 > 35 || check_0 > 9 || check_1 > 9)
    return false;
  const unsigned check = check_0 * 10 + check_1;
  if (check < 2 || check > 98) return false;
  // The number to take mod 97 is the BBAN, then the country letters, then
  // the check digits, each letter written as two decimal digits. Summing
  // value * 10^k mod 97 from the right (k = decimal digits to its right)
  // keeps every step independent but for two additions, so the loop runs at
  // load-and-multiply throughput instead of one long mod chain.
  unsigned sum = check + country_1 * iban_power_of_ten[2] + country_0 * iban_power_of_ten[4];
  unsigned k = 6, invalid = 0;
  std::size_t characters = 4;
  const auto add = [&](char c) {
    const unsigned v = value(c);
    invalid |= v;  // 0xFF for anything but 0-9 and A-Z
    sum += v * iban_power_of_ten[k];
    k += v < 10 ? 1 : 2;
    ++characters;
  };
  if (s[4] != ' ') {
    for (std::size_t i = n - 1; i >= 4; --i) add(s[i]);
  } else {  // paper form: a space before every group of four but the first
    if (s[n - 1] == ' ') return false;
    for (std::size_t group = (n - 5) / 5 * 5 + 4;; group -= 5) {  // the space before each group
      invalid |= s[group] == ' ' ? 0u : 0xFFu;
      for (std::size_t i = std::min(n, group + 5) - 1; i > group; --i) add(s[i]);
      if (group == 4) break;
    }
  }
  if ((invalid & 0x80) != 0 || characters < 15 || characters > 34) return false;
  return sum % 97 == 1;
}

/// A Luhn-valid digit string of at least two digits (card numbers, IMEIs).
/// The digits may be grouped as printed: single spaces or single hyphens
/// (one kind per string) between groups, none at either end.
constexpr bool is_luhn(std::string_view s) noexcept {
  std::uint64_t sum = 0;
  std::size_t digits = 0;
  char separator = '\0';
  bool after_digit = false;
  for (std::size_t i = s.size(); i-- > 0;) {
    const char c = s[i];
    const auto d = static_cast<unsigned char>(c - '0');
    if (d < 10) {
      // Every second digit from the right is doubled; a doubled digit adds
      // the sum of its own digits (2d - 9 when 2d > 9).
      sum += (digits & 1) ? (d > 4 ? 2u * d - 9 : 2u * d) : d;
      ++digits;
      after_digit = true;
    } else if ((c == ' ' || c == '-') && after_digit && (separator == '\0' || separator == c)) {
      separator = c;
      after_digit = false;
    } else {
      return false;
    }
  }
  return after_digit && digits >= 2 && sum % 10 == 0;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
