// SPDX-License-Identifier: MIT
// Sorting LLM call outcomes into retry-later and dead-letter.
#include <llmdlq/call_outcome.hpp>

#include "catch.hpp"

namespace call_outcome_test {

using llmdlq::call_verdict;

namespace {

llmdlq::call_decision at(int status, std::string_view body = {}) {
  llmdlq::call_outcome outcome;
  outcome.http_status = status;
  outcome.body = body;
  return llmdlq::classify_call(outcome);
}

}  // namespace

TEST_CASE("infrastructure problems keep the message", "[transport]") {
  llmdlq::call_outcome timeout;
  timeout.timed_out = true;
  CHECK(llmdlq::classify_call(timeout).verdict == call_verdict::retry_later);
  CHECK(llmdlq::classify_call(timeout).reason == "timeout");
  llmdlq::call_outcome refused;
  refused.connection_failed = true;
  CHECK(llmdlq::classify_call(refused).reason == "network");
  CHECK(llmdlq::classify_call({}).verdict == call_verdict::retry_later);

  llmdlq::call_outcome limited;
  limited.http_status = 429;
  limited.retry_after = std::chrono::seconds(20);
  const auto d = llmdlq::classify_call(limited);
  CHECK(d.verdict == call_verdict::retry_later);
  CHECK(d.reason == "rate_limited");
  CHECK(d.retry_after == std::chrono::seconds(20));

  CHECK(at(503).reason == "server_error");
  CHECK(at(529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})").reason == "overloaded");
  CHECK(at(500, R"({"error":"model is overloaded"})").reason == "overloaded");
  CHECK(at(401).reason == "auth");
  CHECK(at(429, R"({"error":{"code":"insufficient_quota"}})").reason == "quota");
  CHECK(at(400, R"({"error":{"status":"RESOURCE_EXHAUSTED"}})").verdict == call_verdict::retry_later);
}

TEST_CASE("requests that cannot succeed as they stand are dead-lettered", "[transport]") {
  auto d = at(400, R"({"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}})");
  CHECK(d.verdict == call_verdict::dead_letter);
  CHECK(d.reason == "context_length_exceeded");
  CHECK(d.category == llmdlq::failure_category::poison);
  d = at(400, R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens"}})");
  CHECK(d.reason == "context_length_exceeded");
  d = at(400, R"({"error":{"code":"content_filter","message":"The response was filtered"}})");
  CHECK(d.reason == "content_filtered");
  CHECK(d.category == llmdlq::failure_category::refusal);
  CHECK(at(422, R"({"detail":"bad field"})").reason == "invalid_request");
}

TEST_CASE("a request the provider refuses for its own sake (schema, parameter, model) is fix_request", "[transport]") {
  const char* refusals[] = {
      // OpenAI: the parameter at fault, named.
      R"({"error":{"message":"Invalid schema for response_format 'response': In context=(), 'minLength' is not permitted.","type":"invalid_request_error","param":"response_format","code":null}})",
      R"({"error":{"message":"Unsupported value: 'temperature' does not support 0.2 with this model.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}})",
      // Anthropic, Gemini, Ollama: the part of the request named in the message.
      R"({"type":"error","error":{"type":"invalid_request_error","message":"output_format.schema: For 'number' type, property 'minimum' is not supported"}})",
      R"({"error":{"code":400,"message":"Invalid JSON payload received. Unknown name "minLength" at 'generation_config.response_schema.properties[0].value'","status":"INVALID_ARGUMENT"}})",
      R"({"error":"invalid format: json: cannot unmarshal string into Go value"})",
  };
  for (const char* body : refusals) {
    INFO(body);
    const auto d = at(400, body);
    CHECK(d.verdict == call_verdict::fix_request);
    CHECK(d.reason == "request_rejected");
    CHECK_FALSE(d.category.has_value());
  }
  CHECK(at(404, R"({"error":{"message":"The model 'gpt-9' does not exist","code":"model_not_found"}})").verdict ==
        call_verdict::fix_request);
  // The message's own faults stay dead letters, even where the body names a parameter.
  CHECK(
      at(400,
         R"({"error":{"message":"This model's maximum context length is 8192 tokens","param":"messages","code":"context_length_exceeded"}})")
          .verdict == call_verdict::dead_letter);
  CHECK(at(400, R"({"error":{"message":"Invalid 'messages[1].content': string too long.","param":"messages"}})")
            .verdict == call_verdict::dead_letter);
}

TEST_CASE("a success goes on to be judged, whatever its body says", "[transport]") {
  const auto d = at(200, R"({"summary": "explains rate limits and quota exceeded errors"})");
  CHECK(d.verdict == call_verdict::proceed);
  CHECK(d.reason == "ok");
}

}  // namespace call_outcome_test
