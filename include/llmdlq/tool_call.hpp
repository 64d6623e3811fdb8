// SPDX-License-Identifier: MIT
// A tool call judged like an answer. Agent pipelines get their structured
// output as function calls: the arguments are JSON the model wrote, and
// fail the way answers do (not JSON, cut off, against the tool's schema, a
// content rule), or name a tool that does not exist. process_tool_call
// judges one call against its tool's schema (tool_registry.hpp), and a
// failed call becomes a dead letter whose envelope names the tool and the
// call (`tool_call`) and holds the arguments as its raw response.
//
// \code
//   auto reply = llmdlq::read_tool_calls(http_body, llmdlq::chat_api::openai);
//   for (auto& judged : llmdlq::process_tool_calls(*reply, tools, context, config)) {
//     if (judged.result) run_tool(judged.call.name, judged.result->json);
//     else dlq.dead_letter(std::move(judged.result.error()));
//   }
// \endcode
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/request_context.hpp"
#include "llmdlq/token_usage.hpp"
#include "llmdlq/tool_registry.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// The chat APIs whose replies carry tool calls.
enum class chat_api : std::uint8_t {
  openai,     ///< chat completions: `choices[0].message.tool_calls[].function.arguments`, a JSON string
  anthropic,  ///< messages: `content[]` blocks of `type: tool_use` with an `input` object
  ollama,     ///< `/api/chat`: `message.tool_calls[].function.arguments`, an object
};

[[nodiscard]] LLMDLQ_INLINE std::string_view to_string(chat_api api) noexcept;
/// The API of that name (`openai`, `anthropic`, `ollama`), or nothing.
[[nodiscard]] LLMDLQ_INLINE std::optional<chat_api> chat_api_from(std::string_view name) noexcept;

/// One call the model made.
struct tool_call {
  std::uint32_t index = 0;  ///< its place among the reply's calls
  std::string id;           ///< the provider's id (`call_…`, `toolu_…`); empty when it gave none
  std::string name;         ///< the tool named, as written
  std::string arguments;    ///< JSON text as the model wrote it (an object's text for Anthropic and Ollama)
  friend bool operator==(const tool_call&, const tool_call&) = default;
};

/// What a chat reply holds besides the answer's text.
struct tool_call_reply {
  std::string id;                ///< the reply's (`chatcmpl-…`, `msg_…`); empty when it has none (Ollama)
  std::vector<tool_call> calls;  ///< in the reply's order
  std::string text;              ///< the answer's text beside the calls, if any
  /// The API's, with Anthropic's `max_tokens` read as `length`: the reply
  /// was cut off, and so is its last call.
  std::string finish_reason;
  std::string model;
  std::optional<token_usage> usage;
  std::optional<std::string> refusal;  ///< the API's refusal, when it gave one
};

/// Why a body is not a reply of the API.
struct reply_error {
  std::string message;
};

/// The tool calls of a whole (not streamed) reply body. An error for a body
/// that is not JSON, an API error body, or a reply of another shape; a call
/// whose arguments are not JSON is read, to be judged. At most
/// `max_calls` calls are read (an error beyond).
[[nodiscard]] LLMDLQ_INLINE expected<tool_call_reply, reply_error> read_tool_calls(std::string_view body, chat_api api,
                                                                                   std::size_t max_calls = 128);

/// Judges one call: a name no tool in `tools` has is a schema failure (the
/// message lists the tools); else its arguments are judged against the
/// tool's schema exactly as process_llm_response judges an answer (with the
/// tool's forced nulls, when lowering set some). An envelope's `tool_call`
/// names the tool, the call's id and index, and `raw_response` holds the
/// arguments. The context's idempotency key, when given, is extended with
/// `/tool_calls/<index>` (a derived one with the index and a hash of the
/// tool's name), so that parallel calls of one reply keep a letter each.
/// Thread-safe, as process_llm_response is.
[[nodiscard]] LLMDLQ_INLINE expected<accepted, envelope> process_tool_call(const tool_call& call,
                                                                           const tool_registry& tools,
                                                                           const request_context& context,
                                                                           const process_config& config = {});

/// One call and its judgement.
struct judged_tool_call {
  tool_call call;
  expected<accepted, envelope> result;
};

/// Every call of a reply judged: as process_tool_call, with the reply's
/// finish reason given to the last call only (a cut-off reply cut that
/// one), its refusal to each, and its model recorded when the context names none.
[[nodiscard]] LLMDLQ_INLINE std::vector<judged_tool_call> process_tool_calls(const tool_call_reply& reply,
                                                                             const tool_registry& tools,
                                                                             const request_context& context,
                                                                             const process_config& config = {});

namespace detail {

// The context of one call: the tool named, the key extended.
[[nodiscard]] LLMDLQ_INLINE request_context tool_call_context(const request_context& context,
                                                              const tool_call_reference& call);
// Why a call names no registered tool, quoting the name the model wrote
// without its control bytes and at most 128 bytes of it.
[[nodiscard]] LLMDLQ_INLINE std::string unknown_tool_message(std::string_view name);
// The envelope of a call to a tool no one registered.
[[nodiscard]] LLMDLQ_INLINE envelope unknown_tool_envelope(std::string_view arguments, const tool_registry& tools,
                                                           const request_context& call_context,
                                                           const process_config& config);

}  // namespace detail

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/tool_call.ipp"
#endif
