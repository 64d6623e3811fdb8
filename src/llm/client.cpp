// SPDX-License-Identifier: MIT
// llm_client's default streamed call, for clients that do not stream.
#include "llmdlq/config.hpp"
#include "llmdlq/llm/client.hpp"
#include "llmdlq/stream_judge.hpp"

LLMDLQ_BEGIN_NAMESPACE

expected<completion, call_error> llm_client::complete_streamed(const llm_request& request, stream_judge& judge) {
  auto answer = complete(request);
  if (answer) judge.feed(answer->text);
  return answer;
}

LLMDLQ_END_NAMESPACE
