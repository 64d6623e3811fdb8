// SPDX-License-Identifier: MIT
// `llmdlq provider-schema`: a JSON Schema as a provider's structured-output
// mode takes it, and what the provider will no longer enforce.
#include <iostream>
#include <string>

#include <boost/json.hpp>
#include <llmdlq/provider_schema.hpp>
#include <llmdlq/schema.hpp>
#include <llmdlq/tool_registry.hpp>

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
    {"--schema", option_kind::value, "FILE", "the JSON Schema; required without --tools"},
    {"--tools", option_kind::value, "FILE",
     "tool definitions instead (any provider's `tools`, or an object of name to\nschema): printed as the provider takes them"},
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
             "  added). The schema in FILE is still what llmdlq judges answers by.\n"
             "  With --tools, prints {\"provider\": ..., \"tools\": [...], \"lowered\": [{\"tool\", \"strict\",\n"
             "  \"reason\", \"changes\", \"forced_nulls\"}]}: \"tools\" is what to send as the request's tools.\n"
             "  Exit 0, 1 when --refuse-non-strict refuses, 2 for usage errors or an unusable schema.\n",
    .stores = "",
    .closing = "",
};

boost::json::object lowering_report(const lowered_schema& lowered) {
  boost::json::array changes;
  for (const auto& n : lowered.notes) {
    changes.push_back({{"pointer", n.pointer}, {"keyword", n.keyword}, {"change", to_string(n.what)}});
  }
  boost::json::array forced;
  if (lowered.nulls) {
    for (const auto& p : lowered.nulls->properties) forced.emplace_back(p);
  }
  return {{"strict", lowered.strict},
          {"reason", lowered.reason},
          {"changes", std::move(changes)},
          {"forced_nulls", std::move(forced)}};
}

void refused(provider_profile profile, const lowering_error& error) {
  complain("provider-schema", std::string(to_string(profile)) + " cannot take the schema in strict mode: " +
                                  (error.pointer.empty() ? "" : error.pointer + ": ") + error.message);
}

// `llmdlq provider-schema --tools FILE`: the exit code.
int lower_tool_definitions(std::string_view path, provider_profile profile, const compile_options& compile,
                           const lowering_options& lowering) {
  const auto text = read_file_bounded(std::string(path), file_kind::schema);
  if (!text) {
    complain("provider-schema", text.error().message);
    return exit_usage;
  }
  const auto tools = tool_registry::from_json(*text, compile);
  if (!tools) {
    complain("provider-schema", "invalid tool definitions " + std::string(path) +
                                    (tools.error().pointer.empty() ? "" : " at " + tools.error().pointer) + ": " +
                                    tools.error().message);
    return exit_usage;
  }
  const auto lowered = lower_tools(*tools, profile, lowering);
  if (!lowered && lowered.error().pointer.ends_with("/name")) {  // no lowering makes a name the provider takes
    complain("provider-schema", "invalid tool definitions " + std::string(path) + " at " + lowered.error().pointer +
                                    ": " + lowered.error().message);
    return exit_usage;
  }
  if (!lowered) {
    refused(profile, lowered.error());
    return exit_invalid;
  }
  boost::json::array reports;
  for (std::size_t i = 0; i < lowered->parameters.size(); ++i) {
    boost::json::object report{{"tool", tools->tools()[i].name}};
    for (auto& [key, value] : lowering_report(lowered->parameters[i])) report.emplace(key, std::move(value));
    reports.emplace_back(std::move(report));
  }
  boost::json::object out{
      {"provider", to_string(profile)}, {"tools", lowered->definitions}, {"lowered", std::move(reports)}};
  std::cout << json_text(out) << '\n';
  return exit_ok;
}

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
  lowering_options lowering;
  lowering.refuse_non_strict = parsed->has("--refuse-non-strict");
  if (const auto tools = parsed->value("--tools")) {
    if (parsed->has("--schema")) return usage_error(syntax, "--tools and --schema cannot go together");
    return lower_tool_definitions(*tools, *profile, compile, lowering);
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
  const auto lowered = lower_schema(*text, *profile, lowering);
  if (!lowered) {
    refused(*profile, lowered.error());
    return exit_invalid;
  }
  const boost::json::object report = lowering_report(*lowered);
  boost::json::object out{{"provider", to_string(*profile)}, {"strict", report.at("strict")},
                          {"reason", report.at("reason")},   {"schema", lowered->schema},
                          {"changes", report.at("changes")}, {"forced_nulls", report.at("forced_nulls")}};
  std::cout << json_text(out) << '\n';
  return exit_ok;
}

}  // namespace llmdlq::cli
