// SPDX-License-Identifier: MIT
// Where a text stops being UTF-8: simdjson's validator on the whole text,
// then, only when it fails, a walk to the first bad byte for the record.
#pragma once

#include <cstddef>
#include <string_view>

#include <simdjson.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/text_passes.hpp"
#include "llmdlq/detail/json/utf8.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Offset of the first byte that does not start a valid UTF-8 sequence, or
/// the text's size when it is all valid.
inline std::size_t first_invalid_utf8(std::string_view text) noexcept {
  count_text_pass(text_pass::utf8_check);
  if (simdjson::validate_utf8(text.data(), text.size())) return text.size();
  std::size_t at = 0;
  while (at < text.size()) {
    const auto lead = static_cast<unsigned char>(text[at]);
    if (lead >= 0x80 && !decode_utf8(text.substr(at))) return at;
    at += utf8_sequence_length(lead);
  }
  return text.size();
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
