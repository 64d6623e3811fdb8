// SPDX-License-Identifier: MIT
// Differential fuzzing of validation. The input is a schema, a newline, and an
// instance; whenever both are usable, the seven ways of validating (while
// parsing; simdjson's tape, simdjson elements or Boost.JSON, yes/no or
// collecting) must agree.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>

#include <llmdlq/schema.hpp>

namespace {

bool has_duplicate_keys(simdjson::dom::element e) {
  if (e.is_array()) {
    const simdjson::dom::array items = e.get_array().value_unsafe();
    for (const auto item : items) {
      if (has_duplicate_keys(item)) return true;
    }
  } else if (e.is_object()) {
    std::set<std::string_view> keys;
    const simdjson::dom::object members = e.get_object().value_unsafe();
    for (const auto member : members) {
      if (!keys.insert(member.key).second || has_duplicate_keys(member.value)) return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto newline = input.find('\n');
  if (newline == std::string_view::npos) return 0;
  llmdlq::compile_options options;
  options.format_assertion = (size & 1) != 0;
  options.max_nesting = 64;
  const auto schema = llmdlq::schema::compile(input.substr(0, newline), options);
  if (!schema) {
    if (schema.error().message.empty()) std::abort();
    return 0;
  }
  llmdlq::parse_options limits;
  limits.max_depth = 64;
  static llmdlq::json_parser parser(limits);
  const std::string_view instance = input.substr(newline + 1);
  const auto doc = parser.parse(instance);
  // Validation while parsing gives the verdict of parsing, then validating.
  const bool while_parsing = schema->is_valid_text(instance, {}, limits);
  if (!doc) {
    if (while_parsing) std::abort();
    return 0;
  }
  if (while_parsing != schema->is_valid(*doc)) std::abort();
  const auto value = llmdlq::parse_value(instance, limits);
  if (!value) return 0;
  // A Boost.JSON object keeps one value per key; with duplicate keys the two
  // representations hold different members, and may rightly disagree.
  if (has_duplicate_keys(doc->root())) return 0;
  const bool fast = schema->is_valid(*doc);
  if (schema->is_valid(doc->root()) != fast || schema->is_valid(*value) != fast) std::abort();
  const auto errors = schema->validate(*doc, {8});
  if (errors.empty() != fast) std::abort();
  if (errors != schema->validate(doc->root(), {8}) || errors != schema->validate(*value, {8})) {
    std::abort();
  }
  return 0;
}
