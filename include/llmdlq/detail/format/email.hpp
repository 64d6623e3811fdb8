// SPDX-License-Identifier: MIT
// RFC 5321 / RFC 6531 mailbox scanners for llmdlq::matches_format.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/format/idna.hpp"
#include "llmdlq/detail/format/ip.hpp"
#include "llmdlq/detail/json/utf8.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// RFC 5322 atext: letters, digits and ! # $ % & ' * + - / = ? ^ _ ` { | } ~
inline constexpr auto atext_table = [] {
  std::array<bool, 256> table{};
  for (unsigned char c = '0'; c <= '9'; ++c) table[c] = true;
  for (unsigned char c = 'a'; c <= 'z'; ++c) table[c] = table[c - 0x20] = true;
  for (const char c : std::string_view("!#$%&'*+-/=?^_`{|}~")) table[static_cast<unsigned char>(c)] = true;
  return table;
}();

/// Length of the valid UTF-8 sequence at `text[i]`, or 0.
inline std::size_t utf8_length_at(std::string_view text, std::size_t i) noexcept {
  if (!decode_utf8(text.substr(i))) return 0;
  return utf8_sequence_length(static_cast<unsigned char>(text[i]));
}

/// RFC 5321 Mailbox: a Dot-string or Quoted-string local part of at most 64
/// bytes, "@", then a host name or an address literal ("[192.0.2.1]",
/// "[IPv6:2001:db8::1]"; general address literals have no registered tags and
/// are refused). Under `idn` (RFC 6531) the local part may also hold any
/// non-ASCII UTF-8 and the domain is an internationalised host name.
inline bool is_email(std::string_view s, bool idn) noexcept {
  const std::size_t n = s.size();
  std::size_t i = 0;
  if (n == 0) return false;
  if (s[0] == '"') {
    for (++i;;) {
      if (i >= n) return false;
      const auto c = static_cast<unsigned char>(s[i]);
      if (c == '"') break;
      if (c == '\\') {  // quoted-pairSMTP: backslash, then %d32-126
        if (i + 1 >= n || s[i + 1] < 32 || s[i + 1] > 126) return false;
        i += 2;
      } else if (c >= 0x80) {
        const std::size_t length = idn ? utf8_length_at(s, i) : 0;
        if (length == 0) return false;
        i += length;
      } else if (c >= 32 && c <= 126) {  // qtextSMTP (" and \ are handled above)
        ++i;
      } else {
        return false;
      }
    }
    ++i;
  } else {
    bool atom_expected = true;  // at the start and after each dot
    while (i < n && s[i] != '@') {
      const auto c = static_cast<unsigned char>(s[i]);
      if (atext_table[c]) {
        ++i;
        atom_expected = false;
        continue;
      }
      if (c == '.') {
        if (atom_expected) return false;
        atom_expected = true;
        ++i;
        continue;
      }
      if (c >= 0x80) {
        const std::size_t length = idn ? utf8_length_at(s, i) : 0;
        if (length == 0) return false;
        i += length;
      } else {
        return false;
      }
      atom_expected = false;
    }
    if (atom_expected) return false;
  }
  if (i > 64 || i >= n || s[i] != '@') return false;
  const std::string_view domain = s.substr(i + 1);
  if (domain.empty()) return false;
  if (domain.front() == '[') {
    if (domain.size() < 2 || domain.back() != ']') return false;
    const std::string_view literal = domain.substr(1, domain.size() - 2);
    if (literal.size() >= 5 && ascii_iequal(literal.substr(0, 5), "IPv6:")) return is_ipv6(literal.substr(5));
    return is_ipv4(literal);
  }
  return idn ? is_idn_hostname(domain) : is_hostname(domain);
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
