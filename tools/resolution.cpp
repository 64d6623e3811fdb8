// SPDX-License-Identifier: MIT
#include "resolution.hpp"

#include <fmt/format.h>
#include <llmdlq/json_parser.hpp>

namespace llmdlq::cli {

expected<schema, std::string> compile_resolution_schema(std::string_view schema_json) {
  compile_options options;
  options.format_assertion = true;
  auto compiled = schema::compile(schema_json, options);
  if (!compiled) return unexpected(compiled.error().message);
  return std::move(*compiled);
}

std::vector<validation_error> check_resolution(const schema& schema, std::string_view corrected_json) {
  json_parser parser;
  auto document = parser.parse(corrected_json);
  if (!document) {
    const auto& e = document.error();
    return {validation_error{"", "", "syntax", fmt::format("line {}, column {}: {}", e.line, e.column, e.message)}};
  }
  validate_options options;
  options.max_errors = 64;
  return schema.validate(*document, options);
}

}  // namespace llmdlq::cli
