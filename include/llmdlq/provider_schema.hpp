// SPDX-License-Identifier: MIT
// A user's JSON Schema as a model provider takes it for structured outputs:
// each provider's strict mode accepts its own documented subset (OpenAI
// wants every property required and every object closed, Anthropic has no
// numeric or length bounds, ...) and answers anything else with HTTP 400.
// lower_schema() rewrites the schema into that subset and says, keyword by
// keyword, what the provider will no longer enforce; the user's schema stays
// the contract, judged locally. An answer's nulls that the lowering forced
// (an optional property made required and nullable) are mapped back before
// that judgement (map_forced_nulls), reported as repairs of their own code.
//
// \code
//   auto lowered = llmdlq::lower_schema(receipt_schema_json, llmdlq::provider_profile::openai_strict);
//   request.json_schema = lowered->text();   // strict: lowered->strict
//   llmdlq::process_config config;
//   config.judging.forced_nulls = lowered->nulls;  // an answer's forced nulls are read as absent
// \endcode
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/repair.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// The structured-output dialects a server may take.
enum class provider_profile : std::uint8_t {
  full,           ///< any JSON Schema (vLLM, llama.cpp's server, LiteLLM passing it on): sent as written
  openai_strict,  ///< OpenAI: `response_format: {type: json_schema, json_schema: {strict: true, schema}}`
  gemini,         ///< Gemini: `generationConfig.responseJsonSchema`
  anthropic,      ///< Claude's structured outputs (`output_format`) and strict tools' `input_schema`
  ollama,         ///< Ollama: `format` (a grammar built from the schema)
};

[[nodiscard]] LLMDLQ_INLINE std::string_view to_string(provider_profile profile) noexcept;
/// The profile of that name (`openai` is openai_strict), or nothing.
[[nodiscard]] LLMDLQ_INLINE std::optional<provider_profile> provider_profile_from(std::string_view name) noexcept;

/// What lowering changed at one place of the user's schema.
struct lowering_note {
  enum class change : std::uint8_t {
    dropped,    ///< the keyword is gone: the provider will not enforce it
    described,  ///< gone, and written into `description` (the provider's advice)
    rewritten,  ///< replaced by what the provider takes (oneOf as anyOf, definitions as $defs): enforced more loosely
    nullable,   ///< an optional property made required and nullable: a null answer means absent
    closed,     ///< `additionalProperties: false` added: the model writes no other names
    required,   ///< a type the provider needs added (`"type": "object"` beside `properties`)
  };
  std::string pointer;  ///< JSON Pointer into the user's schema, of the keyword (or the property)
  std::string keyword;
  change what = change::dropped;
  friend bool operator==(const lowering_note&, const lowering_note&) = default;
};

[[nodiscard]] LLMDLQ_INLINE std::string_view to_string(lowering_note::change what) noexcept;

/// The properties a lowering made required and nullable where the user's
/// schema does not allow null, as places of the lowered schema: a null the
/// model writes there stands for a property it would have left out.
struct forced_nulls {
  boost::json::value lowered;        ///< the lowered schema, its `$ref`s read as pointers into it
  std::set<std::string> properties;  ///< JSON Pointers into `lowered` of the properties' subschemas
};

/// The user's schema as a provider takes it.
struct lowered_schema {
  provider_profile profile = provider_profile::full;
  boost::json::value schema;  ///< what to send
  /// Whether the provider can take it in strict mode (constrained decoding).
  /// When not, `reason` says why (root anyOf for OpenAI, a recursive schema
  /// for Anthropic, a limit), and it goes without strict mode (OpenAI's
  /// `strict: false`; JSON mode where there is none): the model may write
  /// anything, and only the local judgement holds it to the schema.
  bool strict = true;
  std::string reason;
  std::vector<lowering_note> notes;           ///< in the order of the user's schema
  std::shared_ptr<const forced_nulls> nulls;  ///< none when no null was forced

  /// The schema to send, as JSON text.
  [[nodiscard]] LLMDLQ_INLINE std::string text() const;
};

/// Why a schema cannot be lowered: not JSON, or, with
/// lowering_options::refuse_non_strict, not expressible in strict mode.
struct lowering_error {
  std::string pointer;  ///< where in the user's schema
  std::string message;
};

struct lowering_options {
  /// A schema the provider cannot take in strict mode is refused
  /// (lowering_error) instead of lowered for non-strict use.
  bool refuse_non_strict = false;
};

/// `user_schema` (a JSON Schema, any draft) lowered for `profile`. Linear in
/// the schema. The profile's rules are the provider's published ones (see
/// detail/schema/provider_rules.hpp, which cites each page).
[[nodiscard]] LLMDLQ_INLINE expected<lowered_schema, lowering_error> lower_schema(const boost::json::value& user_schema,
                                                                                  provider_profile profile,
                                                                                  const lowering_options& options = {});
[[nodiscard]] LLMDLQ_INLINE expected<lowered_schema, lowering_error> lower_schema(std::string_view user_schema,
                                                                                  provider_profile profile,
                                                                                  const lowering_options& options = {});
// (A string literal or std::string is JSON text, not a JSON string value.)
[[nodiscard]] inline expected<lowered_schema, lowering_error> lower_schema(const char* user_schema,
                                                                           provider_profile profile,
                                                                           const lowering_options& options = {}) {
  return lower_schema(std::string_view(user_schema), profile, options);
}
[[nodiscard]] inline expected<lowered_schema, lowering_error> lower_schema(const std::string& user_schema,
                                                                           provider_profile profile,
                                                                           const lowering_options& options = {}) {
  return lower_schema(std::string_view(user_schema), profile, options);
}

/// Why a provider's strict mode refuses a schema, as the provider says it.
struct provider_refusal {
  std::string pointer;  ///< where in the schema
  std::string message;
};

/// Whether `profile`'s strict mode takes `schema` as it stands: nothing when
/// it does, else the first rule it breaks. What a stand-in server checks to
/// refuse as the provider would.
[[nodiscard]] LLMDLQ_INLINE std::optional<provider_refusal> check_provider_schema(const boost::json::value& schema,
                                                                                  provider_profile profile);

/// How a provider's API answers a request whose schema its strict mode
/// refuses: the HTTP status and the error body in that provider's shape
/// (OpenAI's `{"error": {"message", "type", "param", "code"}}`, Anthropic's
/// `{"type": "error", "error": {...}}`, Gemini's `INVALID_ARGUMENT`,
/// Ollama's `{"error": "..."}`), for a stand-in server that refuses as the
/// provider does. classify_call reads each as the request's fault.
struct provider_error {
  int status = 400;
  std::string body;
};
[[nodiscard]] LLMDLQ_INLINE provider_error provider_error_for(provider_profile profile,
                                                              const provider_refusal& refusal);

/// The schema a request body asks `profile`'s API to hold the answer to in
/// strict mode, where that API reads it: OpenAI's (and `full`'s)
/// `response_format.json_schema.schema` with `strict: true`, Gemini's
/// `generationConfig.responseJsonSchema`, Anthropic's
/// `output_format.schema`, Ollama's `format` (an object). Nothing when the
/// request asks for none. What a stand-in server checks.
[[nodiscard]] LLMDLQ_INLINE std::optional<boost::json::value> strict_schema_of_request(
    provider_profile profile, const boost::json::value& request_body);

/// `json` (strict JSON) without the members whose null `nulls` says was
/// forced: one repair action each, code `forced_null`, tier lossless, its
/// path the property's. A null where the user's schema allows one is kept.
/// Linear in the text.
[[nodiscard]] LLMDLQ_INLINE repair_result map_forced_nulls(std::string_view json, const forced_nulls& nulls);

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/provider_schema.ipp"
#endif
