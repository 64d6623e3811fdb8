// SPDX-License-Identifier: MIT
// One HTTP endpoint of a model server on libcurl, for the llm clients: a JSON
// body POSTed on one easy handle (one call at a time), the answer read whole
// or as a stream of chat chunks into a stream judge, and every failure
// sorted by classify_call into a call_error that never holds the API key.
// Private to llmdlq_llm.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmdlq/chat_stream.hpp"
#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/llm/client.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace llm_detail {

struct http_endpoint_options {
  std::string client;    ///< the client's name, which starts its messages
  std::string base_url;  ///< http(s), no credentials, query or fragment
  std::string path;      ///< appended to base_url: `/chat/completions`
  std::string api_key;   ///< `Authorization: Bearer`, when not empty
  std::chrono::milliseconds connect_timeout{0};
  std::chrono::milliseconds timeout{0};
  std::size_t max_response_bytes = 0;
  std::vector<std::pair<std::string, std::string>> headers;
};

/// A 2xx answer read whole.
struct http_reply {
  long status = 0;
  std::string body;
  std::chrono::milliseconds latency{0};
};

/// A 2xx stream read into a judge: until its end, or until the judge said
/// dead (`cancelled`) and the connection was closed.
struct streamed_reply {
  chat_stream_decoder decoder;
  bool cancelled = false;
  std::chrono::milliseconds latency{0};
};

class http_endpoint {
 public:
  /// Checks the options (a configuration call_error when unusable).
  static expected<std::unique_ptr<http_endpoint>, call_error> open(http_endpoint_options options);
  ~http_endpoint();

  /// POSTs `body`; the 2xx answer, or the call's failure.
  expected<http_reply, call_error> post(const std::string& body);
  /// POSTs `body` and reads the answer as a `format` stream into `judge`,
  /// closing the connection the moment the judge's verdict is dead.
  expected<streamed_reply, call_error> post_streamed(const std::string& body, chat_stream_format format,
                                                    stream_judge& judge);

  /// A failure of this client's own (a body that is not an answer, a
  /// request that cannot be sent), its message without the API key.
  [[nodiscard]] call_error error(call_decision decision, std::optional<int> status, std::string message,
                                 std::chrono::milliseconds latency) const;
  [[nodiscard]] const std::string& endpoint() const noexcept { return endpoint_; }
  [[nodiscard]] const std::string& url() const noexcept { return url_; }
  [[nodiscard]] const std::string& client() const noexcept { return options_.client; }

 private:
  struct state;
  http_endpoint() = default;
  http_endpoint_options options_;
  std::string endpoint_, url_;
  std::unique_ptr<state> state_;
};

/// The completion a streamed reply holds: the text the judge received, what
/// the stream said of it, and where it was cut when the judge said dead.
completion streamed_completion(const streamed_reply& reply, const stream_judge& judge, const std::string& model);

/// What a person reads of an error body: the API's own message when it gave
/// one ({"error": {"message": ...}} or {"error": "..."}), else its start.
std::string error_detail(std::string_view body);

}  // namespace llm_detail
LLMDLQ_END_NAMESPACE
