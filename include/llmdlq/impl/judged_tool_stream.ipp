// SPDX-License-Identifier: MIT
// Definitions for judged_tool_stream.hpp.
#pragma once

#include <algorithm>
#include <string>
#include <utility>

#include "llmdlq/judged_tool_stream.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE judged_tool_stream::judged_tool_stream(const tool_registry& tools, chat_stream_format format,
                                                     request_context context, process_config config)
    : tools_(&tools), decoder_(format), context_(std::move(context)), config_(std::move(config)) {}

LLMDLQ_INLINE judged_tool_stream::call_state& judged_tool_stream::call_at(const tool_call_delta& first) {
  // Calls mostly come one after the other: the one in hand is the last begun.
  for (auto it = calls_.rbegin(); it != calls_.rend(); ++it) {
    if (it->call.index == first.index) return *it;
  }
  call_state& state = calls_.emplace_back();
  state.call = {first.index, first.id, first.name, {}};
  if (const tool_definition* tool = tools_->find(first.name)) {
    request_context c = detail::tool_call_context(context_, {first.name, first.id, first.index});
    process_config judged = config_;
    if (tool->nulls) judged.judging.forced_nulls = tool->nulls;
    state.judge.emplace(tool->schema, std::move(c), std::move(judged));
  } else if (!verdict_.dead) {
    verdict_.dead = true;
    verdict_.call = first.index;
    verdict_.message = detail::unknown_tool_message(first.name);
  }
  return state;
}

LLMDLQ_INLINE void judged_tool_stream::take(const tool_call_delta& delta) {
  call_state& state = call_at(delta);
  if (state.call.id.empty() && !delta.id.empty()) {  // an id that came after the call's first piece
    state.call.id = delta.id;
    if (state.judge) state.judge->context().tool_call->id = delta.id;
  }
  if (delta.arguments.empty()) return;
  if (!state.judge) {
    // Kept for the envelope of an unknown tool, up to the size past which any text is poison.
    const std::size_t room = config_.judging.limits.max_size + 1 -
                             std::min(state.call.arguments.size(), config_.judging.limits.max_size + 1);
    state.call.arguments.append(delta.arguments.substr(0, room));
    return;
  }
  const stream_verdict& v = state.judge->feed(delta.arguments);
  if (v.dead && !verdict_.dead) {
    verdict_.dead = true;
    verdict_.call = state.call.index;
    verdict_.message = v.message;
  }
}

LLMDLQ_INLINE const tool_stream_verdict& judged_tool_stream::feed(std::string_view bytes) {
  const std::string_view text = decoder_.feed(bytes);
  text_.append(text.substr(0, max_text - std::min(text_.size(), max_text)));
  for (const tool_call_delta& delta : decoder_.tool_deltas()) take(delta);
  if (decoder_.error() && !verdict_.dead) {
    verdict_.dead = true;
    verdict_.message = "the stream cannot be read: " + *decoder_.error();
  }
  if (decoder_.refusal() && !verdict_.dead) {
    verdict_.dead = true;
    verdict_.message = "the API reported a refusal: " + *decoder_.refusal();
  }
  return verdict_;
}

LLMDLQ_INLINE std::vector<judged_tool_call> judged_tool_stream::finish() {
  std::sort(calls_.begin(), calls_.end(),
            [](const call_state& a, const call_state& b) { return a.call.index < b.call.index; });
  const bool ended = decoder_.done();
  std::vector<judged_tool_call> judged;
  judged.reserve(calls_.size());
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    call_state& state = calls_[i];
    const bool last = i + 1 == calls_.size();
    std::string reason = last ? decoder_.finish_reason() : std::string();
    if (state.judge && state.judge->context().model.name.empty()) state.judge->context().model.name = decoder_.model();
    if (!state.judge) {
      request_context c = detail::tool_call_context(context_, {state.call.name, state.call.id, state.call.index});
      if (decoder_.refusal()) c.refusal = *decoder_.refusal();
      if (c.model.name.empty()) c.model.name = decoder_.model();
      judged.push_back({state.call,
                        unexpected(detail::unknown_tool_envelope(state.call.arguments, *tools_, c, config_))});
      continue;
    }
    if (decoder_.refusal()) state.judge->context().refusal = *decoder_.refusal();
    if (!ended) {
      // Closed early: the dead call says where; the last call begun was cut
      // off in its course (the calls before it had ended), unless the
      // stream broke (a server's error event): then it is judged as received.
      state.judge->cancel(decoder_.content_events());
      if (last && !state.judge->verdict().dead && !decoder_.error()) reason = "length";
    }
    state.call.arguments = std::string(state.judge->received());
    judged.push_back({state.call, state.judge->finish(reason)});
  }
  return judged;
}

LLMDLQ_END_NAMESPACE
