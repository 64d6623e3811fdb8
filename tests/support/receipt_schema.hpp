// SPDX-License-Identifier: MIT
// The small receipt schema unit tests judge responses against: a merchant,
// a non-negative total and a date whose format is asserted.
#pragma once

#include <string_view>

#include <llmdlq/schema.hpp>

namespace llmdlq::test {

inline constexpr std::string_view small_receipt_schema_text = R"({
  "type": "object",
  "required": ["merchant", "total", "date"],
  "properties": {
    "merchant": {"type": "string", "minLength": 1},
    "total": {"type": "number", "minimum": 0},
    "date": {"type": "string", "format": "date"}
  }
})";

/// small_receipt_schema_text, compiled once with format assertion on.
inline const llmdlq::schema& small_receipt_schema() {
  static const llmdlq::schema compiled = [] {
    llmdlq::compile_options options;
    options.format_assertion = true;
    return *llmdlq::schema::compile(small_receipt_schema_text, options);
  }();
  return compiled;
}

}  // namespace llmdlq::test
