// SPDX-License-Identifier: MIT
// An llm_client for servers that speak OpenAI's chat completions API
// (OpenAI, vLLM, llama.cpp's server, Ollama, LiteLLM, ...).
// Part of the llmdlq::llm library (libcurl).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/llm/client.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct openai_compatible_client_options {
  /// The API's base URL, http or https, e.g. `http://127.0.0.1:8080/v1`;
  /// requests go to `{base_url}/chat/completions`. It may not hold
  /// credentials (`user:password@`): the key goes in api_key.
  std::string base_url;
  /// Sent as `Authorization: Bearer <api_key>` and nowhere else (not in
  /// error messages, not in endpoint()). Empty: no Authorization header,
  /// for local servers that need none.
  std::string api_key;
  /// Limit on connecting (0: libcurl's default, 300 s).
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
  /// Limit on the whole call, connecting included (0: none).
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  /// A request with a json_schema asks for structured outputs
  /// (`response_format: {type: json_schema, json_schema: {name: "response",
  /// strict: true, schema}}`). Off for servers that reject the field: the
  /// schema is then not sent, and the answer is only checked afterwards.
  bool structured_outputs = true;
  /// A longer response body is not read: the call fails.
  std::size_t max_response_bytes = std::size_t{8} << 20;
  /// More request headers (name, value), e.g. an organisation or project id.
  std::vector<std::pair<std::string, std::string>> headers;
};

/// One HTTP request per complete(): `POST {base_url}/chat/completions`, no
/// retries and no redirects followed. A failed call is sorted by
/// classify_call (call_outcome.hpp) into `call_error::decision`, with the
/// server's Retry-After (seconds or an HTTP date). Two more reasons are the
/// client's own, both `retry_later` as the server and not the request is at
/// fault (the caller's attempt cap bounds the retries):
/// - `invalid_response`: a 2xx body that is not a chat completion (not
///   JSON, or without `choices[0].message`);
/// - `response_too_large`: a 2xx body over max_response_bytes.
/// A request that cannot be sent as it stands (a json_schema that is not
/// JSON, a temperature that is not finite) is `fix_request`,
/// `invalid_request`.
///
/// A client keeps one connection (libcurl easy handle) and makes one call
/// at a time: concurrent complete() calls wait for each other, so threads
/// that call in parallel each use a client of their own.
class openai_compatible_client final : public llm_client {
 public:
  /// Checks the options; connects only when called. An unusable base_url,
  /// a header with a line break, a negative timeout or a libcurl that
  /// cannot start fail with `retry_later`, reason `configuration`.
  [[nodiscard]] static expected<openai_compatible_client, call_error> open(openai_compatible_client_options options);

  openai_compatible_client(openai_compatible_client&&) noexcept;
  openai_compatible_client& operator=(openai_compatible_client&&) noexcept;
  ~openai_compatible_client() override;

  [[nodiscard]] expected<completion, call_error> complete(const llm_request& request) override;
  /// The same request with `stream: true` and
  /// `stream_options: {include_usage: true}`, read as server-sent events
  /// (chat_stream_decoder) into `judge`; the connection is closed the
  /// moment the judge's verdict is dead. A stream that breaks off, or whose
  /// events are not chunks, fails as a body that is not a completion does
  /// (`invalid_response`, or the connection's failure).
  [[nodiscard]] expected<completion, call_error> complete_streamed(const llm_request& request,
                                                                   stream_judge& judge) override;

  /// The base URL, as given (without a trailing slash).
  [[nodiscard]] std::string endpoint() const override;

 private:
  struct impl;
  explicit openai_compatible_client(std::unique_ptr<impl> state) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
