// SPDX-License-Identifier: MIT
// Schema-guided coercion: small, reported changes of a value's type or
// spelling to what the schema asks for. Opt-in (process_options::coerce).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/repair.hpp"
#include "llmdlq/schema.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct coerce_options {
  /// Content rules (`x-dlq-rule`) are judged at this time, as in validation.
  std::optional<timestamp> now;
  /// Most candidate edits tried; each costs one validation of the document.
  std::size_t max_attempts = 64;
};

/// The coerced JSON text and the coercions, each with tier `coercion`, the
/// JSON Pointer of the value (`path`) and its span in the text coerced.
struct coerce_result {
  std::string json;
  std::vector<repair_action> actions;
};

struct coerce_error {
  std::string path;  ///< JSON Pointer of the value
  std::string message;
};

/// Edits `json` (strict JSON) where the schema reports a type or enum
/// mismatch that one of these fixes, each kept only when the error goes
/// away without a new one elsewhere:
/// - a string holding exactly a number or boolean literal where the schema
///   wants that type (`"42"` → `42`; `"4.5"` never becomes an integer);
/// - a lone value where an array is wanted (`"x"` → `["x"]`);
/// - an enum string differing only by case, surrounding whitespace or
///   punctuation (`"Paid."` → `"paid"`), when exactly one enum value matches;
///   two is an error;
/// - `null` for an optional property the schema does not let be null: the
///   property is removed.
/// The rest of the text is kept as written. The result need not validate:
/// the caller validates it.
[[nodiscard]] LLMDLQ_INLINE expected<coerce_result, coerce_error> coerce(std::string_view json, const schema& schema,
                                                                        const coerce_options& options = {});

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/coerce.ipp"
#endif
