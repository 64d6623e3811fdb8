// SPDX-License-Identifier: MIT
// The re-ask as data: a fresh two-message conversation that shows a model
// only the contract, machine-made error records and its failed output,
// quoted as data inside a random boundary. Its size is bounded whatever the
// envelope holds, and it does not grow with the attempt number.
// Part of the llmdlq::llm library.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/llm/client.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct repair_prompt_options {
  /// The failed output is quoted up to this many bytes (on a UTF-8
  /// boundary); the prompt says how much was left out.
  std::size_t max_output_bytes = 16 * 1024;
  /// A schema whose compact JSON is longer is replaced by the subschemas the
  /// errors point at (each cut to this size as a whole, else left out).
  std::size_t max_schema_bytes = 8 * 1024;
  std::size_t max_errors = 16;  ///< error records shown; the prompt says how many more there were
};

/// The two messages of a re-ask, and the boundary that quotes the output.
struct repair_prompt {
  std::string system;    ///< the fixed instruction: no text of the model's in it
  std::string user;      ///< the schema, the error records, the quoted output
  std::string boundary;  ///< random, fresh for every prompt: `llmdlq-data-<32 hex>`

  [[nodiscard]] std::vector<chat_message> messages() const {
    return {{"system", system}, {"user", user}};
  }
  [[nodiscard]] std::size_t size() const noexcept { return system.size() + user.size(); }
};

/// The most bytes a repair prompt built with `options` can have, whatever
/// the envelope and schema.
[[nodiscard]] std::size_t max_repair_prompt_bytes(const repair_prompt_options& options = {}) noexcept;

/// The re-ask for the failure in `e`. `schema` is the JSON Schema the answer
/// must follow (the parsed document the schema was compiled from). Error
/// records carry the instance pointer, the keyword and what the schema
/// expects there (from the schema, not from the validator's message); a
/// member name in the pointer that the schema does not declare is output
/// text and is shown as `*`, so that nothing of the output is outside the
/// boundary lines. The failed output is `e.raw_response.text` (nothing when
/// the envelope holds none). A truncated output is shown with a request for the complete document.
[[nodiscard]] repair_prompt build_repair_prompt(const envelope& e, const boost::json::value& schema,
                                               const repair_prompt_options& options = {});

namespace detail {
/// build_repair_prompt with the schema's compact JSON text already made
/// (the ladder makes it once).
[[nodiscard]] repair_prompt build_repair_prompt(const envelope& e, const boost::json::value& schema,
                                                std::string_view schema_compact,
                                                const repair_prompt_options& options);
}  // namespace detail

/// Why a reply to a repair prompt must not be used (it is `poison`): it
/// repeats the boundary (it answers from inside the quoted data or tries to
/// close it), or takes another role (chat-template control tokens, a
/// system or assistant header). Nothing when the reply may be judged as an
/// answer. Injection markers and instruction phrases in the reply are
/// found when the reply is judged (process_llm_response's guard).
[[nodiscard]] std::optional<std::string> find_breakout(std::string_view reply, const repair_prompt& prompt);

LLMDLQ_END_NAMESPACE
