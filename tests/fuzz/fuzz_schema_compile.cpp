// SPDX-License-Identifier: MIT
// Fuzzing of schema compilation alone, in every draft: any input compiles or
// is a schema_error with a message, within the run's time limit (ctest gives
// libFuzzer -timeout), and a compiled schema has at most one node per
// subschema written, however its references cross. The first byte picks the
// default draft and the pattern syntax; the rest is the schema.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <llmdlq/detail/schema/schema_access.hpp>
#include <llmdlq/json_parser.hpp>
#include <llmdlq/schema.hpp>

namespace {

// Every object and boolean of the document: an upper bound on its subschemas.
std::size_t schema_values(const boost::json::value& v) {
  std::size_t count = v.is_bool() || v.is_object() ? 1 : 0;
  if (const auto* object = v.if_object()) {
    for (const auto& member : *object) count += schema_values(member.value());
  } else if (const auto* array = v.if_array()) {
    for (const auto& element : *array) count += schema_values(element);
  }
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t knobs = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  llmdlq::compile_options options;
  options.default_dialect = static_cast<llmdlq::dialect>(knobs % 5);
  options.pattern_syntax = (knobs & 8) ? llmdlq::regex_syntax::strict_unicode : llmdlq::regex_syntax::web_compatible;
  options.allow_unknown_dialect = (knobs & 16) != 0;
  options.format_assertion = (knobs & 32) != 0;
  options.max_nesting = 64;
  const auto schema = llmdlq::schema::compile(text, options);
  if (!schema) {
    if (schema.error().message.empty()) std::abort();
    return 0;
  }
  // The built-in meta-schemas a `$schema` may load are subschemas too.
  const auto& program = llmdlq::detail::schema_access::of(*schema);
  llmdlq::parse_options limits;
  limits.max_depth = 2 * options.max_nesting + 2;
  const auto json = llmdlq::parse_value(text, limits);
  if (!json) std::abort();  // it compiled, so it parsed
  constexpr std::size_t meta_schema_nodes = 2000;
  if (program.nodes.size() > schema_values(*json) + meta_schema_nodes) std::abort();
  // The schema judges itself, both ways, and they agree.
  const bool valid = schema->is_valid(*json);
  if (schema->validate(*json, {4}).empty() != valid) std::abort();
  return 0;
}
