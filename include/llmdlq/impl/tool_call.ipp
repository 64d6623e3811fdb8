// SPDX-License-Identifier: MIT
// Definitions for tool_call.hpp: replies read in each API's shape, and each
// call judged against its tool.
#pragma once

#include <string>
#include <utility>

#include <fmt/format.h>

#include "llmdlq/detail/json/utf8.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/tool_call.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE std::string_view to_string(chat_api api) noexcept {
  switch (api) {
    case chat_api::openai: return "openai";
    case chat_api::anthropic: return "anthropic";
    case chat_api::ollama: return "ollama";
  }
  return "openai";
}

LLMDLQ_INLINE std::optional<chat_api> chat_api_from(std::string_view name) noexcept {
  for (const auto api : {chat_api::openai, chat_api::anthropic, chat_api::ollama}) {
    if (name == to_string(api)) return api;
  }
  return std::nullopt;
}

namespace detail::tools {

// A string member, or empty; also of a value that is missing (a lookup that failed).
inline std::string_view string_at(simdjson::simdjson_result<simdjson::dom::element> e, std::string_view key) {
  std::string_view s;
  return e[key].get_string().get(s) ? std::string_view() : s;
}
inline std::string_view string_at(simdjson::dom::element e, std::string_view key) {
  std::string_view s;
  return e[key].get_string().get(s) ? std::string_view() : s;
}

// Arguments as text: a string as it is (OpenAI's), an object as its JSON (Anthropic's input, Ollama's).
inline std::string arguments_text(simdjson::dom::element arguments) {
  std::string_view s;
  if (!arguments.get_string().get(s)) return std::string(s);
  return simdjson::minify(arguments);
}

inline void read_openai(simdjson::dom::element body, tool_call_reply& reply, std::vector<tool_call>& calls) {
  simdjson::dom::array choices;
  if (body["choices"].get_array().get(choices) || choices.size() == 0) return;
  const simdjson::dom::element choice = choices.at(0).value_unsafe();
  reply.finish_reason = std::string(string_at(choice, "finish_reason"));
  simdjson::dom::element message;
  if (choice["message"].get(message)) return;
  reply.text = std::string(string_at(message, "content"));
  std::string_view refusal;
  if (!message["refusal"].get_string().get(refusal)) reply.refusal = std::string(refusal);
  simdjson::dom::array list;
  if (message["tool_calls"].get_array().get(list)) return;
  for (const simdjson::dom::element c : list) {
    tool_call call;
    call.id = std::string(string_at(c, "id"));
    call.name = std::string(string_at(c["function"], "name"));
    if (auto arguments = c["function"]["arguments"]; !arguments.error())
      call.arguments = arguments_text(arguments.value_unsafe());
    calls.push_back(std::move(call));
  }
}

inline void read_anthropic(simdjson::dom::element body, tool_call_reply& reply, std::vector<tool_call>& calls) {
  reply.finish_reason = std::string(string_at(body, "stop_reason"));
  if (reply.finish_reason == "max_tokens") reply.finish_reason = "length";
  if (reply.finish_reason == "refusal") reply.refusal = "the model refused (stop_reason: refusal)";
  simdjson::dom::array blocks;
  if (body["content"].get_array().get(blocks)) return;
  for (const simdjson::dom::element block : blocks) {
    const std::string_view type = string_at(block, "type");
    if (type == "text") reply.text += string_at(block, "text");
    if (type != "tool_use") continue;
    tool_call call;
    call.id = std::string(string_at(block, "id"));
    call.name = std::string(string_at(block, "name"));
    if (auto input = block["input"]; !input.error()) call.arguments = arguments_text(input.value_unsafe());
    calls.push_back(std::move(call));
  }
}

inline void read_ollama(simdjson::dom::element body, tool_call_reply& reply, std::vector<tool_call>& calls) {
  reply.finish_reason = std::string(string_at(body, "done_reason"));
  simdjson::dom::element message;
  if (body["message"].get(message)) return;
  reply.text = std::string(string_at(message, "content"));
  simdjson::dom::array list;
  if (message["tool_calls"].get_array().get(list)) return;
  for (const simdjson::dom::element c : list) {
    tool_call call;
    call.id = std::string(string_at(c, "id"));
    call.name = std::string(string_at(c["function"], "name"));
    if (auto arguments = c["function"]["arguments"]; !arguments.error())
      call.arguments = arguments_text(arguments.value_unsafe());
    calls.push_back(std::move(call));
  }
}

// Whether `body` has the members a reply of `api` always has.
inline bool has_reply_shape(simdjson::dom::element body, chat_api api) {
  switch (api) {
    case chat_api::openai: return !body["choices"].get_array().error();
    case chat_api::anthropic: return !body["content"].get_array().error();
    case chat_api::ollama: return !body["message"].get_object().error();
  }
  return false;
}

}  // namespace detail::tools

LLMDLQ_INLINE expected<tool_call_reply, reply_error> read_tool_calls(std::string_view body, chat_api api,
                                                                     std::size_t max_calls) {
  parse_options limits;
  limits.max_size = std::size_t{64} << 20;
  json_parser parser(limits);
  auto doc = parser.parse(body);
  if (!doc) return unexpected(reply_error{"the reply is not JSON: " + doc.error().message});
  const simdjson::dom::element root = doc->root();
  if (!root.is_object()) return unexpected(reply_error{"the reply is not a JSON object"});
  if (auto error = root["error"]; !error.error()) {
    std::string message = error.is_string() ? std::string(error.get_string().value_unsafe())
                                            : std::string(detail::tools::string_at(error, "message"));
    detail::make_valid_utf8(message);
    return unexpected(reply_error{"the API answered with an error: " + message});
  }
  if (!detail::tools::has_reply_shape(root, api)) {
    return unexpected(reply_error{fmt::format("the body is not a reply of {}'s chat API", to_string(api))});
  }
  tool_call_reply reply;
  reply.id = std::string(detail::tools::string_at(root, "id"));
  reply.model = std::string(detail::tools::string_at(root, "model"));
  std::vector<tool_call> calls;
  switch (api) {
    case chat_api::openai: detail::tools::read_openai(root, reply, calls); break;
    case chat_api::anthropic: detail::tools::read_anthropic(root, reply, calls); break;
    case chat_api::ollama: detail::tools::read_ollama(root, reply, calls); break;
  }
  if (calls.size() > max_calls) {
    return unexpected(reply_error{
        fmt::format("the reply makes {} tool calls, over the limit of {}", calls.size(), max_calls)});
  }
  for (std::size_t i = 0; i < calls.size(); ++i) calls[i].index = static_cast<std::uint32_t>(i);
  reply.calls = std::move(calls);
  token_usage usage;
  simdjson::dom::element u;
  if (!root["usage"].get(u) && u.is_object()) {
    if (u["prompt_tokens"].get_int64().get(usage.prompt_tokens) &&
        u["input_tokens"].get_int64().get(usage.prompt_tokens))
      usage.prompt_tokens = 0;
    if (u["completion_tokens"].get_int64().get(usage.completion_tokens) &&
        u["output_tokens"].get_int64().get(usage.completion_tokens))
      usage.completion_tokens = 0;
    reply.usage = usage;
  } else if (api == chat_api::ollama && !root["eval_count"].get_int64().get(usage.completion_tokens)) {
    if (root["prompt_eval_count"].get_int64().get(usage.prompt_tokens)) usage.prompt_tokens = 0;
    reply.usage = usage;
  }
  return reply;
}

namespace detail {

LLMDLQ_INLINE request_context tool_call_context(const request_context& context, const tool_call_reference& call) {
  request_context c = context;
  c.tool_call = call;
  if (!c.idempotency_key.empty()) {
    c.idempotency_key += "/tool_calls/";
    c.idempotency_key += call.index ? std::to_string(*call.index) : call.id;
  }
  return c;
}

LLMDLQ_INLINE std::string unknown_tool_message(std::string_view name) {
  if (name.empty()) return "the call names no tool";
  std::string named(name.substr(0, 129));
  if (named.size() > 128) {
    named.resize(128);
    named += "…";
  }
  make_valid_utf8(named);  // the cut may split a character
  for (char& c : named) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';  // the model's words, quoted in a message
  }
  return fmt::format("the call names the tool '{}', which is not registered", named);
}

LLMDLQ_INLINE envelope unknown_tool_envelope(std::string_view arguments, const tool_registry& tools,
                                             const request_context& call_context, const process_config& config) {
  // Poison in the arguments ranks above the unknown name, as it does above every failure.
  static const schema anything = *schema::compile("true");
  process_config uncounted = config;
  uncounted.metrics.reset();
  if (auto judged = process_llm_response(arguments, anything, call_context, uncounted);
      !judged && judged.error().failure.category == failure_category::poison) {
    if (config.metrics) config.metrics->count_dead_letter(judged.error(), {});
    return std::move(judged.error());
  }
  std::string message = unknown_tool_message(call_context.tool_call ? call_context.tool_call->name : "");
  message += tools.empty() ? std::string("; no tool is") : "; the tools are " + tools.names();
  validation_error error{"", "", "tool", message};
  envelope e = make_envelope({.category = failure_category::schema, .message = message, .errors = {std::move(error)}},
                             arguments, call_context, config);
  if (config.metrics) config.metrics->count_dead_letter(e, {});
  return e;
}

}  // namespace detail

LLMDLQ_INLINE expected<accepted, envelope> process_tool_call(const tool_call& call, const tool_registry& tools,
                                                             const request_context& context,
                                                             const process_config& config) {
  const tool_call_reference reference{call.name, call.id, call.index};
  const tool_definition* tool = tools.find(call.name);
  if (!tool) {
    return unexpected(detail::unknown_tool_envelope(call.arguments, tools,
                                                    detail::tool_call_context(context, reference), config));
  }
  // The context naming the call is made only for a letter: an accepted call costs what an answer does.
  const auto letter_context = [&] { return detail::tool_call_context(context, reference); };
  if (!tool->nulls || tool->nulls == config.judging.forced_nulls) {
    return detail::process_response(call.arguments, tool->schema, context, config, {}, letter_context);
  }
  process_config with_nulls = config;
  with_nulls.judging.forced_nulls = tool->nulls;
  return detail::process_response(call.arguments, tool->schema, context, with_nulls, {}, letter_context);
}

LLMDLQ_INLINE std::vector<judged_tool_call> process_tool_calls(const tool_call_reply& reply, const tool_registry& tools,
                                                               const request_context& context,
                                                               const process_config& config) {
  request_context shared = context;
  if (reply.refusal && !shared.refusal) shared.refusal = reply.refusal;
  if (shared.model.name.empty()) shared.model.name = reply.model;
  const std::string last_reason = shared.finish_reason.empty() ? reply.finish_reason : shared.finish_reason;
  shared.finish_reason.clear();
  std::vector<judged_tool_call> judged;
  judged.reserve(reply.calls.size());
  for (std::size_t i = 0; i < reply.calls.size(); ++i) {
    if (i + 1 == reply.calls.size()) shared.finish_reason = last_reason;
    judged.push_back({reply.calls[i], process_tool_call(reply.calls[i], tools, shared, config)});
  }
  return judged;
}

LLMDLQ_END_NAMESPACE
