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
#include "support/envelope_check.hpp"
#  include "support/eventually.hpp"

namespace streaming_client_test {

namespace {

using namespace std::chrono_literals;
using llmdlq::test::scripted_server;
using llmdlq::test::streamed_chat_completion;

llmdlq::openai_compatible_client client_for(const scripted_server& server,
                                           std::size_t max_response_bytes = std::size_t{8} << 20) {
  llmdlq::openai_compatible_client_options options;
  options.base_url = server.base_url();
  options.max_response_bytes = max_response_bytes;
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
    // The envelope is of what arrived, and says where and after how many events it was cut.
    const auto dead = judge.finish();
    REQUIRE_FALSE(dead.has_value());
    CHECK(dead.error().raw_response.text == answer->text);
    CHECK(dead.error().failure.cancelled_at == llmdlq::cancel_point{c.dies_at, answer->cancelled->events});
  }
}

TEST_CASE("complete_streamed: a stream closed at a schema failure is stored for that failure, under the default "
          "repair policy too, with the model asked",
          "[llm][stream]") {
  const auto schema = llmdlq::schema::compile(llmdlq::test::streamed_receipt_schema);
  REQUIRE(schema.has_value());
  // "total" as words: a wrong type, which no repair tier permitted by default can change.
  std::vector<std::string> pieces = {"{\"merchant\": \"Albert Heijn\", ", "\"total\": ", "\"four", " thousand"};
  for (int i = 0; i < 400; ++i) pieces.push_back(" and more");
  pieces.push_back("\"}");
  llmdlq::process_options repairing;  // the pipeline's defaults: local repair, lossless and syntactic tiers
  for (const auto& options : {llmdlq::test::without_repair(), repairing}) {
    INFO((options.repair == llmdlq::repair_mode::off ? "repair off" : "repair local"));
    scripted_server server({streamed_chat_completion(pieces, "stop", 1ms)});
    REQUIRE(server.listening());
    auto client = client_for(server);
    llmdlq::stream_judge judge(*schema, {}, options);
    auto r = request();
    r.max_tokens = 2048;
    r.temperature = 0.0;
    auto answer = client.complete_streamed(r, judge);
    REQUIRE(answer.has_value());
    REQUIRE(answer->cancelled.has_value());
    CHECK(answer->cancelled->events < 10);
    CHECK(judge.verdict().offset == 38);  // the quote that opens the string
    const auto dead = judge.finish(answer->finish_reason);
    REQUIRE_FALSE(dead.has_value());
    const auto& e = dead.error();
    // What killed it, not that the text ends early: a schema failure an engineer must look at.
    CHECK(e.failure.category == llmdlq::failure_category::schema);
    CHECK(e.failure.code == llmdlq::default_failure_code(llmdlq::failure_category::schema, ""));
    CHECK(e.triage.kind == llmdlq::triage_class::deterministic);
    CHECK(e.failure.errors == std::vector<llmdlq::validation_error>{
                                  {"/total", "/properties/total/type", "type", "expected number, found string"}});
    CHECK(e.failure.message.find("closed at byte 38") != std::string::npos);
    CHECK(e.failure.cancelled_at == llmdlq::cancel_point{38, answer->cancelled->events});
    // The model asked, and how.
    CHECK(e.model.name == "scripted-model");
    CHECK(e.model.max_tokens == 2048);
    CHECK(e.model.temperature == 0.0);
    llmdlq::test::check_envelope(e);
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

TEST_CASE("complete_streamed: a server that answers whole is read as a whole answer, given to the judge at once",
          "[llm][stream]") {
  const auto schema = llmdlq::schema::compile(llmdlq::test::streamed_receipt_schema);
  REQUIRE(schema.has_value());
  scripted_server server({llmdlq::test::chat_completion(R"({"total": 1})", "stop", 12, 4),
                          llmdlq::test::chat_completion(R"({"total": "x"})"),
                          llmdlq::test::refusal("not this one")});
  auto client = client_for(server);
  llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
  auto answer = client.complete_streamed(request(), judge);
  REQUIRE(answer.has_value());
  CHECK(answer->text == R"({"total": 1})");
  CHECK(answer->usage.completion_tokens == 4);
  CHECK(judge.received() == answer->text);
  CHECK(judge.finish(answer->finish_reason).has_value());
  llmdlq::stream_judge wrong(*schema, {}, llmdlq::test::without_repair());
  answer = client.complete_streamed(request(), wrong);
  REQUIRE(answer.has_value());
  CHECK_FALSE(answer->cancelled.has_value());  // nothing was left to cut
  CHECK(wrong.verdict().dead);
  llmdlq::stream_judge refused(*schema, {}, llmdlq::test::without_repair());
  answer = client.complete_streamed(request(), refused);
  REQUIRE(answer.has_value());
  CHECK(refused.verdict().category == llmdlq::failure_category::refusal);
  CHECK(refused.finish().error().failure.category == llmdlq::failure_category::refusal);
}

TEST_CASE("complete_streamed: multi-byte UTF-8 cut across the transport's writes arrives whole", "[llm][stream]") {
  const auto schema = llmdlq::schema::compile(llmdlq::test::streamed_receipt_schema);
  REQUIRE(schema.has_value());
  auto reply = streamed_chat_completion({"{\"merchant\": \"Caf", "é Пятёрочка කොළඹ\", ", "\"total\": 1}"});
  llmdlq::test::cut_into_writes(reply, 3, 1ms);
  scripted_server server({reply});
  auto client = client_for(server);
  llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
  auto answer = client.complete_streamed(request(), judge);
  REQUIRE(answer.has_value());
  CHECK(answer->text == "{\"merchant\": \"Café Пятёрочка කොළඹ\", \"total\": 1}");
  CHECK_FALSE(judge.verdict().dead);
  CHECK(judge.finish(answer->finish_reason).has_value());
}

TEST_CASE("complete_streamed: the API's refusal ends the stream at once, and finish() calls it a refusal",
          "[llm][stream]") {
  const auto schema = llmdlq::schema::compile(llmdlq::test::streamed_receipt_schema);
  REQUIRE(schema.has_value());
  auto reply = streamed_chat_completion(llmdlq::test::answer_starting({}), "stop", 3ms);
  // After the role, the refusal: what structured outputs send instead of content.
  reply.events.insert(reply.events.begin() + 1,
                      "data: {\"choices\": [{\"index\": 0, \"delta\": {\"refusal\": \"I can't help with that.\"}}]}\n\n");
  const auto log = reply.log;
  const std::size_t total = reply.events.size();
  scripted_server server({reply});
  auto client = client_for(server);
  llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
  auto answer = client.complete_streamed(request(), judge);
  REQUIRE(answer.has_value());
  REQUIRE(answer->cancelled.has_value());
  CHECK(answer->refusal == "I can't help with that.");
  CHECK(judge.verdict().category == llmdlq::failure_category::refusal);
  CHECK(llmdlq::test::eventually([&] { return log->closed_by_client.load(); }, 5s));
  CHECK(log->sent < 10);
  CHECK(log->sent < total);
  const auto dead = judge.finish();
  REQUIRE_FALSE(dead.has_value());
  CHECK(dead.error().failure.category == llmdlq::failure_category::refusal);
}

TEST_CASE("complete_streamed: a 10 MB answer is judged to its end, and one that dies after 10 MB is cut there",
          "[llm][stream]") {
  const auto schema = llmdlq::schema::compile(llmdlq::test::streamed_receipt_schema);
  REQUIRE(schema.has_value());
  const std::size_t size = std::size_t{10} << 20;
  std::vector<std::string> head{"{\"merchant\": \""};
  for (std::size_t n = 0; n < size; n += 64 << 10) head.push_back(std::string(64 << 10, 'a'));
  {
    auto whole = head;
    whole.push_back("\", \"total\": 1}");
    scripted_server server({streamed_chat_completion(whole)});
    auto client = client_for(server, std::size_t{32} << 20);
    llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
    auto answer = client.complete_streamed(request(), judge);
    REQUIRE(answer.has_value());
    CHECK(answer->text.size() == size + 28);
    CHECK_FALSE(answer->cancelled.has_value());
    CHECK(judge.finish(answer->finish_reason).has_value());
  }
  head.push_back("\", \"tip\"");
  // The 10 MB as fast as the client reads them; after the verdict's event,
  // one event each 20 ms: the hundred events the check below allows give
  // the client two seconds to close, however loaded the machine.
  auto reply = streamed_chat_completion(llmdlq::test::answer_starting(head), "stop", 20ms);
  reply.gap_from_event = 1 + head.size();  // after the role's event and the head
  const auto log = reply.log;
  scripted_server server({reply});
  auto client = client_for(server, std::size_t{32} << 20);
  llmdlq::stream_judge judge(*schema, {}, llmdlq::test::without_repair());
  auto answer = client.complete_streamed(request(), judge);
  REQUIRE(answer.has_value());
  REQUIRE(answer->cancelled.has_value());
  CHECK(judge.verdict().offset == 14 + size + 7);  // the closing quote of "tip", a name the schema forbids
  CHECK(llmdlq::test::eventually([&] { return log->closed_by_client.load(); }, 5s));
  // The server runs ahead of the client by what the socket buffers hold
  // while the client reads the 10 MB; it still stops hundreds short of its end.
  CHECK(log->sent < head.size() + 100);
  CHECK(log->sent + 300 < reply.events.size());
}

}  // namespace streaming_client_test

#endif
