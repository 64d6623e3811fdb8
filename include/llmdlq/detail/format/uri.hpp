// SPDX-License-Identifier: MIT
// RFC 3986 URI, RFC 3987 IRI and RFC 6570 URI Template scanners for llmdlq::matches_format.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/format/ip.hpp"
#include "llmdlq/detail/json/utf8.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Character classes of RFC 3986 (ASCII only; non-ASCII is handled apart).
enum uri_char : std::uint16_t {
  uri_unreserved = 1 << 0,  ///< ALPHA DIGIT - . _ ~
  uri_sub_delim = 1 << 1,   ///< ! $ & ' ( ) * + , ; =
  uri_colon = 1 << 2,
  uri_at = 1 << 3,
  uri_slash = 1 << 4,
  uri_question = 1 << 5,
  uri_scheme = 1 << 6,        ///< ALPHA DIGIT + - .
  uri_hex = 1 << 7,           ///< HEXDIG
  uri_alpha = 1 << 8,         ///< ALPHA
  uri_template_lit = 1 << 9,  ///< RFC 6570 literals, ASCII part, less "%"
  uri_varchar = 1 << 10,      ///< RFC 6570 varchar less pct-encoded: ALPHA DIGIT _
};

inline constexpr auto uri_char_table = [] {
  std::array<std::uint16_t, 256> table{};
  const auto add = [&](std::string_view chars, std::uint16_t bits) {
    for (const char c : chars) table[static_cast<unsigned char>(c)] |= bits;
  };
  for (unsigned char c = 'a'; c <= 'z'; ++c) {
    table[c] |= uri_unreserved | uri_scheme | uri_alpha | uri_varchar;
    table[c - 0x20] |= uri_unreserved | uri_scheme | uri_alpha | uri_varchar;
  }
  for (unsigned char c = '0'; c <= '9'; ++c) table[c] |= uri_unreserved | uri_scheme | uri_hex | uri_varchar;
  add("abcdefABCDEF", uri_hex);
  add("-._~", uri_unreserved);
  add("_", uri_varchar);
  add("+-.", uri_scheme);
  add("!$&'()*+,;=", uri_sub_delim);
  add(":", uri_colon);
  add("@", uri_at);
  add("/", uri_slash);
  add("?", uri_question);
  // RFC 6570 literals: %x21 / %x23-24 / %x26 / %x28-3B / %x3D / %x3F-5B / %x5D /
  // %x5F / %x61-7A / %x7E, plus %x27 (the apostrophe, a sub-delim; RFC 6570
  // erratum 6937 and the JSON Schema suite accept it).
  for (unsigned c = 0x21; c <= 0x7E; ++c) table[c] |= uri_template_lit;
  for (const char c : std::string_view("\"%<>\\^`{|}"))
    table[static_cast<unsigned char>(c)] &= static_cast<std::uint16_t>(~uri_template_lit);
  return table;
}();

constexpr bool has_uri_class(char c, std::uint16_t mask) noexcept {
  return (uri_char_table[static_cast<unsigned char>(c)] & mask) != 0;
}

/// RFC 3987 ucschar.
constexpr bool is_ucschar(char32_t cp) noexcept {
  if (cp < 0x10000) {
    return (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xF900 && cp <= 0xFDCF) || (cp >= 0xFDF0 && cp <= 0xFFEF);
  }
  return (cp & 0xFFFF) <= 0xFFFD && cp < 0xF0000 && !(cp >= 0xE0000 && cp < 0xE1000);
}

/// RFC 3987 iprivate.
constexpr bool is_iprivate(char32_t cp) noexcept {
  return (cp >= 0xE000 && cp <= 0xF8FF) || (cp >= 0xF0000 && (cp & 0xFFFF) <= 0xFFFD && cp <= 0x10FFFD);
}

/// What scan_uri_chars accepts beyond the ASCII classes in `mask`.
enum class uri_extra : std::uint8_t {
  none,              ///< URI: pct-encoded triplets only
  ucschar,           ///< IRI: also ucschar
  ucschar_iprivate,  ///< IRI query, URI Template literal: also ucschar and iprivate
};

/// Advances `i` over characters of class `mask`, pct-encoded triplets and the
/// non-ASCII code points `extra` allows; stops at the first other character.
inline void scan_uri_chars(std::string_view s, std::size_t& i, std::uint16_t mask, uri_extra extra) noexcept {
  const std::size_t n = s.size();
  while (i < n) {
    const char c = s[i];
    if (has_uri_class(c, mask)) {
      ++i;
    } else if (c == '%') {
      if (i + 2 >= n || !has_uri_class(s[i + 1], uri_hex) || !has_uri_class(s[i + 2], uri_hex)) return;
      i += 3;
    } else if (static_cast<unsigned char>(c) >= 0x80 && extra != uri_extra::none) {
      const auto cp = decode_utf8(s.substr(i));
      if (!cp || !(is_ucschar(*cp) || (extra == uri_extra::ucschar_iprivate && is_iprivate(*cp)))) return;
      i += utf8_sequence_length(static_cast<unsigned char>(c));
    } else {
      return;
    }
  }
}

/// RFC 3986 IPvFuture: "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ).
constexpr bool is_ipvfuture(std::string_view s) noexcept {
  if (s.size() < 4 || (s[0] | 0x20) != 'v') return false;
  std::size_t i = 1;
  while (i < s.size() && has_uri_class(s[i], uri_hex)) ++i;
  if (i == 1 || i + 1 >= s.size() || s[i] != '.') return false;
  for (++i; i < s.size(); ++i)
    if (!has_uri_class(s[i], uri_unreserved | uri_sub_delim | uri_colon)) return false;
  return true;
}

/// authority = [ userinfo "@" ] host [ ":" port ], from `i` to the next "/",
/// "?", "#" or the end.
inline bool scan_authority(std::string_view s, std::size_t& i, uri_extra extra) noexcept {
  std::size_t end = s.find_first_of("/?#", i);
  if (end == std::string_view::npos) end = s.size();
  std::string_view authority = s.substr(i, end - i);
  i = end;
  if (const std::size_t at = authority.find('@'); at != std::string_view::npos) {
    std::size_t j = 0;
    scan_uri_chars(authority, j, uri_unreserved | uri_sub_delim | uri_colon, extra);
    if (j != at) return false;
    authority.remove_prefix(at + 1);
  }
  std::size_t j = 0;
  if (!authority.empty() && authority[0] == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view literal = authority.substr(1, close - 1);
    if (!is_ipv6(literal) && !is_ipvfuture(literal)) return false;
    j = close + 1;
  } else {
    scan_uri_chars(authority, j, uri_unreserved | uri_sub_delim, extra);
  }
  if (j == authority.size()) return true;
  if (authority[j] != ':') return false;
  for (++j; j < authority.size(); ++j)
    if (static_cast<unsigned char>(authority[j] - '0') >= 10) return false;
  return true;
}

/// RFC 3986 URI-reference (RFC 3987 IRI-reference under `iri`); with
/// `absolute`, the scheme is required (URI / IRI).
inline bool is_uri_reference(std::string_view s, bool iri, bool absolute) noexcept {
  const std::size_t n = s.size();
  const uri_extra extra = iri ? uri_extra::ucschar : uri_extra::none;
  constexpr std::uint16_t pchar = uri_unreserved | uri_sub_delim | uri_colon | uri_at;
  std::size_t i = 0;
  bool has_scheme = false;
  if (n > 0 && has_uri_class(s[0], uri_alpha)) {
    std::size_t j = 1;
    while (j < n && has_uri_class(s[j], uri_scheme)) ++j;
    if (j < n && s[j] == ':') has_scheme = true, i = j + 1;
  }
  if (absolute && !has_scheme) return false;
  if (s.substr(i).starts_with("//")) {
    i += 2;
    if (!scan_authority(s, i, extra)) return false;
  } else if (!has_scheme && i < n && s[i] != '/') {
    // path-noscheme: no colon before the first slash
    scan_uri_chars(s, i, pchar & ~uri_colon, extra);
    if (i < n && s[i] == ':') return false;
  }
  scan_uri_chars(s, i, pchar | uri_slash, extra);
  if (i < n && s[i] == '?') {
    ++i;
    scan_uri_chars(s, i, pchar | uri_slash | uri_question,
                   iri ? uri_extra::ucschar_iprivate : uri_extra::none);
  }
  if (i < n && s[i] == '#') {
    ++i;
    scan_uri_chars(s, i, pchar | uri_slash | uri_question, extra);
  }
  return i == n;
}

/// RFC 6570 URI Template (level 4 syntax). Expressions use the defined
/// operators only; the reserved ones (= , ! @ |) are refused.
inline bool is_uri_template(std::string_view s) noexcept {
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (true) {
    scan_uri_chars(s, i, uri_template_lit, uri_extra::ucschar_iprivate);
    if (i == n) return true;
    if (s[i] != '{') return false;
    ++i;
    if (i < n && std::string_view("+#./;?&").find(s[i]) != std::string_view::npos) ++i;
    for (;;) {  // varspec *( "," varspec )
      // varname = varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" / pct-encoded
      bool varchar_expected = true;
      const std::size_t first = i;
      while (i < n) {
        if (has_uri_class(s[i], uri_varchar)) {
          ++i;
        } else if (s[i] == '%' && i + 2 < n && has_uri_class(s[i + 1], uri_hex) &&
                   has_uri_class(s[i + 2], uri_hex)) {
          i += 3;
        } else if (s[i] == '.' && !varchar_expected) {
          ++i;
          varchar_expected = true;
          continue;
        } else {
          break;
        }
        varchar_expected = false;
      }
      if (i == first || varchar_expected || i == n) return false;
      if (s[i] == ':') {  // prefix = ":" max-length, %x31-39 0*3DIGIT
        const std::size_t digits = ++i;
        if (i == n || s[i] < '1' || s[i] > '9') return false;
        while (i < n && static_cast<unsigned char>(s[i] - '0') < 10) ++i;
        if (i - digits > 4) return false;
      } else if (s[i] == '*') {
        ++i;
      }
      if (i == n) return false;
      if (s[i] == '}') break;
      if (s[i] != ',') return false;
      ++i;
    }
    ++i;
  }
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
