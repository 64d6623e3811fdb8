// SPDX-License-Identifier: MIT
// The tools a model may call, each with the JSON Schema its arguments must
// pass: what process_tool_call (tool_call.hpp) and judged_tool_stream judge
// a call against, and what a request offers the model, lowered for its
// provider (lower_tools) as a response schema is (provider_schema.hpp).
//
// \code
//   auto tools = llmdlq::tool_registry::from_json(openai_tools_array_text);
//   auto offered = llmdlq::lower_tools(*tools, llmdlq::provider_profile::openai_strict);
//   request["tools"] = offered->definitions;      // each parameters schema lowered, `strict` where it may be
//   judge_with(offered->registry);                // knows the nulls the lowering forced
// \endcode
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/provider_schema.hpp"
#include "llmdlq/schema.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// One tool: its name, what it does, and the schema of its arguments.
struct tool_definition {
  std::string name;
  std::string description;
  boost::json::value parameters;  ///< the arguments' JSON Schema, as written
  llmdlq::schema schema;          ///< `parameters` compiled: the contract a call is judged against
  /// The nulls a lowering of `parameters` forced (lower_tools): an argument
  /// the model set to null there is read as left out.
  std::shared_ptr<const forced_nulls> nulls;
};

/// Why a tool cannot be registered, or a definition read.
struct tool_registry_error {
  std::string pointer;  ///< JSON Pointer into the definitions read, or the tool's name
  std::string message;
};

struct lowered_tools;

/// Tools by name, found in logarithmic time. Names are unique, 1 to 128 bytes of UTF-8 without control
/// characters (a provider may allow fewer: lower_tools says). Copies share
/// the compiled schemas. Not thread-safe to change; safe to read from any
/// number of threads.
class tool_registry {
 public:
  /// Adds a tool whose arguments must pass `parameters` (a JSON Schema).
  LLMDLQ_INLINE expected<void, tool_registry_error> add(std::string name, boost::json::value parameters,
                                                        std::string description = {},
                                                        const compile_options& options = {});

  /// The tool of that name, or null.
  [[nodiscard]] LLMDLQ_INLINE const tool_definition* find(std::string_view name) const noexcept;
  [[nodiscard]] const std::vector<tool_definition>& tools() const noexcept { return tools_; }
  [[nodiscard]] bool empty() const noexcept { return tools_.empty(); }
  /// The names, comma-separated, for a message saying which tools there are.
  [[nodiscard]] LLMDLQ_INLINE std::string names() const;

  /// Reads definitions in any provider's shape: OpenAI's and Ollama's
  /// `tools` (`[{"type": "function", "function": {"name", "description",
  /// "parameters"}}]`), Anthropic's (`[{"name", "description",
  /// "input_schema"}]`), Gemini's (`[{"functionDeclarations": [{"name",
  /// "description", "parametersJsonSchema" or "parameters"}]}]`), or an
  /// object of name to schema. A definition without a schema takes any object.
  [[nodiscard]] static LLMDLQ_INLINE expected<tool_registry, tool_registry_error> from_json(
      const boost::json::value& definitions, const compile_options& options = {});
  [[nodiscard]] static LLMDLQ_INLINE expected<tool_registry, tool_registry_error> from_json(
      std::string_view definitions, const compile_options& options = {});
  // (A string literal or std::string is JSON text, not a JSON string value.)
  [[nodiscard]] static expected<tool_registry, tool_registry_error> from_json(const char* definitions,
                                                                              const compile_options& options = {}) {
    return from_json(std::string_view(definitions), options);
  }
  [[nodiscard]] static expected<tool_registry, tool_registry_error> from_json(const std::string& definitions,
                                                                              const compile_options& options = {}) {
    return from_json(std::string_view(definitions), options);
  }

 private:
  // Sets each tool's forced nulls.
  friend LLMDLQ_INLINE expected<lowered_tools, lowering_error> lower_tools(const tool_registry&, provider_profile,
                                                                           const lowering_options&);
  std::vector<tool_definition> tools_;
  std::map<std::string, std::size_t, std::less<>> by_name_;  // into tools_: a lookup in log time, however many
};

/// A registry's tools as a provider takes them.
struct lowered_tools {
  provider_profile profile = provider_profile::full;
  /// What to send as the request's tools, in the provider's shape (OpenAI's
  /// for openai_strict, ollama and full; Anthropic's; Gemini's one
  /// `functionDeclarations` entry), each parameters schema lowered, and
  /// marked strict where the provider takes it so (OpenAI's and
  /// Anthropic's `strict: true`).
  boost::json::array definitions;
  std::vector<lowered_schema> parameters;  ///< per tool, in order: what the provider will no longer enforce
  /// The same tools with the nulls each lowering forced: judge the calls with it.
  tool_registry registry;
};

/// Lowers every tool's parameters for `profile` (see lower_schema). A name
/// the provider refuses (OpenAI, Anthropic and Ollama take
/// `^[a-zA-Z0-9_-]{1,64}$`; Gemini a letter or `_` first, then also `.`,
/// at most 64) is a lowering_error at `/<index>/name`, as is a schema
/// lowering refuses.
[[nodiscard]] LLMDLQ_INLINE expected<lowered_tools, lowering_error> lower_tools(const tool_registry& tools,
                                                                                provider_profile profile,
                                                                                const lowering_options& options = {});

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/tool_registry.ipp"
#endif
