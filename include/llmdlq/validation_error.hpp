// SPDX-License-Identifier: MIT
// One reason a document does not validate: plain data, light to include
// (envelopes and sinks carry it without the schema engine).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// A failure that is the schema's fault, not the document's: evaluation
/// reached a part of the schema that compiled with a warning (see
/// compile_options::refuse_broken_references) and cannot be evaluated.
enum class schema_defect : std::uint8_t {
  none,
  unresolved_reference,  ///< a `$ref`, `$dynamicRef` or `$recursiveRef` whose target does not exist
  reference_loop,        ///< subschemas that apply each other in place, never descending into the value
};

/// One reason a document does not validate.
struct validation_error {
  std::string instance_path;  ///< JSON Pointer to the failing value (`/items/3/price`)
  std::string schema_path;    ///< keyword location: how evaluation reached the keyword, `$ref`s included
  std::string keyword;        ///< the failing keyword (`minimum`, `required`, ...)
  std::string message;        ///< what was wrong, in English
  /// Set when the failure is the schema's: `keyword` is then the reference
  /// keyword, and `message` says where the schema is broken.
  schema_defect defect = schema_defect::none;

  friend bool operator==(const validation_error&, const validation_error&) = default;
};

/// "unresolved_reference", "reference_loop"; "none".
[[nodiscard]] constexpr std::string_view to_string(schema_defect defect) noexcept {
  switch (defect) {
    case schema_defect::unresolved_reference: return "unresolved_reference";
    case schema_defect::reference_loop: return "reference_loop";
    case schema_defect::none: break;
  }
  return "none";
}

/// The defect `name` names ("unresolved_reference", "reference_loop"), if any.
[[nodiscard]] constexpr std::optional<schema_defect> schema_defect_from(std::string_view name) noexcept {
  for (const auto d : {schema_defect::unresolved_reference, schema_defect::reference_loop}) {
    if (to_string(d) == name) return d;
  }
  return std::nullopt;
}

/// The error as `{"instance_path", "schema_path", "keyword", "message"}`,
/// and `"defect"` when it has one.
[[nodiscard]] LLMDLQ_INLINE boost::json::object to_json(const validation_error& e);

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/validation_error.ipp"
#endif
