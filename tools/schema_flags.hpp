// SPDX-License-Identifier: MIT
// The flags that say how a command compiles its schema, read the same way by
// every command that takes --schema.
#pragma once

#include <string_view>

#include <llmdlq/schema.hpp>

#include "cli.hpp"

namespace llmdlq::cli {

inline constexpr std::string_view schema_flags_usage =
    "  --draft NAME        the draft of a schema without $schema: draft4, draft6, draft7,\n"
    "                      draft2019-09 or draft2020-12 (the default)\n"
    "  --catalog DIR       schemas the schema refers to, found in DIR by their $id or file name\n"
    "  --format-assertion  `format` fails a value that does not match it (else an annotation)\n"
    "  --strict-patterns   read patterns in ECMA-262's strict Unicode grammar: `\\-`, `[\\w-.]`\n"
    "                      and a lone `{` are errors (accepted by default, as JavaScript does)\n";

enum class flag_outcome { not_ours, taken, refused };

/// Reads `arg` into `options` when it is one of the flags above (taking its
/// value from `args`); `refused` after telling stderr why.
flag_outcome take_schema_flag(std::string_view command, std::string_view arg, arguments& args,
                              compile_options& options);

}  // namespace llmdlq::cli
