// SPDX-License-Identifier: MIT
#include "schema_flags.hpp"

#include <filesystem>
#include <string>
#include <system_error>

#include "cli.hpp"

namespace llmdlq::cli {

flag_outcome take_schema_flag(std::string_view command, std::string_view arg, arguments& args,
                              compile_options& options) {
  if (arg == "--format-assertion") {
    options.format_assertion = true;
    return flag_outcome::taken;
  }
  if (arg == "--strict-patterns") {
    options.pattern_syntax = regex_syntax::strict_unicode;
    return flag_outcome::taken;
  }
  if (arg != "--draft" && arg != "--catalog") return flag_outcome::not_ours;
  const auto value = args.value_of(arg);
  if (!value) return flag_outcome::refused;
  if (arg == "--draft") {
    const auto named = dialect_named(*value);
    if (!named) {
      complain(command, "--draft wants draft4, draft6, draft7, draft2019-09 or draft2020-12, not " +
                            std::string(*value));
      return flag_outcome::refused;
    }
    options.default_dialect = *named;
    return flag_outcome::taken;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(std::string(*value), ec)) {
    complain(command, "--catalog wants a directory of schemas: " + std::string(*value) + " is none");
    return flag_outcome::refused;
  }
  options.catalog_directory = std::string(*value);
  return flag_outcome::taken;
}

}  // namespace llmdlq::cli
