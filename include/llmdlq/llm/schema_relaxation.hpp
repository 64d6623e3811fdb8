// SPDX-License-Identifier: MIT
// Schema relaxation, opt-in per pipeline: a document that fails only where
// the pipeline declared it may bend is accepted, marked `relaxed`, with the
// paths it lost. Nothing is relaxed that was not declared.
// Part of the llmdlq::llm library.
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/schema.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// What a pipeline allows to bend. Each is off until declared.
struct schema_relaxation {
  /// An optional property whose value fails is removed (never a required
  /// one, never an array element: indices would shift).
  bool drop_failing_optional_properties = false;
  /// Properties the schema does not list (additionalProperties,
  /// unevaluatedProperties) are kept and their errors waived.
  bool allow_additional_properties = false;
  /// Values that fail a `format` assertion are kept and their errors waived.
  bool allow_format_failures = false;

  [[nodiscard]] bool any() const noexcept {
    return drop_failing_optional_properties || allow_additional_properties || allow_format_failures;
  }
};

/// A document accepted under relaxations.
struct relaxed_document {
  std::string json;                        ///< the document as accepted
  std::vector<std::string> dropped_paths;  ///< JSON Pointers of removed properties
  std::vector<std::string> waived_paths;   ///< JSON Pointers of failures kept as they are
};

/// Why a document cannot be accepted under the declared relaxations.
struct relaxation_error {
  std::string message;
  std::vector<validation_error> remaining;  ///< the errors no relaxation covers
};

/// `document` relaxed until `schema` accepts it, if the declared
/// relaxations suffice. Each removal is checked: a property whose removal
/// makes its object miss a required one is not optional, and ends the attempt.
/// `rules` are the validation options the pipeline judges with (its `now`
/// for content rules): a failure is waived only by a declared relaxation,
/// never because this check is laxer than the pipeline's.
[[nodiscard]] expected<relaxed_document, relaxation_error> relax(const boost::json::value& document,
                                                                 const schema& schema,
                                                                 const schema_relaxation& relaxation,
                                                                 const validate_options& rules = {});

LLMDLQ_END_NAMESPACE
