// SPDX-License-Identifier: MIT
// `llmdlq repair`: repairs one LLM response and prints the JSON, or why not.
#include <unistd.h>

#include <iostream>
#include <string>

#include <boost/json.hpp>
#include <llmdlq/json_parser.hpp>
#include <llmdlq/repair.hpp>

#include "cli.hpp"
#include "line_writer.hpp"
#include "commands.hpp"
#include "options.hpp"

namespace llmdlq::cli {
namespace {

constexpr option options[] = {
    {"--allow", option_kind::value, "TIERS",
     "comma-separated tiers a repair may use: lossless, syntactic,\nlossy (default lossless,syntactic)"},
    {"--max-bytes", option_kind::value, "N",
     "refuse input larger than N bytes (suffix K, M or G: KiB, MiB,\nGiB; default 16M), before reading more of it than that"},
    {"--json", option_kind::flag, "", "print {\"ok\", \"json\", \"actions\", \"truncated\"} (and \"error\")"},
};
constexpr operand operands[] = {{"FILE", ""}};

const command_syntax syntax{
    .command = "repair",
    .operands = operands,
    .groups = {group("", options)},
    .about = "  Repairs the JSON in FILE (or standard input) and prints it; exit 0 when\n"
             "  repaired (or already valid), 1 with the error and its position on stderr,\n"
             "  2 for usage errors and input that cannot be read or is over the limit.\n",
    .stores = "",
    .closing = "",
};

std::optional<repair_tiers> parse_tiers(std::string_view list) {
  repair_tiers tiers;
  tiers.bits = 0;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    if (name == "lossless") {
      tiers.bits |= repair_tiers{repair_tier::lossless}.bits;
    } else if (name == "syntactic") {
      tiers.bits |= repair_tiers{repair_tier::syntactic}.bits;
    } else if (name == "lossy") {
      tiers.bits |= repair_tiers{repair_tier::lossy}.bits;
    } else {
      return std::nullopt;
    }
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return tiers;
}

}  // namespace

int repair_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const bool as_json = parsed->has("--json");
  repair_options options;
  if (const auto value = parsed->value("--allow")) {
    const auto tiers = parse_tiers(*value);
    if (!tiers) return usage_error(syntax, "--allow takes lossless, syntactic and lossy, separated by commas");
    options.allowed = *tiers;
  }
  if (const auto value = parsed->value("--max-bytes")) {
    const auto limit = parse_byte_count(*value);
    if (!limit) return usage_error(syntax, "--max-bytes wants a positive number of bytes, not '" + std::string(*value) + "'");
    options.max_bytes = *limit;
  }
  std::optional<std::string> file;
  if (!parsed->operand(0).empty()) file = std::string(parsed->operand(0));

  const bool from_stdin = !file || *file == "-";
  // The document kind's limit is repair's default; --max-bytes chooses another.
  static_assert(detail::limit_of(file_kind::document) == repair_options{}.max_bytes);
  auto content = from_stdin ? read_bounded(STDIN_FILENO, file_kind::document, "-", options.max_bytes)
                            : read_file_bounded(*file, file_kind::document, options.max_bytes);
  if (!content) {
    complain("repair", content.error().message);
    return exit_usage;
  }
  const std::string text = std::move(*content);

  const auto result = repair(text, options);
  if (as_json) {
    boost::json::object out;
    out.emplace("ok", result.has_value());
    boost::json::array actions;
    if (result) {
      out.emplace("json", result->json);
      for (const auto& a : result->actions) actions.push_back(to_json(a));
    } else {
      const auto at = position_of(text, result.error().offset);
      out.emplace("error", boost::json::object{{"code", to_string(result.error().code)},
                                               {"offset", result.error().offset},
                                               {"line", at.line},
                                               {"column", at.column},
                                               {"message", result.error().message}});
    }
    out.emplace("actions", std::move(actions));
    out.emplace("truncated", result ? result->truncated : result.error().truncated);
    std::cout << json_text(out) << '\n';
  } else if (result) {
    std::cout << result->json << '\n';
  } else {
    const auto at = position_of(text, result.error().offset);
    complain("repair", "offset " + std::to_string(result.error().offset) + " (line " + std::to_string(at.line) +
                           ", column " + std::to_string(at.column) + "): " + result.error().message);
  }
  return result ? exit_ok : exit_invalid;
}

}  // namespace llmdlq::cli
