// SPDX-License-Identifier: MIT
// Asking a model: the request, what comes back, and the interface a client
// implements (openai_compatible_client, scripted_llm_client, a host's own).
// Part of the llmdlq::llm library.
#pragma once

#include <chrono>
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
  /// support structured outputs.
  std::optional<std::string> json_schema;
  friend bool operator==(const llm_request&, const llm_request&) = default;
};

/// A model's answer. A refusal or a cut-off answer (`finish_reason` "length")
/// is still a completion: judging it is the caller's part.
struct completion {
  std::string text;           ///< the assistant message's content
  std::string finish_reason;  ///< stop, length, content_filter, ...
  std::optional<std::string> refusal;  ///< the API's refusal message, when it gave one
  token_usage usage;
  std::string model;  ///< the model that answered, as the server names it
  std::chrono::milliseconds latency{0};
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

/// Something that answers chat completion requests. Implementations make
/// one call per complete(): no retries of their own, so that the recovery
/// ladder is the only retry layer.
class llm_client {
 public:
  virtual ~llm_client() = default;

  [[nodiscard]] virtual expected<completion, call_error> complete(const llm_request& request) = 0;

  /// Where the calls go (a base URL, without credentials): the circuit
  /// breaker keeps one state per endpoint and model.
  [[nodiscard]] virtual std::string endpoint() const = 0;
};

LLMDLQ_END_NAMESPACE
