// SPDX-License-Identifier: MIT
// A host of llmdlq::llm: a call to a port where no server listens is a
// retry_later error (and does not crash).
#include <cstdio>

#include <llmdlq/llm/openai_compatible_client.hpp>

int main() {
  llmdlq::openai_compatible_client_options options;
  options.base_url = "http://127.0.0.1:1/v1";
  options.connect_timeout = std::chrono::seconds(2);
  auto client = llmdlq::openai_compatible_client::open(options);
  if (!client) return 1;
  const auto answer = client->complete({.model = "m", .messages = {{"user", "hello"}}});
  if (answer || answer.error().decision.verdict != llmdlq::call_verdict::retry_later) return 2;
  std::printf("llmdlq::llm works\n");
  return 0;
}
