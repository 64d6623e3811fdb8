// SPDX-License-Identifier: MIT
// openai_compatible_client on http_endpoint (libcurl) and Boost.JSON
// (request and response bodies).
#include "llmdlq/config.hpp"
#include "llmdlq/llm/openai_compatible_client.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "chat_json.hpp"
#include "http_endpoint.hpp"
#include "llmdlq/chat_stream.hpp"
#include "llmdlq/stream_judge.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

using std::chrono::milliseconds;

// The request body; nothing when the request cannot be sent as it stands.
expected<std::string, std::string> request_body(const llm_request& request, bool structured_outputs,
                                                bool stream = false) {
  auto body = llm_detail::chat_body(request);
  if (!body) return unexpected(std::move(body.error()));
  if (request.max_tokens) (*body)["max_tokens"] = *request.max_tokens;
  if (request.temperature) (*body)["temperature"] = *request.temperature;
  if (request.seed) (*body)["seed"] = *request.seed;
  if (stream) {
    (*body)["stream"] = true;
    (*body)["stream_options"] = boost::json::object{{"include_usage", true}};
  }
  if (structured_outputs) {
    auto schema = llm_detail::schema_of(request);
    if (!schema) return unexpected(std::move(schema.error()));
    if (*schema) {
      (*body)["response_format"] = boost::json::object{
          {"type", "json_schema"},
          {"json_schema",
           boost::json::object{{"name", "response"}, {"strict", request.strict}, {"schema", std::move(**schema)}}}};
    }
  }
  return boost::json::serialize(*body);
}

// choices[0] of a chat completion; nothing when the body is not one.
std::optional<completion> parse_completion(std::string_view body) {
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(body, ec);
  if (ec || !parsed.is_object()) return std::nullopt;
  const auto& object = parsed.get_object();
  const auto* choices = object.if_contains("choices");
  if (!choices || !choices->is_array() || choices->get_array().empty()) return std::nullopt;
  const auto* choice = choices->get_array().front().if_object();
  if (!choice) return std::nullopt;
  const auto* message = choice->if_contains("message");
  if (!message || !message->is_object()) return std::nullopt;

  completion result;
  // Content is null in a refusal (and in tool calls, which are not asked for).
  if (const auto* content = message->get_object().if_contains("content"); content && !content->is_null()) {
    if (!content->is_string()) return std::nullopt;
    result.text = content->get_string();
  }
  if (const auto* refusal = message->get_object().if_contains("refusal"); refusal && refusal->is_string()) {
    result.refusal = std::string(refusal->get_string());
  }
  if (const auto* reason = choice->if_contains("finish_reason"); reason && reason->is_string()) {
    result.finish_reason = reason->get_string();
  }
  if (const auto* usage = object.if_contains("usage"); usage && usage->is_object()) {
    result.usage = {llm_detail::json_count(usage->get_object(), "prompt_tokens"),
                    llm_detail::json_count(usage->get_object(), "completion_tokens")};
  }
  if (const auto* model = object.if_contains("model"); model && model->is_string()) {
    result.model = model->get_string();
  }
  return result;
}

}  // namespace

struct openai_compatible_client::impl {
  openai_compatible_client_options options;
  std::unique_ptr<llm_detail::http_endpoint> http;

  call_error invalid_request(const std::string& why) const {
    return http->error({call_verdict::fix_request, "invalid_request", std::nullopt, std::nullopt}, std::nullopt,
                       "openai_compatible_client: " + why, milliseconds{0});
  }
};

openai_compatible_client::openai_compatible_client(std::unique_ptr<impl> state) noexcept : impl_(std::move(state)) {}
openai_compatible_client::openai_compatible_client(openai_compatible_client&&) noexcept = default;
openai_compatible_client& openai_compatible_client::operator=(openai_compatible_client&&) noexcept = default;
openai_compatible_client::~openai_compatible_client() = default;

expected<openai_compatible_client, call_error> openai_compatible_client::open(openai_compatible_client_options options) {
  auto http = llm_detail::http_endpoint::open({"openai_compatible_client", options.base_url, "/chat/completions",
                                               options.api_key, options.connect_timeout, options.timeout,
                                               options.max_response_bytes, options.headers});
  if (!http) return unexpected(std::move(http.error()));
  auto state = std::make_unique<impl>();
  state->options = std::move(options);
  state->http = std::move(*http);
  return openai_compatible_client(std::move(state));
}

std::string openai_compatible_client::endpoint() const { return impl_->http->endpoint(); }

expected<completion, call_error> openai_compatible_client::complete(const llm_request& request) {
  auto body = request_body(request, impl_->options.structured_outputs);
  if (!body) return unexpected(impl_->invalid_request(body.error()));
  auto reply = impl_->http->post(*body);
  if (!reply) return unexpected(std::move(reply.error()));
  return llm_detail::answer_of(*impl_->http, *reply, request.model, parse_completion, "a chat completion");
}

expected<completion, call_error> openai_compatible_client::complete_streamed(const llm_request& request,
                                                                            stream_judge& judge) {
  record_call(judge, request);
  auto body = request_body(request, impl_->options.structured_outputs, true);
  if (!body) return unexpected(impl_->invalid_request(body.error()));
  auto reply = impl_->http->post_streamed(*body, chat_stream_format::openai_sse, judge);
  if (!reply) return unexpected(std::move(reply.error()));
  return llm_detail::streamed_answer(*impl_->http, *reply, judge, request.model, parse_completion, "a chat completion");
}

LLMDLQ_END_NAMESPACE
