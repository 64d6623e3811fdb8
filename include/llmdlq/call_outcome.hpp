// SPDX-License-Identifier: MIT
// Sorting an LLM call's transport outcome: infrastructure trouble that keeps
// the message (retry later) from requests that can never succeed as they
// stand (dead-letter them).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/taxonomy.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// What came back from one call to a model's API.
struct call_outcome {
  std::optional<int> http_status;  ///< none when no response arrived
  bool timed_out = false;
  bool connection_failed = false;                        ///< DNS, refused, reset, TLS
  std::string_view body;                                 ///< the provider's response body, for its error type
  std::optional<std::chrono::milliseconds> retry_after;  ///< from a Retry-After header
};

enum class call_verdict : std::uint8_t {
  proceed,      ///< a response: judge it with process_llm_response
  retry_later,  ///< infrastructure: keep the message and retry it later (back off)
  dead_letter,  ///< this request fails whatever the retry: dead-letter it and move on
  /// The provider refuses the request itself (its schema, a parameter): no
  /// message is at fault, and every call made the same way fails the same
  /// way. Keep the message, stop, and fix the configuration.
  fix_request,
};

[[nodiscard]] constexpr std::string_view to_string(call_verdict v) noexcept {
  switch (v) {
    case call_verdict::proceed: return "proceed";
    case call_verdict::retry_later: return "retry_later";
    case call_verdict::dead_letter: return "dead_letter";
    case call_verdict::fix_request: return "fix_request";
  }
  return "proceed";
}

struct call_decision {
  call_verdict verdict = call_verdict::proceed;
  /// A stable reason: ok, timeout, network, rate_limited, overloaded,
  /// server_error, auth, quota, context_length_exceeded, content_filtered,
  /// invalid_request; for fix_request, request_rejected, not_found (no such
  /// model or path) or invalid_request (a client that cannot send it).
  std::string reason;
  std::optional<failure_category> category;  ///< for dead_letter: the envelope's category
  std::optional<std::chrono::milliseconds> retry_after;
};

/// Timeouts, network errors, 408/425/429, 5xx, auth and quota problems are
/// retry_later (the configuration or the provider will change, the input
/// will not). A prompt over the context window is poison for this model, a
/// content-filter block is a refusal: dead_letter. A 400 or 422 whose body
/// blames the request itself, as the providers word it (OpenAI's `param`
/// or "Invalid schema", Anthropic's and Gemini's naming the schema or a
/// parameter, Ollama's `format`), is fix_request: the configuration is at
/// fault, never the message; so is a 404. Any other 4xx is an invalid request:
/// dead_letter. Provider error bodies (OpenAI, Anthropic, Gemini, Ollama
/// styles) refine the status.
[[nodiscard]] LLMDLQ_INLINE call_decision classify_call(const call_outcome& outcome);

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/call_outcome.ipp"
#endif
