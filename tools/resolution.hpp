// SPDX-License-Identifier: MIT
// Whether an operator's corrected JSON may resolve a dead letter: strict
// JSON that the schema accepts, `format` asserted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <llmdlq/expected.hpp>
#include <llmdlq/schema.hpp>
#include <llmdlq/validation_error.hpp>

namespace llmdlq::cli {

/// `schema_json` compiled as resolutions are checked: with the format
/// assertion. The error is the compiler's message.
[[nodiscard]] expected<schema, std::string> compile_resolution_schema(std::string_view schema_json);

/// What is wrong with `corrected_json` as a resolution under `schema`;
/// empty when it is acceptable. A text that is not strict JSON gives one
/// error with keyword `syntax` (its message names the line and column).
[[nodiscard]] std::vector<validation_error> check_resolution(const schema& schema, std::string_view corrected_json);

}  // namespace llmdlq::cli
