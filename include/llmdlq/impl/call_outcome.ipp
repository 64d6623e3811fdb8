// SPDX-License-Identifier: MIT
// Definitions for call_outcome.hpp.
#pragma once

#include <algorithm>
#include <initializer_list>

#include <boost/json/parse.hpp>

#include "llmdlq/call_outcome.hpp"
#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail {

inline bool mentions(std::string_view body, std::initializer_list<std::string_view> needles) {
  std::string lower(body.substr(0, 64u << 10));
  std::transform(lower.begin(), lower.end(), lower.begin(), ascii_lower);
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return lower.find(n) != std::string::npos; });
}

// Whether a refusal's body blames the request rather than its content:
// OpenAI names the parameter at fault (`"param": "response_format"`; a
// prompt too long names "messages", and is the message's fault); the
// others say which part of the request they could not take.
inline bool blames_request(std::string_view body) {
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(body.substr(0, 64u << 10), ec);
  if (!ec) {
    if (const auto* o = v.if_object()) {
      if (const auto* e = o->if_contains("error"); e && e->is_object()) {
        if (const auto* p = e->get_object().if_contains("param"); p && p->is_string() && !p->get_string().empty()) {
          return p->get_string() != "messages" && p->get_string() != "input";
        }
      }
    }
  }
  return mentions(body,
                  {"invalid schema", "response_format", "json_schema", "output_format", "input_schema",
                   "response_schema", "responsejsonschema", "response_json_schema", "generation_config",
                   "generationconfig", "unsupported_parameter", "unsupported_value", "unknown name", "invalid format",
                   "tool_choice", "tools.", "unknown parameter", "unknown_parameter", "unrecognized request argument"});
}

}  // namespace detail

LLMDLQ_INLINE call_decision classify_call(const call_outcome& outcome) {
  using v = call_verdict;
  auto later = [&](std::string reason) {
    return call_decision{v::retry_later, std::move(reason), std::nullopt, outcome.retry_after};
  };
  auto dead = [](std::string reason, failure_category category) {
    return call_decision{v::dead_letter, std::move(reason), category, std::nullopt};
  };
  if (outcome.timed_out) return later("timeout");
  if (outcome.connection_failed || !outcome.http_status) return later("network");

  const int status = *outcome.http_status;
  // A success is judged on its content, whatever words its body holds.
  if (status >= 200 && status < 300) return {v::proceed, "ok", std::nullopt, std::nullopt};
  const std::string_view body = outcome.body;
  if (detail::mentions(body, {"insufficient_quota", "quota exceeded", "billing"})) return later("quota");
  if (status == 429 || detail::mentions(body, {"rate_limit", "rate limit", "resource_exhausted"})) {
    return later("rate_limited");
  }
  if (status == 529 || detail::mentions(body, {"overloaded"})) return later("overloaded");
  if (status >= 500) return later("server_error");
  if (status == 408 || status == 425) return later("timeout");
  if (status == 401 || status == 403) return later("auth");
  if (detail::mentions(body, {"context_length_exceeded", "maximum context length", "context window",
                              "prompt is too long", "too many tokens", "input is too long"})) {
    return dead("context_length_exceeded", failure_category::poison);
  }
  if (detail::mentions(body, {"content_filter", "content_policy", "content policy", "safety", "blocked"})) {
    return dead("content_filtered", failure_category::refusal);
  }
  if ((status == 400 || status == 422) && detail::blames_request(body)) {
    return {v::fix_request, "request_rejected", std::nullopt, std::nullopt};
  }
  if (status == 404) return {v::fix_request, "not_found", std::nullopt, std::nullopt};  // no such model or path
  if (status >= 400) return dead("invalid_request", failure_category::poison);
  return later("unexpected_status");
}

LLMDLQ_END_NAMESPACE
