// SPDX-License-Identifier: MIT
// ollama_client against a real HTTP server on loopback playing Ollama's
// /api/chat: what it sends, what it reads, and streamed answers closed on
// the wire at their first impossible byte.
#include <llmdlq/llm/ollama_client.hpp>
#include <llmdlq/stream_judge.hpp>

#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("ollama_client against a scripted HTTP server", "[llm][stream]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#  include "llm/early_deaths.hpp"
#  include "llm/scripted_server.hpp"
#  include "support/eventually.hpp"

namespace ollama_client_test {

namespace {

using namespace std::chrono_literals;
using llmdlq::test::scripted_reply;
using llmdlq::test::scripted_server;
using llmdlq::test::streamed_ollama_chat;

llmdlq::ollama_client client_for(const scripted_server& server) {
  llmdlq::ollama_client_options options;
  options.base_url = "http://127.0.0.1:" + std::to_string(server.port());
  auto client = llmdlq::ollama_client::open(options);
  REQUIRE(client.has_value());
  return std::move(*client);
}

llmdlq::llm_request request() {
  llmdlq::llm_request r;
  r.model = "qwen2.5:7b";
  r.messages = {{"user", "the receipt, as JSON"}};
  r.max_tokens = 512;
  r.json_schema = llmdlq::test::streamed_receipt_schema;
  return r;
}

}  // namespace

TEST_CASE("ollama_client asks /api/chat with the schema as format and reads the answer and its counts",
          "[llm][stream]") {
  scripted_reply reply;
  reply.body = R"({"model": "qwen2.5:7b", "message": {"role": "assistant", "content": "{\"total\": 3}"},
                   "done": true, "done_reason": "stop", "prompt_eval_count": 26, "eval_count": 7})";
  scripted_server server({reply});
  REQUIRE(server.listening());
  auto client = client_for(server);
  auto answer = client.complete(request());
  REQUIRE(answer.has_value());
  CHECK(answer->text == R"({"total": 3})");
  CHECK(answer->finish_reason == "stop");
  CHECK(answer->usage.prompt_tokens == 26);
  CHECK(answer->usage.completion_tokens == 7);
  CHECK(answer->model == "qwen2.5:7b");
  const auto sent = server.requests().at(0);
  CHECK(sent.path == "/api/chat");
  const auto body = sent.json();
  CHECK(body.at("stream") == false);
  CHECK(body.at("options").at("num_predict") == 512);
  CHECK(body.at("format").at("type") == "object");
  CHECK(client.endpoint() == "http://127.0.0.1:" + std::to_string(server.port()));
}

TEST_CASE("ollama_client streams an answer to its end, and closes the connection at the first impossible byte",
          "[llm][stream]") {
  const auto schema = llmdlq::schema::compile(llmdlq::test::streamed_receipt_schema);
  REQUIRE(schema.has_value());
  {
    scripted_server server({streamed_ollama_chat({"{\"total\"", ": 12.5, ", "\"merchant\": \"Caf", "é\"}"}, "stop", 1ms)});
    auto client = client_for(server);
    llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
    auto answer = client.complete_streamed(request(), judge);
    REQUIRE(answer.has_value());
    CHECK(answer->text == R"({"total": 12.5, "merchant": "Café"})");
    CHECK(answer->usage.completion_tokens == 4);
    CHECK_FALSE(answer->cancelled.has_value());
    CHECK(server.requests().at(0).json().at("stream") == true);
  }
  for (const auto& c : llmdlq::test::early_deaths()) {
    INFO(c.kind);
    auto reply = streamed_ollama_chat(llmdlq::test::answer_starting(c.head), "stop", 3ms);
    const std::size_t total = reply.events.size();
    const auto log = reply.log;
    scripted_server server({reply});
    auto client = client_for(server);
    llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
    auto answer = client.complete_streamed(request(), judge);
    REQUIRE(answer.has_value());
    REQUIRE(answer->cancelled.has_value());
    CHECK(judge.verdict().offset == c.dies_at);
    CHECK(llmdlq::test::eventually([&] { return log->closed_by_client.load(); }, 5s));
    CHECK(log->sent < c.head.size() + 8);
    CHECK(log->sent < total);
    const auto dead = judge.finish();
    REQUIRE_FALSE(dead.has_value());
    CHECK(dead.error().failure.cancelled_at == llmdlq::cancel_point{c.dies_at, answer->cancelled->events});
  }
}

TEST_CASE("ollama_client: lines and multi-byte UTF-8 cut across the transport's writes arrive whole", "[llm][stream]") {
  const auto schema = llmdlq::schema::compile(llmdlq::test::streamed_receipt_schema);
  REQUIRE(schema.has_value());
  auto reply = streamed_ollama_chat({"{\"merchant\": \"Caf", "é Пятёрочка කොළඹ\", ", "\"total\": 1}"});
  llmdlq::test::cut_into_writes(reply, 3, 1ms);
  scripted_server server({reply});
  auto client = client_for(server);
  llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
  auto answer = client.complete_streamed(request(), judge);
  REQUIRE(answer.has_value());
  CHECK(answer->text == "{\"merchant\": \"Café Пятёрочка කොළඹ\", \"total\": 1}");
  CHECK(judge.finish(answer->finish_reason).has_value());
}

TEST_CASE("ollama_client: an error line, an unknown model and a dropped stream are call errors", "[llm][stream]") {
  const auto schema = llmdlq::schema::compile(llmdlq::test::streamed_receipt_schema);
  REQUIRE(schema.has_value());
  {
    scripted_reply reply;
    reply.content_type = "application/x-ndjson";
    reply.events = {R"({"model": "m", "message": {"role": "assistant", "content": "{"}, "done": false})" "\n",
                    R"({"error": "an error was encountered while running the model"})" "\n"};
    scripted_server server({reply});
    auto client = client_for(server);
    llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
    auto answer = client.complete_streamed(request(), judge);
    REQUIRE_FALSE(answer.has_value());
    CHECK(answer.error().decision.reason == "invalid_response");
    CHECK(answer.error().message.find("running the model") != std::string::npos);
  }
  {
    scripted_server server({scripted_reply{404, R"({"error": "model \"qwen9\" not found, try pulling it first"})"}});
    auto client = client_for(server);
    auto answer = client.complete(request());
    REQUIRE_FALSE(answer.has_value());
    CHECK(answer.error().http_status == 404);
    CHECK(answer.error().message.find("not found") != std::string::npos);
  }
  {
    auto reply = streamed_ollama_chat({"{\"total\"", ": 1", "}"}, "stop", 1ms);
    reply.cut_after_events = 2;
    scripted_server server({reply});
    auto client = client_for(server);
    llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
    auto answer = client.complete_streamed(request(), judge);
    REQUIRE_FALSE(answer.has_value());
    CHECK(answer.error().decision.verdict == llmdlq::call_verdict::retry_later);
  }
}

}  // namespace ollama_client_test

#endif
