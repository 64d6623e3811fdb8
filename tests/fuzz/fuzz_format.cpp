// SPDX-License-Identifier: MIT
// Fuzzes every format scanner on arbitrary UTF-8: no crash, no overrun.
#include <cstdint>
#include <string_view>

#include <simdjson.h>
#include <llmdlq/format.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!simdjson::validate_utf8(text.data(), text.size())) return 0;
  for (int kind = 0; kind <= static_cast<int>(llmdlq::format_kind::luhn); ++kind) {
    (void)llmdlq::matches_format(static_cast<llmdlq::format_kind>(kind), text);
  }
  return 0;
}
