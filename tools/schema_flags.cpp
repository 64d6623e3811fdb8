// SPDX-License-Identifier: MIT
#include "schema_flags.hpp"

#include <filesystem>
#include <string>
#include <system_error>

#include "cli.hpp"

namespace llmdlq::cli {

std::optional<std::string> read_schema_options(const parsed_arguments& parsed, compile_options& options) {
  if (parsed.has("--format-assertion")) options.format_assertion = true;
  if (parsed.has("--strict-patterns")) options.pattern_syntax = regex_syntax::strict_unicode;
  if (parsed.has("--strict-references")) options.refuse_broken_references = true;
  if (const auto value = parsed.value("--draft")) {
    const auto named = dialect_named(*value);
    if (!named) {
      return "--draft wants draft4, draft6, draft7, draft2019-09 or draft2020-12, not " + std::string(*value);
    }
    options.default_dialect = *named;
  }
  if (const auto value = parsed.value("--catalog")) {
    std::error_code ec;
    if (!std::filesystem::is_directory(std::string(*value), ec)) {
      return "--catalog wants a directory of schemas: " + std::string(*value) + " is none";
    }
    options.catalog_directory = std::string(*value);
  }
  return std::nullopt;
}

void print_schema_warnings(std::string_view command, const schema& compiled) {
  for (const auto& warning : compiled.warnings()) complain(command, "warning: " + warning);
}

}  // namespace llmdlq::cli
