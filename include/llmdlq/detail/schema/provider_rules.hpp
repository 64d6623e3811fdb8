// SPDX-License-Identifier: MIT
// What each provider's structured-output mode takes, as its documentation
// states it: the one table both lower_schema() (to write a schema the
// provider takes) and check_provider_schema() (to refuse as it would) read.
// Not part of the API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/provider_schema.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::provider {

struct provider_rules {
  std::span<const std::string_view> keywords;  ///< those the provider takes (empty: all)
  std::span<const std::string_view> formats;   ///< `format` values it takes (empty: all)
  bool every_property_required = false;        ///< an optional property is written required and nullable
  bool closed_objects = false;                 ///< every object needs `additionalProperties: false`
  bool object_root = false;                    ///< the root is an object, not an `anyOf`
  bool typed = false;                          ///< every schema says what it is: type, enum, const, anyOf or $ref
  bool recursion = true;                       ///< `$ref` cycles allowed
  bool one_of_as_any_of = false;               ///< `oneOf` is taken as `anyOf` (the provider has no oneOf)
  bool describe_dropped = false;               ///< dropped bounds go into `description`: the provider's advice
  std::size_t max_min_items = static_cast<std::size_t>(-1);  ///< largest `minItems` taken
  std::size_t max_nesting = 0;                               ///< object levels (0: no limit)
  std::size_t max_properties = 0;                            ///< properties in all (0: no limit)
  std::size_t max_enum_values = 0;                           ///< enum values in all (0: no limit)
  std::size_t max_string_length = 0;  ///< characters of property names, enum and const values in all
  std::size_t max_optional = 0;       ///< properties not required, in all (0: no limit)
  std::size_t max_unions = 0;         ///< schemas with anyOf or a list of types, in all (0: no limit)
  std::size_t large_enum = 0;         ///< a string enum with more values than this ...
  std::size_t large_enum_length = 0;  ///< ... may hold this many characters at most
  /// How the provider answers a schema it refuses: HTTP status, and the
  /// error body's shape (see provider_error_body).
  int refusal_status = 400;
};

// OpenAI, "Structured Outputs: supported schemas"
// (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas):
// types string, number, boolean, integer, object, array, enum, anyOf (and
// null in a list of types); string: pattern, format (those below); number:
// multipleOf, maximum, exclusiveMaximum, minimum, exclusiveMinimum; array:
// minItems, maxItems; definitions in $defs, recursion through $ref. "All
// fields must be required" (an optional one as a union with null),
// "additionalProperties: false must always be set in objects", the root
// "must be an object, and not use anyOf". Not supported: allOf, not,
// dependentRequired, dependentSchemas, if, then, else, patternProperties,
// unevaluatedProperties, propertyNames, minProperties, maxProperties,
// minLength, maxLength and the rest. Limits: 5,000 properties, 10 levels of
// nesting, 1,000 enum values, 120,000 characters of names and enum or const
// values, and a string enum of more than 250 values within 15,000 characters.
inline constexpr std::string_view openai_keywords[] = {"type",
                                                       "properties",
                                                       "required",
                                                       "additionalProperties",
                                                       "items",
                                                       "enum",
                                                       "const",
                                                       "anyOf",
                                                       "$ref",
                                                       "$defs",
                                                       "description",
                                                       "title",
                                                       "pattern",
                                                       "format",
                                                       "multipleOf",
                                                       "maximum",
                                                       "exclusiveMaximum",
                                                       "minimum",
                                                       "exclusiveMinimum",
                                                       "minItems",
                                                       "maxItems"};
inline constexpr std::string_view openai_formats[] = {"date-time", "time", "date", "duration", "email",
                                                      "hostname",  "ipv4", "ipv6", "uuid"};

// Gemini, "Structured output: JSON Schema support"
// (https://ai.google.dev/gemini-api/docs/structured-output#json-schema):
// responseJsonSchema takes type (with null), title, description, enum,
// format (date-time, date, time), items, prefixItems, minItems, maxItems,
// minimum, maximum, properties, required, additionalProperties, anyOf,
// $ref, $defs and $id/$anchor; other keywords are ignored, not refused.
// "Very large or deeply nested schemas" are refused; the page gives no
// number, so the limits below are OpenAI's, the strictest documented.
inline constexpr std::string_view gemini_keywords[] = {
    "type",     "title",    "description", "enum",    "format",     "items",    "prefixItems",
    "minItems", "maxItems", "minimum",     "maximum", "properties", "required", "additionalProperties",
    "anyOf",    "$ref",     "$defs",       "$id",     "$anchor"};
inline constexpr std::string_view gemini_formats[] = {"date-time", "date", "time"};

// Anthropic, "Structured outputs: JSON Schema limitations"
// (https://docs.claude.com/en/docs/build-with-claude/structured-outputs#json-schema-limitations):
// all basic types, enum (of scalars), const, anyOf, allOf, $ref, $defs and
// definitions (local), default, required, additionalProperties (false
// only), formats date-time, time, date, duration, email, hostname, uri,
// ipv4, ipv6, uuid, minItems of 0 or 1, pattern. Not supported: recursive
// schemas, numerical bounds (minimum, maximum, multipleOf), string lengths,
// array bounds beyond minItems 0 or 1, additionalProperties other than
// false. The SDKs "remove unsupported constraints and add them to the
// description". Limits: 24 optional properties and 16 properties with
// anyOf or a list of types, over all strict schemas of a request.
inline constexpr std::string_view anthropic_keywords[] = {
    "type", "properties", "required",    "additionalProperties", "items", "enum",    "const",   "anyOf",  "allOf",
    "$ref", "$defs",      "definitions", "description",          "title", "default", "pattern", "format", "minItems"};
inline constexpr std::string_view anthropic_formats[] = {"date-time", "time", "date", "duration", "email",
                                                         "hostname",  "uri",  "ipv4", "ipv6",     "uuid"};

// Ollama, "Structured outputs" (https://docs.ollama.com/capabilities/structured-outputs):
// `format` takes a JSON Schema, turned into a grammar by llama.cpp's
// json-schema-to-grammar, which reads type, properties, required,
// additionalProperties, items, prefixItems, minItems, maxItems, enum,
// const, anyOf, oneOf, allOf, $ref and $defs/definitions (local), pattern,
// the formats below, minLength, maxLength, and minimum/maximum bounds; the
// rest is ignored.
inline constexpr std::string_view ollama_keywords[] = {"type",
                                                       "properties",
                                                       "required",
                                                       "additionalProperties",
                                                       "items",
                                                       "prefixItems",
                                                       "minItems",
                                                       "maxItems",
                                                       "enum",
                                                       "const",
                                                       "anyOf",
                                                       "oneOf",
                                                       "allOf",
                                                       "$ref",
                                                       "$defs",
                                                       "definitions",
                                                       "pattern",
                                                       "format",
                                                       "minLength",
                                                       "maxLength",
                                                       "minimum",
                                                       "maximum",
                                                       "exclusiveMinimum",
                                                       "exclusiveMaximum",
                                                       "description",
                                                       "title"};
inline constexpr std::string_view ollama_formats[] = {"date", "time", "date-time", "uuid"};

inline constexpr provider_rules openai_rules{.keywords = openai_keywords,
                                             .formats = openai_formats,
                                             .every_property_required = true,
                                             .closed_objects = true,
                                             .object_root = true,
                                             .typed = true,
                                             .one_of_as_any_of = true,
                                             .max_nesting = 10,
                                             .max_properties = 5000,
                                             .max_enum_values = 1000,
                                             .max_string_length = 120000,
                                             .large_enum = 250,
                                             .large_enum_length = 15000};
inline constexpr provider_rules gemini_rules{.keywords = gemini_keywords,
                                             .formats = gemini_formats,
                                             .one_of_as_any_of = true,
                                             .max_nesting = 10,
                                             .max_properties = 5000,
                                             .max_enum_values = 1000};
inline constexpr provider_rules anthropic_rules{.keywords = anthropic_keywords,
                                                .formats = anthropic_formats,
                                                .closed_objects = true,
                                                .typed = true,
                                                .recursion = false,
                                                .one_of_as_any_of = true,
                                                .describe_dropped = true,
                                                .max_min_items = 1,
                                                .max_optional = 24,
                                                .max_unions = 16};
inline constexpr provider_rules ollama_rules{.keywords = ollama_keywords, .formats = ollama_formats};

inline provider_rules rules_of(provider_profile profile) noexcept {
  switch (profile) {
    case provider_profile::full: return {};
    case provider_profile::openai_strict: return openai_rules;
    case provider_profile::gemini: return gemini_rules;
    case provider_profile::anthropic: return anthropic_rules;
    case provider_profile::ollama: return ollama_rules;
  }
  return {};
}

inline bool takes(std::span<const std::string_view> list, std::string_view name) noexcept {
  return list.empty() || std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace detail::provider
LLMDLQ_END_NAMESPACE
