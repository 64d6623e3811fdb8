// SPDX-License-Identifier: MIT
// openai_compatible_client::complete_streamed against a real streaming
// server on loopback: the answer read as server-sent events into a stream
// judge, and the connection closed, on the wire, the moment the judge says
// the answer is dead.
#include <llmdlq/llm/openai_compatible_client.hpp>
#include <llmdlq/stream_judge.hpp>

#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("openai_compatible_client streams against a scripted HTTP server", "[llm][stream]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#  include "llm/early_deaths.hpp"
#  include "llm/scripted_server.hpp"
#  include "support/eventually.hpp"

namespace {

using namespace std::chrono_literals;
using llmdlq::test::scripted_server;
using llmdlq::test::streamed_chat_completion;

llmdlq::openai_compatible_client client_for(const scripted_server& server) {
  llmdlq::openai_compatible_client_options options;
  options.base_url = server.base_url();
  auto client = llmdlq::openai_compatible_client::open(options);
  REQUIRE(client.has_value());
  return std::move(*client);
}

llmdlq::llm_request request() {
  llmdlq::llm_request r;
  r.model = "scripted-model";
  r.messages = {{"user", "the receipt, as JSON"}};
  return r;
}

}  // namespace

TEST_CASE("complete_streamed reads a whole streamed answer, its finish reason and usage", "[llm][stream]") {
  const auto schema = llmdlq::schema::compile(llmdlq::test::streamed_receipt_schema);
  REQUIRE(schema.has_value());
  for (const std::size_t gap_ms : {0, 1}) {
    scripted_server server({streamed_chat_completion({"{\"total\"", ": 12.5, ", "\"merchant\": \"Caf", "é\"}"}, "stop",
                                                     std::chrono::milliseconds(gap_ms), 31)});
    REQUIRE(server.listening());
    auto client = client_for(server);
    llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
    auto answer = client.complete_streamed(request(), judge);
    REQUIRE(answer.has_value());
    CHECK(answer->text == R"({"total": 12.5, "merchant": "Café"})");
    CHECK(answer->finish_reason == "stop");
    CHECK(answer->usage.prompt_tokens == 31);
    CHECK(answer->usage.completion_tokens == 4);
    CHECK_FALSE(answer->cancelled.has_value());
    CHECK(judge.finish(answer->finish_reason).has_value());
    const auto sent = server.requests().at(0).json();
    CHECK(sent.at("stream") == true);
    CHECK(sent.at("stream_options").at("include_usage") == true);
  }
}

TEST_CASE("complete_streamed closes the connection at the first impossible byte, and the server stops sending",
          "[llm][stream]") {
  const auto schema = llmdlq::schema::compile(llmdlq::test::streamed_receipt_schema);
  REQUIRE(schema.has_value());
  for (const auto& c : llmdlq::test::early_deaths()) {
    INFO(c.kind);
    auto reply = streamed_chat_completion(llmdlq::test::answer_starting(c.head), "stop", 3ms);
    const std::size_t total_events = reply.events.size();
    const auto log = reply.log;
    scripted_server server({reply});
    REQUIRE(server.listening());
    auto client = client_for(server);
    llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
    auto answer = client.complete_streamed(request(), judge);
    REQUIRE(answer.has_value());
    REQUIRE(answer->cancelled.has_value());
    CHECK(judge.verdict().dead);
    CHECK(judge.verdict().offset == c.dies_at);
    CHECK(answer->cancelled->bytes == answer->text.size());
    CHECK(answer->cancelled->events <= c.head.size());
    // The server saw the connection close and sent nothing more.
    CHECK(llmdlq::test::eventually([&] { return log->closed_by_client.load(); }, 5s));
    CHECK(log->sent < c.head.size() + 8);
    CHECK(log->sent < total_events);
    CHECK_FALSE(judge.finish().has_value());
  }
}

TEST_CASE("complete_streamed: keep-alive comments, a dropped connection and an error status", "[llm][stream]") {
  const auto schema = llmdlq::schema::compile(llmdlq::test::streamed_receipt_schema);
  REQUIRE(schema.has_value());
  {
    auto reply = streamed_chat_completion({"{\"total\": 1}"});
    reply.events.insert(reply.events.begin() + 1, ": keep-alive\r\n\r\n");
    scripted_server server({reply});
    auto client = client_for(server);
    llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
    auto answer = client.complete_streamed(request(), judge);
    REQUIRE(answer.has_value());
    CHECK(answer->text == R"({"total": 1})");
  }
  {
    auto reply = streamed_chat_completion(llmdlq::test::answer_starting({"{\"total\": 1"}), "stop", 1ms);
    reply.cut_after_events = 5;
    scripted_server server({reply});
    auto client = client_for(server);
    llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
    auto answer = client.complete_streamed(request(), judge);
    REQUIRE_FALSE(answer.has_value());
    CHECK(answer.error().decision.verdict == llmdlq::call_verdict::retry_later);
  }
  {
    scripted_server server({llmdlq::test::scripted_reply{429, R"({"error": {"message": "slow down"}})", {{"Retry-After", "3"}}}});
    auto client = client_for(server);
    llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
    auto answer = client.complete_streamed(request(), judge);
    REQUIRE_FALSE(answer.has_value());
    CHECK(answer.error().decision.verdict == llmdlq::call_verdict::retry_later);
    CHECK(answer.error().http_status == 429);
    CHECK(answer.error().message.find("slow down") != std::string::npos);
    CHECK(judge.received().empty());
  }
}

#endif
