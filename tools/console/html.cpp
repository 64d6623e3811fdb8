// SPDX-License-Identifier: MIT
#include "html.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include <fmt/format.h>
#include <llmdlq/detail/json/utf8.hpp>

namespace llmdlq::cli {
namespace {

// Unicode's format characters (general category Cf, Unicode 15.1): bidi
// embeddings, overrides, isolates and marks, zero-width spaces and joiners,
// the byte order mark, the soft hyphen, invisible operators, tag characters.
constexpr std::pair<char32_t, char32_t> format_characters[] = {
    {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},   {0x06DD, 0x06DD},   {0x070F, 0x070F},
    {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x180E, 0x180E},   {0x200B, 0x200F},   {0x202A, 0x202E},
    {0x2060, 0x2064},   {0x2066, 0x206F},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
    {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
    {0xE0020, 0xE007F},
};

// Whether a page must show `cp` as an escape: the browser would draw it as
// nothing, or let it move the text around it. Tab and line breaks (LF, and
// CR, which HTML reads as one) are shown as what they are.
bool shown_escaped(char32_t cp) {
  if (cp < 0x20) return cp != '\t' && cp != '\n' && cp != '\r';
  if (cp >= 0x7F && cp <= 0x9F) return true;
  if (cp == 0x2028 || cp == 0x2029) return true;  // line and paragraph separators
  const auto* range = std::upper_bound(std::begin(format_characters), std::end(format_characters), cp,
                                       [](char32_t c, const auto& r) { return c < r.first; });
  return range != std::begin(format_characters) && cp <= std::prev(range)->second;
}

// `\uXXXX` as JSON writes it (a surrogate pair beyond the BMP), so a raw
// response edited in the resolve form still means the same JSON string.
void append_escape(std::string& out, char32_t cp) {
  if (cp < 0x10000) {
    out += fmt::format("\\u{:04X}", static_cast<unsigned>(cp));
    return;
  }
  const char32_t offset = cp - 0x10000;
  out += fmt::format("\\u{:04X}\\u{:04X}", static_cast<unsigned>(0xD800 + (offset >> 10)),
                     static_cast<unsigned>(0xDC00 + (offset & 0x3FF)));
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string valid(text);
  detail::make_valid_utf8(valid);
  std::string out;
  out.reserve(valid.size() + valid.size() / 8);
  const std::string_view rest(valid);
  for (std::size_t i = 0; i < rest.size();) {
    const auto lead = static_cast<unsigned char>(rest[i]);
    const std::size_t length = detail::utf8_sequence_length(lead);
    if (lead >= 0x80) {
      // Valid by now: make_valid_utf8 replaced every other byte.
      const char32_t cp = detail::decode_utf8(rest.substr(i)).value_or(0xFFFD);
      if (shown_escaped(cp)) {
        append_escape(out, cp);
      } else {
        out.append(rest, i, length);
      }
      i += length;
      continue;
    }
    switch (rest[i]) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (shown_escaped(lead)) {
          append_escape(out, lead);
        } else {
          out += rest[i];
        }
    }
    ++i;
  }
  return out;
}

}  // namespace llmdlq::cli
