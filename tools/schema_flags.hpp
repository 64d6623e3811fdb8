// SPDX-License-Identifier: MIT
// The options that say how a command compiles its schema, read the same way
// by every command that takes --schema.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <llmdlq/schema.hpp>

#include "options.hpp"

namespace llmdlq::cli {

inline constexpr option schema_options[] = {
    {"--draft", option_kind::value, "NAME",
     "the draft of a schema without $schema: draft4, draft6, draft7,\ndraft2019-09 or draft2020-12 (the default)"},
    {"--catalog", option_kind::value, "DIR", "schemas the schema refers to, found in DIR by their $id or file name"},
    {"--format-assertion", option_kind::flag, "", "`format` fails a value that does not match it (else an annotation)"},
    {"--strict-patterns", option_kind::flag, "",
     "read patterns in ECMA-262's strict Unicode grammar: `\\-`, `[\\w-.]`\n"
     "and a lone `{` are errors (accepted by default, as JavaScript does)"},
    {"--strict-references", option_kind::flag, "",
     "a $ref to nothing and subschemas that apply each other in a loop are\n"
     "schema errors (by default the schema compiles with a warning on stderr,\n"
     "and only a document that reaches one fails)"},
};

/// Reads the options above from `parsed` into `options`; why not, as a usage error's message.
[[nodiscard]] std::optional<std::string> read_schema_options(const parsed_arguments& parsed, compile_options& options);

/// Prints the schema's warnings to stderr, one "llmdlq <command>: warning: ..." line each.
void print_schema_warnings(std::string_view command, const schema& compiled);

}  // namespace llmdlq::cli
