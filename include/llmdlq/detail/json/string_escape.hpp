// SPDX-License-Identifier: MIT
// JSON's string escapes (RFC 8259 section 7), read once for every reader: the
// one-letter escapes, `\uXXXX` code units and the surrogate pairs two of them
// make. read_json_escape says what an escape is and how wide, and what is
// wrong with it; each reader chooses what to do then. The strict reading
// (unescape_json_string) refuses any fault; repair rewrites the faulty
// escape, and redaction reads past it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/json/utf8.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// The character a one-letter JSON escape stands for (`n`: a line feed), or
/// -1 when `letter` is none of `"\/bfnrt`.
constexpr int simple_escape_value(char letter) noexcept {
  switch (letter) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return -1;
  }
}

enum class escape_fault : std::uint8_t {
  none,
  truncated,       ///< the text ends inside the escape
  invalid,         ///< not an escape JSON has: `\a`, `\x41`, `\u12G4`
  lone_surrogate,  ///< half a surrogate pair, which encodes no character
};

/// One escape: the code point it stands for, the bytes it spans from its
/// backslash (both escapes of a pair), and its fault.
struct json_escape {
  char32_t code_point = 0;
  std::size_t width = 0;
  escape_fault fault = escape_fault::none;
};

/// The escape whose backslash is at `s[i]`. A fault's width is what a reader
/// skips to go on: the backslash and its letter, or a lone `\uXXXX`.
constexpr json_escape read_json_escape(std::string_view s, std::size_t i) noexcept {
  if (s.size() - i < 2) return {0, s.size() - i, escape_fault::truncated};
  if (const int simple = simple_escape_value(s[i + 1]); simple >= 0) return {static_cast<char32_t>(simple), 2};
  if (s[i + 1] != 'u') return {0, 2, escape_fault::invalid};
  const long unit = hex4_at(s, i + 2);
  if (unit < 0) return {0, 2, s.size() - i < 6 ? escape_fault::truncated : escape_fault::invalid};
  if (is_low_surrogate(unit)) return {0, 6, escape_fault::lone_surrogate};
  if (!is_high_surrogate(unit)) return {static_cast<char32_t>(unit), 6};
  const long low = s.size() - i >= 12 && s[i + 6] == '\\' && s[i + 7] == 'u' ? hex4_at(s, i + 8) : -1;
  if (!is_low_surrogate(low)) return {0, 6, escape_fault::lone_surrogate};
  return {surrogate_pair(unit, low), 12};
}

/// Decodes the string content from `s[i]` into `out` (appending) up to the
/// end of `s`, or with `to_quote` up to the first quote no backslash
/// escapes. Returns where it stopped (that quote, or the size), or npos at
/// the first faulty escape.
inline std::size_t decode_json_string(std::string_view s, std::size_t i, std::string& out, bool to_quote) {
  std::size_t quote = to_quote ? std::min(s.find('"', i), s.size()) : s.size();
  while (i < s.size()) {
    if (quote < i) quote = std::min(s.find('"', i), s.size());  // the last one was escaped
    const std::size_t stop = std::min({s.find('\\', i), s.size(), quote});
    out.append(s, i, stop - i);
    i = stop;
    if (i == s.size() || s[i] == '"') break;
    const json_escape escape = read_json_escape(s, i);
    if (escape.fault != escape_fault::none) return std::string_view::npos;
    append_utf8(out, escape.code_point);
    i += escape.width;
  }
  return i;
}

/// The body of a JSON string (between its quotes) with its escapes decoded
/// into `out`; false at the first faulty escape, `out` then unspecified.
inline bool unescape_json_string(std::string_view body, std::string& out) {
  out.clear();
  return decode_json_string(body, 0, out, false) != std::string_view::npos;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
