// SPDX-License-Identifier: MIT
// openai_compatible_client against a real HTTP server on loopback: what it
// sends, what it reads back, one HTTP call per complete(), and how each
// failure is sorted.
#include <llmdlq/llm/openai_compatible_client.hpp>

#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("openai_compatible_client against a scripted HTTP server", "[llm]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#  include <limits>
#  include <memory>

#  include "llm/scripted_server.hpp"

namespace openai_client_test {

namespace {

using namespace std::chrono_literals;
using llmdlq::call_verdict;
using llmdlq::test::scripted_reply;
using llmdlq::test::scripted_server;

constexpr const char* api_key = "sk-test-0123456789abcdef";

llmdlq::openai_compatible_client_options options_for(const scripted_server& server) {
  llmdlq::openai_compatible_client_options options;
  options.base_url = server.base_url();
  options.api_key = api_key;
  options.connect_timeout = 2s;
  options.timeout = 5s;
  return options;
}

llmdlq::openai_compatible_client open_client(llmdlq::openai_compatible_client_options options) {
  auto client = llmdlq::openai_compatible_client::open(std::move(options));
  if (!client) FAIL("open: " << client.error().message);
  return std::move(*client);
}

llmdlq::llm_request simple_request() {
  llmdlq::llm_request request;
  request.model = "gpt-test";
  request.messages = {{"system", "Answer in JSON."}, {"user", "Total of 1 and 2?"}};
  return request;
}

// Fails the test with the completion's text when the call succeeded.
llmdlq::call_error failure_of(const llmdlq::expected<llmdlq::completion, llmdlq::call_error>& result) {
  if (result) FAIL("expected an error, got the completion: " << result->text);
  return result.error();
}

}  // namespace

TEST_CASE("openai_compatible_client reads the content, finish reason, usage and model", "[llm]") {
  // The server holds its answer 150 ms by its own clock.
  scripted_server server(
      {llmdlq::test::delayed(llmdlq::test::chat_completion(R"({"total": 3})", "stop", 12, 7, "gpt-test-2024"), 150ms)});
  REQUIRE(server.listening());
  auto client = open_client(options_for(server));

  const auto called = std::chrono::steady_clock::now();
  auto answer = client.complete(simple_request());
  const auto around_the_call = std::chrono::steady_clock::now() - called;
  REQUIRE(answer.has_value());
  CHECK(answer->text == R"({"total": 3})");
  CHECK(answer->finish_reason == "stop");
  CHECK_FALSE(answer->refusal.has_value());
  CHECK(answer->usage == llmdlq::token_usage{12, 7});
  CHECK(answer->model == "gpt-test-2024");
  // The latency covers the server's wait, and no more than the call took.
  CHECK(answer->latency >= 150ms);
  CHECK(answer->latency <= around_the_call);  // check-tests: allow duration-upper-bound timed around the call
  CHECK(client.endpoint() == server.base_url());
}

TEST_CASE("openai_compatible_client: a refusal and a cut-off answer are completions", "[llm]") {
  scripted_server server({llmdlq::test::refusal("I can't help with that."),
                          llmdlq::test::cut_off_completion(R"({"items": [1, 2)")});
  REQUIRE(server.listening());
  auto client = open_client(options_for(server));

  auto refused = client.complete(simple_request());
  REQUIRE(refused.has_value());
  CHECK(refused->text.empty());
  CHECK(refused->refusal == "I can't help with that.");

  auto cut = client.complete(simple_request());
  REQUIRE(cut.has_value());
  CHECK(cut->finish_reason == "length");
  CHECK(cut->text == R"({"items": [1, 2)");
}

TEST_CASE("openai_compatible_client sends the request as it is given", "[llm]") {
  scripted_server server({llmdlq::test::chat_completion("{}"), llmdlq::test::chat_completion("{}"),
                          llmdlq::test::chat_completion("{}")});
  REQUIRE(server.listening());
  auto options = options_for(server);
  options.base_url += "/";  // a trailing slash is not doubled
  options.headers = {{"OpenAI-Organization", "org-test"}};
  auto client = open_client(options);

  auto full = simple_request();
  full.max_tokens = 256;
  full.temperature = 0.25;
  full.seed = 42;
  full.json_schema = R"({"type":"object","properties":{"total":{"type":"integer"}},"required":["total"]})";
  REQUIRE(client.complete(full).has_value());
  REQUIRE(client.complete(simple_request()).has_value());

  const auto requests = server.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].method == "POST");
  CHECK(requests[0].path == "/v1/chat/completions");
  CHECK(requests[0].header("Content-Type") == "application/json");
  CHECK(requests[0].header("OpenAI-Organization") == "org-test");
  const auto body = requests[0].json();
  REQUIRE(body.is_object());
  CHECK(body.at("model") == "gpt-test");
  CHECK(body.at("messages") == boost::json::parse(R"([{"role":"system","content":"Answer in JSON."},
                                                       {"role":"user","content":"Total of 1 and 2?"}])"));
  CHECK(body.at("max_tokens") == 256);
  CHECK(body.at("temperature") == 0.25);
  CHECK(body.at("seed") == 42);
  CHECK(body.at("response_format") ==
        boost::json::parse(R"({"type":"json_schema","json_schema":{"name":"response","strict":true,
          "schema":{"type":"object","properties":{"total":{"type":"integer"}},"required":["total"]}}})"));

  // Only what the request sets is sent.
  const auto minimal = requests[1].json();
  REQUIRE(minimal.is_object());
  for (const char* absent : {"max_tokens", "temperature", "seed", "response_format"}) {
    CHECK_FALSE(minimal.as_object().contains(absent));
  }

  // Without structured outputs the schema stays home.
  options.structured_outputs = false;
  auto plain = open_client(options);
  REQUIRE(plain.complete(full).has_value());
  CHECK_FALSE(server.requests()[2].json().as_object().contains("response_format"));
}

TEST_CASE("openai_compatible_client sends the API key only as the Authorization header", "[llm]") {
  // A 401 body that echoes the key, as some servers do.
  scripted_server server({llmdlq::test::chat_completion("{}"),
                          llmdlq::test::api_error(401, "invalid_request_error", "invalid_api_key",
                                                  std::string("Incorrect API key provided: ") + api_key)});
  REQUIRE(server.listening());
  auto client = open_client(options_for(server));
  REQUIRE(client.complete(simple_request()).has_value());
  const auto error = failure_of(client.complete(simple_request()));

  const auto request = server.requests().at(0);
  CHECK(request.header("Authorization") == std::string("Bearer ") + api_key);
  for (const auto& [name, value] : request.headers) {
    if (name != "Authorization") CHECK(value.find(api_key) == std::string::npos);
  }
  CHECK(request.body.find(api_key) == std::string::npos);
  CHECK(error.http_status == 401);
  CHECK(error.decision.verdict == call_verdict::retry_later);
  CHECK(error.decision.reason == "auth");
  CHECK(error.message.find("Incorrect API key provided") != std::string::npos);
  CHECK(error.message.find(api_key) == std::string::npos);
  CHECK(client.endpoint().find(api_key) == std::string::npos);

  // No key, no header (llama.cpp, Ollama).
  scripted_server local({llmdlq::test::chat_completion("{}")});
  REQUIRE(local.listening());
  auto options = options_for(local);
  options.api_key.clear();
  auto keyless = open_client(options);
  REQUIRE(keyless.complete(simple_request()).has_value());
  CHECK_FALSE(local.requests().at(0).header("Authorization").has_value());
}

TEST_CASE("openai_compatible_client makes one HTTP call per complete(), whatever the outcome", "[llm]") {
  scripted_server server({llmdlq::test::rate_limited("1"), llmdlq::test::server_error(),
                          llmdlq::test::unavailable(),
                          llmdlq::test::delayed(llmdlq::test::chat_completion("{}"), 3s)});
  REQUIRE(server.listening());
  auto options = options_for(server);
  options.timeout = 300ms;
  auto client = open_client(options);

  const char* reasons[] = {"rate_limited", "server_error", "server_error", "timeout"};
  for (std::size_t call = 0; call < 4; ++call) {
    const auto error = failure_of(client.complete(simple_request()));
    CHECK(error.decision.verdict == call_verdict::retry_later);
    CHECK(error.decision.reason == reasons[call]);
    CHECK(server.calls() == call + 1);
  }
}

TEST_CASE("openai_compatible_client follows no redirect", "[llm]") {
  scripted_server elsewhere({llmdlq::test::chat_completion("{}")});
  REQUIRE(elsewhere.listening());
  scripted_reply redirect{307, "", {{"Location", elsewhere.base_url() + "/chat/completions"}}};
  scripted_server server({redirect});
  REQUIRE(server.listening());
  auto client = open_client(options_for(server));

  const auto error = failure_of(client.complete(simple_request()));
  CHECK(error.http_status == 307);
  CHECK(error.decision.verdict == call_verdict::retry_later);
  CHECK(server.calls() == 1);
  CHECK(elsewhere.calls() == 0);
}

TEST_CASE("openai_compatible_client hands on the server's Retry-After", "[llm]") {
  scripted_server server({llmdlq::test::rate_limited("7"), llmdlq::test::unavailable(llmdlq::test::http_date(120s)),
                          llmdlq::test::rate_limited("soon")});
  REQUIRE(server.listening());
  auto client = open_client(options_for(server));

  const auto seconds = failure_of(client.complete(simple_request()));
  CHECK(seconds.http_status == 429);
  CHECK(seconds.decision.retry_after == std::chrono::milliseconds(7000));

  const auto date = failure_of(client.complete(simple_request()));
  CHECK(date.http_status == 503);
  REQUIRE(date.decision.retry_after.has_value());
  CHECK(*date.decision.retry_after > 100s);
  CHECK(*date.decision.retry_after <= 121s);

  const auto unreadable = failure_of(client.complete(simple_request()));
  CHECK(unreadable.decision.reason == "rate_limited");
  CHECK_FALSE(unreadable.decision.retry_after.has_value());
}

TEST_CASE("openai_compatible_client: no server and no answer in time are retry_later", "[llm]") {
  int closed_port = 0;
  {
    scripted_server gone;
    REQUIRE(gone.listening());
    closed_port = gone.port();
  }
  llmdlq::openai_compatible_client_options options;
  options.base_url = "http://127.0.0.1:" + std::to_string(closed_port) + "/v1";
  options.api_key = api_key;
  auto client = open_client(options);
  const auto refused = failure_of(client.complete(simple_request()));
  CHECK(refused.decision.verdict == call_verdict::retry_later);
  CHECK(refused.decision.reason == "network");
  CHECK_FALSE(refused.http_status.has_value());
  CHECK(refused.message.find(api_key) == std::string::npos);

  // The answer would come after a minute (the server's end cuts the wait
  // short): a client that waited for it would get it, not a timeout.
  scripted_server slow({llmdlq::test::delayed(llmdlq::test::chat_completion("{}"), 60s)});
  REQUIRE(slow.listening());
  options = options_for(slow);
  options.timeout = 300ms;
  auto impatient = open_client(options);
  const auto called = std::chrono::steady_clock::now();
  const auto timed_out = failure_of(impatient.complete(simple_request()));
  const auto around_the_call = std::chrono::steady_clock::now() - called;
  CHECK(timed_out.decision.verdict == call_verdict::retry_later);
  CHECK(timed_out.decision.reason == "timeout");
  CHECK(timed_out.latency >= 250ms);
  CHECK(timed_out.latency <= around_the_call);  // check-tests: allow duration-upper-bound timed around the call
  CHECK(slow.calls() == 1);
}

TEST_CASE("openai_compatible_client: a prompt over the context window is dead_letter, a parameter fix_request",
          "[llm]") {
  scripted_server server({llmdlq::test::context_length_exceeded(),
                          llmdlq::test::api_error(400, "invalid_request_error", "", "Unknown parameter: 'foo'.")});
  REQUIRE(server.listening());
  auto client = open_client(options_for(server));

  const auto too_long = failure_of(client.complete(simple_request()));
  CHECK(too_long.http_status == 400);
  CHECK(too_long.decision.verdict == call_verdict::dead_letter);
  CHECK(too_long.decision.reason == "context_length_exceeded");
  CHECK(too_long.decision.category == llmdlq::failure_category::poison);
  CHECK(too_long.message.find("maximum context length") != std::string::npos);

  // A parameter the server does not know is the request's fault, not the message's.
  const auto invalid = failure_of(client.complete(simple_request()));
  CHECK(invalid.decision.verdict == call_verdict::fix_request);
  CHECK(invalid.decision.reason == "request_rejected");
}

TEST_CASE("openai_compatible_client refuses a body over max_response_bytes", "[llm]") {
  const std::string big(4096, 'x');
  scripted_reply chunked = llmdlq::test::chat_completion(big);
  chunked.chunked = true;
  scripted_reply big_error = llmdlq::test::api_error(503, "server_error", "", big);
  scripted_server server({llmdlq::test::chat_completion(big), chunked, big_error,
                          llmdlq::test::chat_completion("{}")});
  REQUIRE(server.listening());
  auto options = options_for(server);
  options.max_response_bytes = 1024;
  auto client = open_client(options);

  // Refused from its Content-Length, and while reading chunks.
  for (int i = 0; i < 2; ++i) {
    const auto error = failure_of(client.complete(simple_request()));
    CHECK(error.http_status == 200);
    CHECK(error.decision.verdict == call_verdict::retry_later);
    CHECK(error.decision.reason == "response_too_large");
  }
  // An error status is still sorted by its status.
  const auto error = failure_of(client.complete(simple_request()));
  CHECK(error.http_status == 503);
  CHECK(error.decision.reason == "server_error");
  // And the client goes on working.
  CHECK(client.complete(simple_request()).has_value());
  CHECK(server.calls() == 4);
}

TEST_CASE("openai_compatible_client: a 200 that is not a chat completion is invalid_response", "[llm]") {
  scripted_reply html{200, "<html>gateway says hello</html>", {}, "text/html"};
  scripted_reply no_choices{200, R"({"object":"chat.completion","choices":[]})"};
  scripted_reply content_not_text{200, R"({"choices":[{"message":{"role":"assistant","content":42}}]})"};
  scripted_server server({html, no_choices, content_not_text});
  REQUIRE(server.listening());
  auto client = open_client(options_for(server));

  for (int i = 0; i < 3; ++i) {
    const auto error = failure_of(client.complete(simple_request()));
    CHECK(error.http_status == 200);
    CHECK(error.decision.verdict == call_verdict::retry_later);
    CHECK(error.decision.reason == "invalid_response");
  }
}

TEST_CASE("openai_compatible_client: a request that cannot be sent is fix_request without a call", "[llm]") {
  scripted_server server;
  REQUIRE(server.listening());
  auto client = open_client(options_for(server));

  auto bad_schema = simple_request();
  bad_schema.json_schema = "{not json";
  auto infinite = simple_request();
  infinite.temperature = std::numeric_limits<double>::infinity();
  for (const auto& request : {bad_schema, infinite}) {
    const auto error = failure_of(client.complete(request));
    CHECK(error.decision.verdict == call_verdict::fix_request);
    CHECK(error.decision.reason == "invalid_request");
    CHECK_FALSE(error.http_status.has_value());
  }
  CHECK(server.calls() == 0);
}

TEST_CASE("openai_compatible_client::open refuses options it cannot use", "[llm]") {
  auto refused = [](llmdlq::openai_compatible_client_options options) {
    auto client = llmdlq::openai_compatible_client::open(std::move(options));
    REQUIRE_FALSE(client.has_value());
    CHECK(client.error().decision.verdict == call_verdict::retry_later);
    CHECK(client.error().decision.reason == "configuration");
    return client.error().message;
  };
  for (const char* url : {"", "127.0.0.1:8080/v1", "ftp://127.0.0.1/v1", "http://127.0.0.1/v1?x=1"}) {
    llmdlq::openai_compatible_client_options options;
    options.base_url = url;
    refused(options);
  }
  llmdlq::openai_compatible_client_options options;
  options.base_url = "http://user:hunter2@127.0.0.1/v1";
  CHECK(refused(options).find("hunter2") == std::string::npos);

  options.base_url = "http://127.0.0.1/v1";
  options.api_key = "sk-one\r\nX-Injected: yes";
  refused(options);
  options.api_key = api_key;
  options.headers = {{"X-Note", "one\nX-Injected: yes"}};
  refused(options);
  options.headers.clear();
  options.timeout = std::chrono::milliseconds(-1);
  refused(options);
}

TEST_CASE("openai_compatible_client keeps working after a move", "[llm]") {
  scripted_server server({llmdlq::test::chat_completion("{}"), llmdlq::test::chat_completion("[]")});
  REQUIRE(server.listening());
  auto first = open_client(options_for(server));
  REQUIRE(first.complete(simple_request()).has_value());
  auto moved = std::move(first);
  auto clients = std::make_unique<llmdlq::openai_compatible_client>(std::move(moved));
  llmdlq::llm_client& client = *clients;
  auto answer = client.complete(simple_request());
  REQUIRE(answer.has_value());
  CHECK(answer->text == "[]");
}

}  // namespace openai_client_test

#endif
