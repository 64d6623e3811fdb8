// SPDX-License-Identifier: MIT
// The shape of the placeholders the redactor writes, `<iban>` and
// `<iban:k3jq7vd2m4w5x6ya>`, for the readers that must know one again when
// they meet it in redacted text: the detectors and the pointer walk.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// The longest kind name a placeholder is known by.
inline constexpr std::size_t placeholder_max_kind = 64;

/// Whether `c` may stand in a placeholder's kind.
constexpr bool placeholder_kind_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/// `label` as a placeholder's kind, so that a second pass knows the
/// placeholder: other characters become `_`, it is cut to
/// placeholder_max_kind, and none is `pii`.
inline std::string placeholder_kind(std::string_view label) {
  std::string kind(label.empty() ? std::string_view("pii") : label.substr(0, placeholder_max_kind));
  for (char& c : kind) {
    if (!placeholder_kind_char(c)) c = '_';
  }
  return kind;
}

/// Where the placeholder starting at `p` (a `<`) in `s` ends: `<kind>`, or
/// `<kind:` and 16 base32 characters and `>`; 0 when none starts there.
inline std::size_t placeholder_end(std::string_view s, std::size_t p) noexcept {
  if (p >= s.size() || s[p] != '<') return 0;
  std::size_t j = p + 1;
  const std::size_t limit = s.size() - p - 1 < placeholder_max_kind ? s.size() : p + 1 + placeholder_max_kind;
  while (j < limit && placeholder_kind_char(s[j])) ++j;
  if (j == p + 1 || j >= s.size()) return 0;
  if (s[j] == '>') return j + 1;
  if (s[j] != ':' || j + 18 > s.size() || s[j + 17] != '>') return 0;
  for (std::size_t k = j + 1; k < j + 17; ++k) {
    if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= '2' && s[k] <= '7'))) return 0;
  }
  return j + 18;
}

/// Whether `s` is one placeholder, whole.
inline bool is_placeholder(std::string_view s) noexcept { return !s.empty() && placeholder_end(s, 0) == s.size(); }

}  // namespace detail
LLMDLQ_END_NAMESPACE
