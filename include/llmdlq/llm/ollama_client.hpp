// SPDX-License-Identifier: MIT
// An llm_client for Ollama's native chat API (`POST {base_url}/api/chat`):
// the schema goes as `format`, the token limit as `options.num_predict`, and
// the usage comes from `prompt_eval_count` and `eval_count`. Streamed calls
// read its lines of JSON into a stream judge.
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

struct ollama_client_options {
  /// Ollama's base URL, e.g. `http://127.0.0.1:11434`; requests go to
  /// `{base_url}/api/chat`. No credentials, query or fragment.
  std::string base_url = "http://127.0.0.1:11434";
  /// Sent as `Authorization: Bearer` when not empty (a proxy in front of Ollama).
  std::string api_key;
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
  /// Limit on the whole call (0: none). Local models are slow to load: the
  /// first call after a start may take a while.
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
  /// A longer response body is not read: the call fails.
  std::size_t max_response_bytes = std::size_t{8} << 20;
  std::vector<std::pair<std::string, std::string>> headers;
};

/// One HTTP request per call, no retries, failures sorted as
/// openai_compatible_client sorts them (`invalid_response` for a body that
/// is not a chat answer, `response_too_large`, `invalid_request` for a
/// json_schema that is not JSON). One call at a time per client.
class ollama_client final : public llm_client {
 public:
  [[nodiscard]] static expected<ollama_client, call_error> open(ollama_client_options options);
  ollama_client(ollama_client&&) noexcept;
  ollama_client& operator=(ollama_client&&) noexcept;
  ~ollama_client() override;

  /// `stream: false`: one JSON answer.
  [[nodiscard]] expected<completion, call_error> complete(const llm_request& request) override;
  /// `stream: true`: the lines read into `judge`, the connection closed the
  /// moment its verdict is dead.
  [[nodiscard]] expected<completion, call_error> complete_streamed(const llm_request& request,
                                                                   stream_judge& judge) override;
  [[nodiscard]] std::string endpoint() const override;

 private:
  struct impl;
  explicit ollama_client(std::unique_ptr<impl> state) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
