// SPDX-License-Identifier: MIT
// The shape of the placeholders the redactor writes, `<iban>` and
// `<iban:k3jq7vd2m4w5x6ya>`, for the readers that must know one again when
// they meet it in redacted text: the detectors and the pointer walk.
#pragma once

#include <cstddef>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// The longest kind name a placeholder is known by.
inline constexpr std::size_t placeholder_max_kind = 64;

/// Where the placeholder starting at `p` (a `<`) in `s` ends: `<kind>`, or
/// `<kind:` and 16 base32 characters and `>`; 0 when none starts there.
inline std::size_t placeholder_end(std::string_view s, std::size_t p) noexcept {
  auto kind_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  };
  if (p >= s.size() || s[p] != '<') return 0;
  std::size_t j = p + 1;
  const std::size_t limit = s.size() - p - 1 < placeholder_max_kind ? s.size() : p + 1 + placeholder_max_kind;
  while (j < limit && kind_char(s[j])) ++j;
  if (j == p + 1 || j >= s.size()) return 0;
  if (s[j] == '>') return j + 1;
  if (s[j] != ':' || j + 18 > s.size() || s[j + 17] != '>') return 0;
  for (std::size_t k = j + 1; k < j + 17; ++k) {
    if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= '2' && s[k] <= '7'))) return 0;
  }
  return j + 18;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
