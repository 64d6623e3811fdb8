// SPDX-License-Identifier: MIT
// `llmdlq provider-schema`: a JSON Schema as a provider's structured-output
// mode takes it, and what the provider will no longer enforce.
#include <iostream>
#include <string>

#include <boost/json.hpp>
#include <llmdlq/provider_schema.hpp>
#include <llmdlq/schema.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "line_writer.hpp"
#include "options.hpp"
#include "schema_flags.hpp"

namespace llmdlq::cli {
namespace {

constexpr option options_table[] = {
    {"--provider", option_kind::value, "NAME",
     "openai, gemini, anthropic, ollama, or full (any JSON Schema:\nvLLM, llama.cpp's server); required"},
    {"--schema", option_kind::value, "FILE", "the JSON Schema; required"},
    {"--refuse-non-strict", option_kind::flag, "",
     "exit 1 when the provider cannot take the schema in strict mode\n(else it is printed for non-strict use, with the reason)"},
};

const command_syntax syntax{
    .command = "provider-schema",
    .operands = {},
    .groups = {group("", options_table), group("schema", schema_options)},
    .about = "  Prints the schema lowered for the provider and what lowering changed:\n"
             "    {\"provider\": ..., \"strict\": true, \"reason\": ..., \"schema\": {...},\n"
             "     \"changes\": [{\"pointer\", \"keyword\", \"change\"}], \"forced_nulls\": [...]}\n"
             "  \"pointer\" is a JSON Pointer into FILE; a change is dropped, described (moved\n"
             "  into description), rewritten, nullable (an optional property made required\n"
             "  and nullable), closed (additionalProperties: false added) or required (a type\n"
             "  added). The schema in FILE is still what llmdlq judges answers by. Exit 0,\n"
             "  1 when --refuse-non-strict refuses, 2 for usage errors or an unusable schema.\n",
    .stores = "",
    .closing = "",
};

}  // namespace

int provider_schema_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  compile_options compile;
  if (auto error = read_schema_options(*parsed, compile)) return usage_error(syntax, *error);
  const auto provider_name = parsed->value("--provider");
  if (!provider_name) return usage_error(syntax, "--provider is required");
  const auto profile = provider_profile_from(*provider_name);
  if (!profile) {
    return usage_error(syntax, "--provider takes openai, gemini, anthropic, ollama or full, not '" +
                                   std::string(*provider_name) + "'");
  }
  const auto schema_path = parsed->value("--schema");
  if (!schema_path) return usage_error(syntax, "--schema is required");
  const auto text = read_file_bounded(std::string(*schema_path), file_kind::schema);
  if (!text) {
    complain("provider-schema", text.error().message);
    return exit_usage;
  }
  // Only a schema llmdlq can judge by is worth sending.
  if (const auto compiled = schema::compile(*text, compile); !compiled) {
    complain("provider-schema", "invalid schema " + std::string(*schema_path) + ": " + compiled.error().message);
    return exit_usage;
  }
  lowering_options lowering;
  lowering.refuse_non_strict = parsed->has("--refuse-non-strict");
  const auto lowered = lower_schema(*text, *profile, lowering);
  if (!lowered) {
    complain("provider-schema", std::string(to_string(*profile)) + " cannot take the schema in strict mode: " +
                                    (lowered.error().pointer.empty() ? "" : lowered.error().pointer + ": ") +
                                    lowered.error().message);
    return exit_invalid;
  }
  boost::json::array changes;
  for (const auto& n : lowered->notes) {
    changes.push_back({{"pointer", n.pointer}, {"keyword", n.keyword}, {"change", to_string(n.what)}});
  }
  boost::json::array forced;
  if (lowered->nulls) {
    for (const auto& p : lowered->nulls->properties) forced.emplace_back(p);
  }
  boost::json::object out{{"provider", to_string(*profile)}, {"strict", lowered->strict},
                          {"reason", lowered->reason},       {"schema", lowered->schema},
                          {"changes", std::move(changes)},   {"forced_nulls", std::move(forced)}};
  std::cout << json_text(out) << '\n';
  return exit_ok;
}

}  // namespace llmdlq::cli
