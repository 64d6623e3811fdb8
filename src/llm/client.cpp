// SPDX-License-Identifier: MIT
// llm_client's default streamed call, for clients that do not stream, and
// what every streamed call records of itself.
#include "llmdlq/config.hpp"
#include "llmdlq/llm/client.hpp"
#include "llmdlq/stream_judge.hpp"

LLMDLQ_BEGIN_NAMESPACE

void record_call(stream_judge& judge, const llm_request& request) {
  model_reference& model = judge.context().model;
  if (model.name.empty()) model.name = request.model;
  if (!model.max_tokens) model.max_tokens = request.max_tokens;
  if (!model.temperature) model.temperature = request.temperature;
  if (!model.seed) model.seed = request.seed;
}

expected<completion, call_error> llm_client::complete_streamed(const llm_request& request, stream_judge& judge) {
  record_call(judge, request);
  auto answer = complete(request);
  if (answer) judge.feed(answer->text);
  return answer;
}

LLMDLQ_END_NAMESPACE
