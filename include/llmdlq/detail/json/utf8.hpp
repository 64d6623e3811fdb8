// SPDX-License-Identifier: MIT
// Small UTF-8 helpers for text simdjson has already validated, or must not trust.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// UTF-16's surrogates, as `\uXXXX` escapes in JSON and in patterns give them.
constexpr bool is_high_surrogate(long unit) noexcept { return unit >= 0xD800 && unit <= 0xDBFF; }
constexpr bool is_low_surrogate(long unit) noexcept { return unit >= 0xDC00 && unit <= 0xDFFF; }

/// The code point a high and a low surrogate encode together.
constexpr char32_t surrogate_pair(long high, long low) noexcept {
  return static_cast<char32_t>(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00));
}

/// Decodes the code point at the start of `text`; nothing when the bytes there
/// are not a complete, shortest-form, non-surrogate UTF-8 sequence.
constexpr std::optional<char32_t> decode_utf8(std::string_view text) noexcept {
  if (text.empty()) return std::nullopt;
  const auto b0 = static_cast<unsigned char>(text[0]);
  if (b0 < 0x80) return b0;
  std::size_t length;
  char32_t cp;
  char32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    length = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    length = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    length = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return std::nullopt;
  }
  if (text.size() < length) return std::nullopt;
  for (std::size_t i = 1; i < length; ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if ((b & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
  return cp;
}

/// Number of bytes of the UTF-8 sequence led by `lead` (1 for a stray byte).
constexpr std::size_t utf8_sequence_length(unsigned char lead) noexcept {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

/// Number of code points in valid UTF-8 `text`: every byte that is not a
/// continuation byte starts one.
inline std::size_t count_code_points(std::string_view text) noexcept {
  std::size_t count = 0;
  for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

/// Replaces each byte that does not start a valid UTF-8 sequence with U+FFFD,
/// so that the text can go into JSON. Returns whether anything was replaced.
template <class String>
bool make_valid_utf8(String& text) {
  std::size_t i = 0;
  while (i < text.size() && (static_cast<unsigned char>(text[i]) < 0x80 ||
                             decode_utf8(std::string_view(text).substr(i)))) {
    i += utf8_sequence_length(static_cast<unsigned char>(text[i]));
  }
  if (i >= text.size()) return false;
  String clean(text.substr(0, i));
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80 || decode_utf8(std::string_view(text).substr(i))) {
      const std::size_t n = utf8_sequence_length(lead);
      clean.append(text, i, n);
      i += n;
    } else {
      clean.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  text = std::move(clean);
  return true;
}

/// Appends the UTF-8 encoding of `cp` (which must be a scalar value) to `out`.
template <class String>
void append_utf8(String& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
