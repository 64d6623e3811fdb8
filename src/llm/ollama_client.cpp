// SPDX-License-Identifier: MIT
// ollama_client on http_endpoint (libcurl) and Boost.JSON.
#include "llmdlq/config.hpp"
#include "llmdlq/llm/ollama_client.hpp"

#include <cmath>

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

expected<std::string, std::string> request_body(const llm_request& request, bool stream) {
  auto body = llm_detail::chat_body(request);
  if (!body) return unexpected(std::move(body.error()));
  (*body)["stream"] = stream;
  boost::json::object options;
  if (request.max_tokens) options["num_predict"] = *request.max_tokens;
  if (request.temperature) options["temperature"] = *request.temperature;
  if (request.seed) options["seed"] = *request.seed;
  if (!options.empty()) (*body)["options"] = std::move(options);
  auto schema = llm_detail::schema_of(request);
  if (!schema) return unexpected(std::move(schema.error()));
  // A schema Ollama's grammar cannot hold to (lowered_schema::strict) asks for JSON alone.
  if (*schema) (*body)["format"] = request.strict ? std::move(**schema) : boost::json::value("json");
  return boost::json::serialize(*body);
}

// A non-streamed /api/chat answer; nothing when the body is not one.
std::optional<completion> parse_answer(std::string_view body) {
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(body, ec);
  if (ec || !parsed.is_object()) return std::nullopt;
  const auto& answer = parsed.get_object();
  const auto* message = answer.if_contains("message");
  if (!message || !message->is_object()) return std::nullopt;
  const auto* content = message->get_object().if_contains("content");
  if (!content || !content->is_string()) return std::nullopt;
  completion result;
  result.text = content->get_string();
  const auto* reason = answer.if_contains("done_reason");
  result.finish_reason = reason && reason->is_string() ? std::string(reason->get_string()) : "stop";
  result.usage = {llm_detail::json_count(answer, "prompt_eval_count"), llm_detail::json_count(answer, "eval_count")};
  if (const auto* model = answer.if_contains("model"); model && model->is_string()) result.model = model->get_string();
  return result;
}

}  // namespace

struct ollama_client::impl {
  std::unique_ptr<llm_detail::http_endpoint> http;

  call_error invalid_request(const std::string& why) const {
    return http->error({call_verdict::fix_request, "invalid_request", std::nullopt, std::nullopt}, std::nullopt,
                       "ollama_client: " + why, milliseconds{0});
  }
};

ollama_client::ollama_client(std::unique_ptr<impl> state) noexcept : impl_(std::move(state)) {}
ollama_client::ollama_client(ollama_client&&) noexcept = default;
ollama_client& ollama_client::operator=(ollama_client&&) noexcept = default;
ollama_client::~ollama_client() = default;

expected<ollama_client, call_error> ollama_client::open(ollama_client_options options) {
  auto http = llm_detail::http_endpoint::open({"ollama_client", options.base_url, "/api/chat", options.api_key,
                                               options.connect_timeout, options.timeout, options.max_response_bytes,
                                               options.headers});
  if (!http) return unexpected(std::move(http.error()));
  auto state = std::make_unique<impl>();
  state->http = std::move(*http);
  return ollama_client(std::move(state));
}

std::string ollama_client::endpoint() const { return impl_->http->endpoint(); }

expected<completion, call_error> ollama_client::complete(const llm_request& request) {
  auto body = request_body(request, false);
  if (!body) return unexpected(impl_->invalid_request(body.error()));
  auto reply = impl_->http->post(*body);
  if (!reply) return unexpected(std::move(reply.error()));
  return llm_detail::answer_of(*impl_->http, *reply, request.model, parse_answer, "a chat answer");
}

expected<completion, call_error> ollama_client::complete_streamed(const llm_request& request, stream_judge& judge) {
  record_call(judge, request);
  auto body = request_body(request, true);
  if (!body) return unexpected(impl_->invalid_request(body.error()));
  auto reply = impl_->http->post_streamed(*body, chat_stream_format::ollama_ndjson, judge);
  if (!reply) return unexpected(std::move(reply.error()));
  return llm_detail::streamed_answer(*impl_->http, *reply, judge, request.model, parse_answer, "a chat answer");
}

LLMDLQ_END_NAMESPACE
