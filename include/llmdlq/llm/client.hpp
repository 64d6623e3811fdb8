// SPDX-License-Identifier: MIT
// Asking a model: the request, what comes back, and the interface a client
// implements (openai_compatible_client, scripted_llm_client, a host's own).
// Part of the llmdlq::llm library.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/call_outcome.hpp"
#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/token_usage.hpp"

LLMDLQ_BEGIN_NAMESPACE

class stream_judge;  // stream_judge.hpp

/// One message of a chat conversation.
struct chat_message {
  std::string role;  ///< system, user or assistant
  std::string content;
  friend bool operator==(const chat_message&, const chat_message&) = default;
};

/// A chat completion request.
struct llm_request {
  std::string model;
  std::vector<chat_message> messages;
  std::optional<std::int64_t> max_tokens;
  std::optional<double> temperature;
  std::optional<std::int64_t> seed;
  /// A JSON Schema (as JSON text) the answer must follow: sent as
  /// `response_format: {type: json_schema, strict: true}` to servers that
  /// support structured outputs. lower_schema (provider_schema.hpp) writes
  /// it as the provider takes it.
  std::optional<std::string> json_schema;
  /// Whether the provider holds the answer to json_schema (strict mode).
  /// False where it cannot take the schema in strict mode
  /// (lowered_schema::strict): OpenAI gets `strict: false`, Ollama JSON mode.
  bool strict = true;
  friend bool operator==(const llm_request&, const llm_request&) = default;
};

/// Where a streamed answer was cut because its judge found it dead.
struct stream_cancel {
  std::size_t bytes = 0;   ///< answer bytes received before the connection was closed
  std::size_t events = 0;  ///< stream events that carried answer text (about one per token)
  friend bool operator==(const stream_cancel&, const stream_cancel&) = default;
};

/// A model's answer. A refusal or a cut-off answer (`finish_reason` "length")
/// is still a completion: judging it is the caller's part.
struct completion {
  std::string text;                    ///< the assistant message's content
  std::string finish_reason;           ///< stop, length, content_filter, ...
  std::optional<std::string> refusal;  ///< the API's refusal message, when it gave one
  token_usage usage;
  std::string model;  ///< the model that answered, as the server names it
  std::chrono::milliseconds latency{0};
  /// complete_streamed: the client closed the stream here, as the judge
  /// said the answer was dead; `text` is what arrived until then, and
  /// `usage` what the server reported, if anything.
  std::optional<stream_cancel> cancelled;
};

/// Why a call produced no completion. `decision` sorts it (see
/// call_outcome.hpp): `retry_later` for timeouts, network trouble, 429 and
/// 5xx (with the server's Retry-After), `dead_letter` for a request that
/// can never succeed as it stands (context too long, content filtered,
/// another 4xx).
struct call_error {
  call_decision decision;
  std::optional<int> http_status;  ///< none when no response arrived
  std::string message;             ///< for a person; never holds credentials
  std::chrono::milliseconds latency{0};
};

/// Records in the judge's context the model `request` asks and how
/// (max_tokens, temperature, seed), where the host left them unset, so that
/// a streamed answer's envelope names what was called. Every client's
/// complete_streamed begins with it.
void record_call(stream_judge& judge, const llm_request& request);

/// Something that answers chat completion requests. Implementations make
/// one call per complete(): no retries of their own, so that the recovery
/// ladder is the only retry layer.
class llm_client {
 public:
  virtual ~llm_client() = default;

  [[nodiscard]] virtual expected<completion, call_error> complete(const llm_request& request) = 0;
  /// complete(), with the answer given to `judge` as it arrives: a client
  /// that streams closes the connection the moment the judge's verdict is
  /// dead, so the rest is neither generated nor paid for (the completion
  /// says where, in `cancelled`). This default asks complete() and feeds the
  /// whole answer at once.
  [[nodiscard]] virtual expected<completion, call_error> complete_streamed(const llm_request& request,
                                                                           stream_judge& judge);

  /// Where the calls go (a base URL, without credentials): the circuit
  /// breaker keeps one state per endpoint and model.
  [[nodiscard]] virtual std::string endpoint() const = 0;
};

LLMDLQ_END_NAMESPACE
