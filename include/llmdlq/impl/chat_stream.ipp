// SPDX-License-Identifier: MIT
// Definitions for chat_stream.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "llmdlq/chat_stream.hpp"
#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/utf8.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE std::string_view chat_stream_decoder::feed(std::string_view bytes) {
  text_.clear();
  deltas_.clear();
  for (std::size_t i = 0; i < bytes.size() && !error_ && !done_;) {
    if (skip_newline_) {
      skip_newline_ = false;
      if (bytes[i] == '\n') {
        ++i;
        continue;
      }
    }
    const std::size_t end = bytes.find_first_of("\r\n", i);
    const std::size_t stop = end == std::string_view::npos ? bytes.size() : end;
    if (line_.size() + (stop - i) > max_line_) {
      fail(fmt::format("a line of the stream is longer than {} bytes", max_line_));
      break;
    }
    line_.append(bytes.substr(i, stop - i));
    if (end == std::string_view::npos) break;
    skip_newline_ = bytes[end] == '\r';
    i = end + 1;
    take_line(line_);
    line_.clear();
  }
  return text_;
}

LLMDLQ_INLINE void chat_stream_decoder::take_line(std::string_view line) {
  if (format_ == chat_stream_format::ollama_ndjson) {
    if (line.find_first_not_of(" \t") != std::string_view::npos) {
      ++events_;
      take_event(line);
    }
    return;
  }
  // Server-sent events: a blank line dispatches the event its data lines
  // made; a line starting with `:` is a comment (a keep-alive); fields other
  // than data (event, id, retry) say nothing about the answer.
  if (line.empty()) {
    if (!data_.empty()) {
      const std::string event = std::move(data_);
      data_.clear();
      ++events_;
      if (event == "[DONE]") {
        done_ = true;
      } else {
        take_event(event);
      }
    }
    return;
  }
  if (line.front() == ':') return;
  const std::size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  if (field != "data") return;
  std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (data_.size() + value.size() + 1 > max_line_) {
    return fail(fmt::format("an event of the stream is longer than {} bytes", max_line_));
  }
  if (!data_.empty()) data_.push_back('\n');
  data_.append(value);
}

LLMDLQ_INLINE void chat_stream_decoder::take_event(std::string_view json) {
  auto doc = parser_.parse(json);
  if (!doc || !doc->root().is_object()) {
    std::string excerpt(json.substr(0, 200));
    detail::make_valid_utf8(excerpt);  // the bytes quoted may be anything, the message is text
    return fail("an event of the stream is not a JSON object: " + excerpt);
  }
  const simdjson::dom::element chunk = doc->root();
  if (auto error = chunk["error"]; !error.error()) {
    std::string_view message;
    if (error.is_string()) {
      message = error.get_string().value_unsafe();
    } else if (error["message"].get_string().get(message)) {
      message = "an error event";
    }
    return fail("the server reported an error in the stream: " + std::string(message));
  }
  std::string_view model;
  if (!chunk["model"].get_string().get(model)) model_ = std::string(model);
  switch (format_) {
    case chat_stream_format::openai_sse: take_openai(chunk); break;
    case chat_stream_format::ollama_ndjson: take_ollama(chunk); break;
    case chat_stream_format::anthropic_sse: take_anthropic(chunk); break;
  }
}

LLMDLQ_INLINE std::optional<std::uint32_t> chat_stream_decoder::begin_call(std::int64_t key, std::string_view id,
                                                                           std::string_view name) {
  if (call_slots_.size() >= max_tool_calls_) {
    fail(fmt::format("the stream makes more than {} tool calls", max_tool_calls_));
    return std::nullopt;
  }
  call_slots_.push_back({key, std::string(id), false, {}});
  const auto index = static_cast<std::uint32_t>(call_slots_.size() - 1);
  add_delta(index, id, name, {});
  return index;
}

LLMDLQ_INLINE std::optional<std::uint32_t> chat_stream_decoder::call_of(std::int64_t key) const noexcept {
  for (std::size_t i = call_slots_.size(); i-- > 0;) {  // the call in hand is mostly the last begun
    if (call_slots_[i].key == key) return static_cast<std::uint32_t>(i);
  }
  return std::nullopt;
}

LLMDLQ_INLINE void chat_stream_decoder::add_delta(std::uint32_t index, std::string_view id, std::string_view name,
                                                  std::string_view arguments) {
  if (!arguments.empty()) call_slots_[index].got_arguments = true;
  // Pieces of one call in a row (OpenAI's usual chunks) are put together.
  if (!deltas_.empty() && deltas_.back().index == index && id.empty() && name.empty()) {
    deltas_.back().arguments.append(arguments);
  } else {
    deltas_.push_back({index, std::string(id), std::string(name), std::string(arguments)});
  }
  if (!arguments.empty()) ++content_events_;
}

LLMDLQ_INLINE void chat_stream_decoder::take_openai(simdjson::dom::element chunk) {
  if (auto usage = chunk["usage"]; !usage.error() && usage.is_object()) {
    token_usage u;
    if (usage["prompt_tokens"].get_int64().get(u.prompt_tokens)) u.prompt_tokens = 0;
    if (usage["completion_tokens"].get_int64().get(u.completion_tokens)) u.completion_tokens = 0;
    usage_ = u;
  }
  simdjson::dom::array choices;
  if (chunk["choices"].get_array().get(choices)) return fail("a chunk of the stream has no choices");
  for (const simdjson::dom::element choice : choices) {
    std::int64_t index = 0;
    if (!choice["index"].get_int64().get(index) && index != 0) continue;  // the first choice is the answer
    std::string_view piece;
    if (!choice["delta"]["content"].get_string().get(piece) && !piece.empty()) {
      text_.append(piece);
      ++content_events_;
    }
    std::string_view refused;
    if (!choice["delta"]["refusal"].get_string().get(refused)) {
      if (!refusal_) refusal_.emplace();
      refusal_->append(refused);
    }
    simdjson::dom::array calls;
    if (!choice["delta"]["tool_calls"].get_array().get(calls)) {
      for (const simdjson::dom::element call : calls) {
        // A call is its index; a piece with a new id under an index already
        // used begins another call (proxies that number every call 0), and
        // a piece without an index (Gemini's compatible endpoint) is of the
        // call in hand unless its id begins one.
        std::int64_t key = -1;
        if (call["index"].get_int64().get(key) || key < 0) key = -1;
        std::string_view id, name, arguments;
        if (call["id"].get_string().get(id)) id = {};
        if (call["function"]["name"].get_string().get(name)) name = {};
        if (call["function"]["arguments"].get_string().get(arguments)) arguments = {};
        std::optional<std::uint32_t> index = key < 0 && !call_slots_.empty()
                                                 ? std::optional(static_cast<std::uint32_t>(call_slots_.size() - 1))
                                                 : call_of(key);
        if (index && !id.empty() && !call_slots_[*index].id.empty() && call_slots_[*index].id != id) index.reset();
        if (!index) {
          index = begin_call(key, id, name);
          if (!index) return;
          id = name = {};
        }
        if (!id.empty() && call_slots_[*index].id.empty()) call_slots_[*index].id = std::string(id);
        add_delta(*index, id, name, arguments);
      }
    }
    std::string_view reason;
    if (!choice["finish_reason"].get_string().get(reason)) finish_reason_ = std::string(reason);
  }
}

LLMDLQ_INLINE void chat_stream_decoder::take_anthropic(simdjson::dom::element event) {
  std::string_view type;
  if (event["type"].get_string().get(type)) return fail("an event of the stream has no type");
  // Calls are numbered in the order their tool_use blocks begin (a text
  // block before them has an index of its own); only those blocks' pieces
  // are arguments (a server tool's block, web search's, is not a call).
  std::int64_t block = 0;
  const bool indexed = !event["index"].get_int64().get(block) && block >= 0;
  if (type == "message_start") {
    std::string_view model;
    if (!event["message"]["model"].get_string().get(model)) model_ = std::string(model);
    std::int64_t input = 0;
    if (!event["message"]["usage"]["input_tokens"].get_int64().get(input)) usage_ = token_usage{input, 0};
  } else if (type == "content_block_start") {
    std::string_view block_type, id, name;
    if (!indexed) return fail("a content block of the stream has no index");
    if (event["content_block"]["type"].get_string().get(block_type) || block_type != "tool_use") return;
    if (event["content_block"]["id"].get_string().get(id)) id = {};
    if (event["content_block"]["name"].get_string().get(name)) name = {};
    const auto index = begin_call(block, id, name);
    // What the block starts with: the arguments of a call whose pieces are all empty (a tool without any).
    if (auto input = event["content_block"]["input"]; index && !input.error()) {
      call_slots_[*index].initial = simdjson::minify(input.value_unsafe());
    }
  } else if (type == "content_block_delta") {
    std::string_view delta_type, piece;
    if (event["delta"]["type"].get_string().get(delta_type)) return fail("a content block delta has no type");
    if (delta_type == "text_delta" && !event["delta"]["text"].get_string().get(piece) && !piece.empty()) {
      text_.append(piece);
      ++content_events_;
    } else if (delta_type == "input_json_delta" && !event["delta"]["partial_json"].get_string().get(piece)) {
      if (!indexed) return fail("a content block delta has no index");
      if (const auto index = call_of(block)) add_delta(*index, {}, {}, piece);
    }
  } else if (type == "content_block_stop") {
    const auto index = indexed ? call_of(block) : std::nullopt;
    if (index && !call_slots_[*index].got_arguments) {
      const std::string& initial = call_slots_[*index].initial;
      add_delta(*index, {}, {}, initial.empty() ? std::string_view("{}") : std::string_view(initial));
    }
  } else if (type == "message_delta") {
    std::string_view reason;
    if (!event["delta"]["stop_reason"].get_string().get(reason)) {
      finish_reason_ = reason == "max_tokens" ? std::string("length") : std::string(reason);
      if (reason == "refusal" && !refusal_) refusal_ = "the model refused (stop_reason: refusal)";
    }
    std::int64_t output = 0;
    if (!event["usage"]["output_tokens"].get_int64().get(output)) {
      token_usage u = usage_.value_or(token_usage{});
      u.completion_tokens = output;
      usage_ = u;
    }
  } else if (type == "message_stop") {
    done_ = true;
  }
}

LLMDLQ_INLINE void chat_stream_decoder::take_ollama(simdjson::dom::element chunk) {
  std::string_view piece;
  if (!chunk["message"]["content"].get_string().get(piece) && !piece.empty()) {
    text_.append(piece);
    ++content_events_;
  }
  simdjson::dom::array calls;
  if (!chunk["message"]["tool_calls"].get_array().get(calls)) {
    for (const simdjson::dom::element call : calls) {
      std::string_view id, name;
      if (call["id"].get_string().get(id)) id = {};
      if (call["function"]["name"].get_string().get(name)) name = {};
      std::string arguments;
      if (auto a = call["function"]["arguments"]; !a.error()) {
        std::string_view s;
        arguments = a.get_string().get(s) ? simdjson::minify(a.value_unsafe()) : std::string(s);
      }
      const auto index = begin_call(-1, id, name);
      if (!index) return;
      add_delta(*index, {}, {}, arguments);
    }
  }
  bool finished = false;
  if (chunk["done"].get_bool().get(finished)) return fail("a line of the stream is not a chat chunk (no done)");
  if (!finished) return;
  done_ = true;
  std::string_view reason;
  finish_reason_ = chunk["done_reason"].get_string().get(reason) ? std::string("stop") : std::string(reason);
  token_usage u;
  if (chunk["prompt_eval_count"].get_int64().get(u.prompt_tokens)) u.prompt_tokens = 0;
  if (chunk["eval_count"].get_int64().get(u.completion_tokens)) u.completion_tokens = 0;
  usage_ = u;
}

LLMDLQ_END_NAMESPACE
