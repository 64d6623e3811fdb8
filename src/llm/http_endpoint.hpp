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
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmdlq/chat_stream.hpp"
#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/llm/client.hpp"
#include "llmdlq/stream_judge.hpp"

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
/// dead (`cancelled`) and the connection was closed. A server that answers
/// a streamed request whole (`Content-Type: application/json`: it does not
/// stream, or a proxy buffered it) gives its body in `whole` instead, for
/// the client to read as it reads a call that was not streamed.
struct streamed_reply {
  chat_stream_decoder decoder;
  bool cancelled = false;
  std::chrono::milliseconds latency{0};
  std::optional<http_reply> whole;
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
completion streamed_completion(const streamed_reply& reply, stream_judge& judge, const std::string& model);

/// What a person reads of an error body: the API's own message when it gave
/// one ({"error": {"message": ...}} or {"error": "..."}), else its start.
std::string error_detail(std::string_view body);

/// A 2xx body as the completion `parse` reads from it (named after `model`
/// when the server names none), or an invalid_response error saying it is
/// not `what`.
template <class Parse>
expected<completion, call_error> answer_of(const http_endpoint& http, const http_reply& reply, const std::string& model,
                                           Parse parse, std::string_view what) {
  std::optional<completion> answer = parse(reply.body);
  if (!answer) {
    return unexpected(http.error({call_verdict::retry_later, "invalid_response", std::nullopt, std::nullopt},
                                 static_cast<int>(reply.status),
                                 "HTTP " + std::to_string(reply.status) + " from " + http.url() + " is not " +
                                     std::string(what) + ": " + error_detail(reply.body),
                                 reply.latency));
  }
  if (answer->model.empty()) answer->model = model;  // servers that do not say
  answer->latency = reply.latency;
  return *std::move(answer);
}

/// A streamed call's completion: the stream read into `judge`, or the body
/// of a server that answered whole, read by `parse` and given to the judge
/// at once.
template <class Parse>
expected<completion, call_error> streamed_answer(const http_endpoint& http, streamed_reply& reply, stream_judge& judge,
                                                 const std::string& model, Parse parse, std::string_view what) {
  if (!reply.whole) return streamed_completion(reply, judge, model);
  auto answer = answer_of(http, *reply.whole, model, parse, what);
  if (!answer) return answer;
  judge.feed(answer->text);
  if (answer->refusal) judge.refuse(*answer->refusal);
  return answer;
}

}  // namespace llm_detail
LLMDLQ_END_NAMESPACE
