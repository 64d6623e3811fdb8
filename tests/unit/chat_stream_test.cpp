// SPDX-License-Identifier: MIT
// chat_stream_decoder on streams as OpenAI and Ollama write them, cut at
// every byte; judged_stream stopping a streamed answer at its first
// impossible byte.
#include <llmdlq/chat_stream.hpp>
#include <llmdlq/judged_stream.hpp>

#include "catch.hpp"

namespace chat_stream_test {

namespace {

std::string openai_chunk(std::string_view content, std::string_view finish = {}) {
  std::string delta = content.empty() ? "{}" : R"({"content": ")" + std::string(content) + "\"}";
  std::string reason = finish.empty() ? "null" : "\"" + std::string(finish) + "\"";
  return R"(data: {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o-mini", "choices": [{"index": 0, "delta": )" +
         delta + R"(, "finish_reason": )" + reason + "}]}\n\n";
}

// The answer {"total": 12.5, "merchant": "Café"} in pieces, with what servers put between them.
std::string openai_stream(std::string_view line_end = "\n") {
  std::string s = ": keep-alive\n\n";
  s += R"(data: {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": null}]})"
       "\n\n";
  for (const char* piece : {"{\\\"total\\\"", ": 12.5, ", "\\\"merchant\\\": ", "\\\"Caf", "é\\\"}"}) s += openai_chunk(piece);
  s += "event: message\nid: 7\n";
  s += openai_chunk("", "stop");
  s += R"(data: {"id": "c1", "choices": [], "usage": {"prompt_tokens": 31, "completion_tokens": 12, "total_tokens": 43}})"
       "\n\n";
  s += "data: [DONE]\n\n";
  std::string out;
  for (const char c : s) {
    if (c == '\n') {
      out += line_end;
    } else {
      out += c;
    }
  }
  return out;
}

std::string decode_in_pieces(llmdlq::chat_stream_decoder& decoder, std::string_view stream, std::size_t piece) {
  std::string text;
  for (std::size_t at = 0; at < stream.size(); at += piece) text += decoder.feed(stream.substr(at, piece));
  return text;
}

}  // namespace

TEST_CASE("chat_stream_decoder reads OpenAI's server-sent events cut anywhere, with comments, fields and any line end",
          "[stream]") {
  for (const std::string_view line_end : {"\n", "\r\n", "\r"}) {
    const std::string stream = openai_stream(line_end);
    for (const std::size_t piece : {std::size_t{1}, std::size_t{2}, std::size_t{7}, stream.size()}) {
      INFO("piece " << piece);
      llmdlq::chat_stream_decoder decoder(llmdlq::chat_stream_format::openai_sse);
      CHECK(decode_in_pieces(decoder, stream, piece) == R"({"total": 12.5, "merchant": "Café"})");
      CHECK_FALSE(decoder.error().has_value());
      CHECK(decoder.done());
      CHECK(decoder.finish_reason() == "stop");
      REQUIRE(decoder.usage().has_value());
      CHECK(decoder.usage()->prompt_tokens == 31);
      CHECK(decoder.usage()->completion_tokens == 12);
      CHECK(decoder.model() == "gpt-4o-mini");
      CHECK(decoder.content_events() == 5);
    }
  }
}

TEST_CASE("chat_stream_decoder: an event in several data lines, a refusal, an error event, a line too long", "[stream]") {
  llmdlq::chat_stream_decoder joined(llmdlq::chat_stream_format::openai_sse);
  CHECK(joined.feed("data: {\"choices\": [{\"index\": 0,\ndata: \"delta\": {\"content\": \"x\"}}]}\n\n") == "x");
  CHECK_FALSE(joined.error().has_value());

  llmdlq::chat_stream_decoder refused(llmdlq::chat_stream_format::openai_sse);
  (void)refused.feed("data: {\"choices\": [{\"index\": 0, \"delta\": {\"refusal\": \"I can't help\"}}]}\n\n");
  (void)refused.feed("data: {\"choices\": [{\"index\": 0, \"delta\": {\"refusal\": \" with that.\"}, \"finish_reason\": \"stop\"}]}\n\n");
  CHECK(refused.refusal() == "I can't help with that.");

  llmdlq::chat_stream_decoder failed(llmdlq::chat_stream_format::openai_sse);
  CHECK(failed.feed(openai_chunk("{")) == "{");
  (void)failed.feed("data: {\"error\": {\"message\": \"overloaded\", \"type\": \"server_error\"}}\n\n");
  REQUIRE(failed.error().has_value());
  CHECK(failed.error()->find("overloaded") != std::string::npos);
  CHECK(failed.feed(openai_chunk("more")).empty());  // nothing after an error

  llmdlq::chat_stream_decoder garbled(llmdlq::chat_stream_format::openai_sse);
  (void)garbled.feed("data: {not json\n\n");
  CHECK(garbled.error().has_value());

  llmdlq::chat_stream_decoder bounded(llmdlq::chat_stream_format::openai_sse, 64);
  (void)bounded.feed("data: " + std::string(100, 'x'));
  REQUIRE(bounded.error().has_value());
  CHECK(bounded.error()->find("longer than 64 bytes") != std::string::npos);
}

TEST_CASE("chat_stream_decoder reads Ollama's /api/chat lines, with its counts as the usage", "[stream]") {
  const std::string stream =
      R"({"model": "qwen2.5:7b", "created_at": "2026-12-04T10:00:00Z", "message": {"role": "assistant", "content": "{\"total\""}, "done": false})"
      "\n"
      R"({"model": "qwen2.5:7b", "created_at": "2026-12-04T10:00:01Z", "message": {"role": "assistant", "content": ": 12.5}"}, "done": false})"
      "\n"
      R"({"model": "qwen2.5:7b", "created_at": "2026-12-04T10:00:01Z", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "length", "prompt_eval_count": 26, "eval_count": 259})"
      "\n";
  for (const std::size_t piece : {std::size_t{1}, std::size_t{5}, stream.size()}) {
    llmdlq::chat_stream_decoder decoder(llmdlq::chat_stream_format::ollama_ndjson);
    CHECK(decode_in_pieces(decoder, stream, piece) == R"({"total": 12.5})");
    CHECK(decoder.done());
    CHECK(decoder.finish_reason() == "length");
    REQUIRE(decoder.usage().has_value());
    CHECK(decoder.usage()->prompt_tokens == 26);
    CHECK(decoder.usage()->completion_tokens == 259);
    CHECK(decoder.model() == "qwen2.5:7b");
  }
  llmdlq::chat_stream_decoder failed(llmdlq::chat_stream_format::ollama_ndjson);
  (void)failed.feed("{\"error\": \"model 'x' not found\"}\n");
  REQUIRE(failed.error().has_value());
  CHECK(failed.error()->find("not found") != std::string::npos);
}

TEST_CASE("chat_stream_decoder counts the events of its format: none in bytes that were never such a stream",
          "[stream]") {
  const auto events_in = [](llmdlq::chat_stream_format format, std::string_view bytes) {
    llmdlq::chat_stream_decoder decoder(format);
    (void)decoder.feed(bytes);
    return decoder.events();
  };
  const auto sse = llmdlq::chat_stream_format::openai_sse;
  const auto ndjson = llmdlq::chat_stream_format::ollama_ndjson;
  CHECK(events_in(sse, openai_stream()) == 9);  // the role, five pieces, the finish, the usage, [DONE]
  CHECK(events_in(sse, "data: [DONE]\n\n") == 1);
  for (const std::string_view never : {"", ": keep-alive\n\n", "<html><body>502 Bad Gateway</body></html>\n",
                                       R"({"id": "c1", "object": "chat.completion", "choices": []})" "\n",
                                       R"({"message": {"content": "{}"}, "done": true})" "\n"}) {
    INFO(never);
    CHECK(events_in(sse, never) == 0);
  }
  CHECK(events_in(ndjson, R"({"message": {"content": "{}"}, "done": true})" "\n") == 1);
  CHECK(events_in(ndjson, "\n  \n") == 0);
}

TEST_CASE("judged_stream stops a streamed answer at its first impossible byte and judges what was received",
          "[stream]") {
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "properties": {"total": {"type": "number"}}})");
  REQUIRE(schema.has_value());
  llmdlq::process_options options;
  options.repair = llmdlq::repair_mode::off;
  llmdlq::judged_stream stream(*schema, llmdlq::chat_stream_format::openai_sse, {}, options);
  CHECK_FALSE(stream.feed(openai_chunk("{\\\"total\\\": ")).dead);
  const auto& verdict = stream.feed(openai_chunk("\\\"twelve"));
  REQUIRE(verdict.dead);
  CHECK(verdict.offset == 10);
  CHECK(verdict.category == llmdlq::failure_category::schema);
  const auto result = stream.finish();
  REQUIRE_FALSE(result.has_value());
  CHECK(stream.received() == R"({"total": "twelve)");
  // Cut where it died, it is stored for why it died, not as a text that ends early.
  CHECK(result.error().failure.category == llmdlq::failure_category::schema);
  CHECK(result.error().triage.kind == llmdlq::triage_class::deterministic);
  REQUIRE(result.error().failure.errors.size() == 1);
  CHECK(result.error().failure.errors[0] ==
        llmdlq::validation_error{"/total", "/properties/total/type", "type", "expected number, found string"});
  // The stream had not ended: the host closed it, and the envelope says where, after two text events.
  CHECK(result.error().failure.cancelled_at == llmdlq::cancel_point{10, 2});
}

TEST_CASE("judged_stream: a dead answer read to the stream's own end was not cut, and says nothing of a cancel",
          "[stream]") {
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "properties": {"total": {"type": "number"}}})");
  REQUIRE(schema.has_value());
  llmdlq::process_options options;
  options.repair = llmdlq::repair_mode::off;
  llmdlq::judged_stream stream(*schema, llmdlq::chat_stream_format::openai_sse, {}, options);
  stream.feed(openai_chunk(R"({\"total\": \"twelve\"})"));
  stream.feed("data: [DONE]\n\n");
  REQUIRE(stream.verdict().dead);
  REQUIRE(stream.done());
  const auto result = stream.finish();
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().failure.category == llmdlq::failure_category::schema);
  CHECK_FALSE(result.error().failure.cancelled_at.has_value());
}

}  // namespace chat_stream_test
