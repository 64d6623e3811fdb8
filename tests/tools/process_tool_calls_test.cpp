// SPDX-License-Identifier: MIT
// `llmdlq process --tools`: the calls of whole and streamed replies of
// OpenAI, Anthropic and Ollama judged one by one, each failure a dead letter
// that names its call and passes the envelope's schema.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <llmdlq/jsonl_file_sink.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"
#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

namespace process_tool_calls_test {

using llmdlq::test::lines_of;
using llmdlq::test::run_llmdlq;
using llmdlq::test::temp_dir;

namespace {

constexpr std::string_view tools_json = R"({
  "record_receipt": {"type": "object", "required": ["merchant", "total"], "additionalProperties": false,
                     "properties": {"merchant": {"type": "string"}, "total": {"type": "number"},
                                    "note": {"type": "string"}}}
})";

// Arguments of each kind a model writes: good, a forced null, not JSON, a wrong type, cut off.
const std::vector<std::pair<std::string, std::string>>& arguments() {
  static const std::vector<std::pair<std::string, std::string>> all{
      {"record_receipt", R"({"merchant": "AH", "total": 12.5})"},
      {"record_receipt", R"({"merchant": "AH", "total": 1, "note": null})"},
      {"record_receipt", R"(merchant = AH)"},
      {"record_receipt", R"({"merchant": "AH", "total": "12"})"},
      {"book_flight", R"({"to": "AMS"})"},
  };
  return all;
}

std::string openai_body() {
  boost::json::array calls;
  for (const auto& [name, args] : arguments()) {
    calls.push_back(boost::json::object{{"id", "call_" + std::to_string(calls.size())},
                                        {"type", "function"},
                                        {"function", {{"name", name}, {"arguments", args}}}});
  }
  return boost::json::serialize(boost::json::object{
      {"id", "chatcmpl-9"},
      {"model", "gpt-4o"},
      {"choices", boost::json::array{boost::json::object{
                      {"index", 0},
                      {"message", {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", calls}}},
                      {"finish_reason", "tool_calls"}}}}});
}

std::string openai_stream() {
  std::string out;
  const auto chunk = [&](boost::json::object delta, boost::json::value finish) {
    boost::json::object c{{"id", "chatcmpl-9"},
                          {"model", "gpt-4o"},
                          {"choices", boost::json::array{boost::json::object{
                                          {"index", 0}, {"delta", std::move(delta)}, {"finish_reason", finish}}}}};
    out += "data: " + boost::json::serialize(c) + "\n\n";
  };
  std::size_t i = 0;
  for (const auto& [name, args] : arguments()) {
    chunk({{"tool_calls", boost::json::array{boost::json::object{
                              {"index", i}, {"id", "call_" + std::to_string(i)}, {"function", {{"name", name}}}}}}},
          nullptr);
    for (std::size_t at = 0; at < args.size(); at += 3) {
      chunk({{"tool_calls", boost::json::array{boost::json::object{
                                {"index", i}, {"function", {{"arguments", args.substr(at, 3)}}}}}}},
            nullptr);
    }
    ++i;
  }
  chunk({}, "tool_calls");
  return out + "data: [DONE]\n\n";
}

// Each verdict line by its call: status, and category when dead-lettered.
// Read from a stream closed early, a letter's arguments are what had arrived.
void check_verdicts(const std::vector<boost::json::object>& lines, const std::string& dlq, bool whole = true) {
  REQUIRE(lines.size() == arguments().size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    INFO(boost::json::serialize(lines[i]));
    CHECK(lines[i].at("call") == i);
    CHECK(lines[i].at("tool").as_string() == arguments()[i].first);
    CHECK(lines[i].contains("call_id"));
  }
  CHECK(lines[0].at("status") == "accepted");
  CHECK(lines[1].at("status") == "accepted");  // the lowering for openai forced the null
  CHECK(lines[1].at("repairs").at(0).at("code") == "forced_null");
  CHECK(lines[2].at("category") == "syntax");
  CHECK(lines[3].at("category") == "schema");
  CHECK(lines[4].at("category") == "schema");
  CHECK(lines[4].at("errors").at(0).at("keyword") == "tool");
  auto letters = llmdlq::read_jsonl_envelopes(dlq);
  REQUIRE(letters.has_value());
  REQUIRE(letters->envelopes.size() == 3);
  for (const auto& e : letters->envelopes) {
    llmdlq::test::check_envelope(e);
    REQUIRE(e.tool_call.has_value());
    const std::string& written = arguments()[*e.tool_call->index].second;
    const std::string received = e.raw_response.text.value_or("");
    CHECK((whole ? received == written : written.starts_with(received)));
    CHECK(e.tool_call->name == arguments()[*e.tool_call->index].first);
  }
}

}  // namespace

TEST_CASE("process --tools: each call of a whole reply judged, each failure a letter naming its call",
          "[tools][process][tool_call]") {
  temp_dir dir;
  const auto tools = dir.write("tools.json", tools_json);
  const auto dlq = (dir.path() / "dlq.jsonl").string();
  const auto run = run_llmdlq("process --tools " + tools + " --provider openai --sink jsonl:" + dlq,
                              openai_body() + "\n");
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  const auto lines = lines_of(run.out);
  check_verdicts(lines, dlq);
  CHECK(lines[0].at("id") == "chatcmpl-9");
  CHECK(run.err == "llmdlq process: 1 line, 2 accepted, 3 dead-lettered, 3 stored, 0 duplicates, "
                   "3 derived keys, 0 invalid, 0 to retry\n");

  // Run again: nothing is stored twice.
  const auto again = run_llmdlq("process --tools " + tools + " --provider openai --sink jsonl:" + dlq,
                                openai_body() + "\n");
  CHECK(again.err.find("0 stored, 3 duplicates") != std::string::npos);
}

TEST_CASE("process --tools --stream: OpenAI's streamed parallel calls judged as they arrive",
          "[tools][process][tool_call]") {
  temp_dir dir;
  const auto tools = dir.write("tools.json", tools_json);
  const auto capture = dir.write("capture.sse", openai_stream());
  const auto dlq = (dir.path() / "dlq.jsonl").string();
  const auto run = run_llmdlq("process --tools " + tools + " --provider openai --stream sse --sink jsonl:" + dlq + " " +
                              capture);
  INFO(run.out << run.err);
  const auto lines = lines_of(run.out);
  check_verdicts(lines, dlq, false);
  // Repair may mend the call that is not JSON: the one with a string total is the first certain death.
  CHECK(lines[0].at("stream").at("dead_call") == 3);
}

TEST_CASE("process --tools: Anthropic's and Ollama's replies, and what is not a reply", "[tools][process][tool_call]") {
  temp_dir dir;
  const auto tools = dir.write("tools.json", tools_json);
  boost::json::array blocks{boost::json::object{{"type", "text"}, {"text", "Storing."}}};
  boost::json::array ollama_calls;
  for (const auto& [name, args] : arguments()) {
    boost::system::error_code ec;
    const boost::json::value input = boost::json::parse(args, ec);
    if (ec) continue;  // both APIs send the arguments as an object: they are JSON
    blocks.push_back(boost::json::object{
        {"type", "tool_use"}, {"id", "toolu_" + std::to_string(blocks.size())}, {"name", name}, {"input", input}});
    ollama_calls.push_back(boost::json::object{{"function", {{"name", name}, {"arguments", input}}}});
  }
  const std::string anthropic = boost::json::serialize(boost::json::object{
      {"id", "msg_1"}, {"model", "claude"}, {"stop_reason", "tool_use"}, {"content", blocks}});
  const auto a = run_llmdlq("process --tools " + tools + " --reply anthropic", anthropic + "\n");
  const auto a_lines = lines_of(a.out);
  REQUIRE(a_lines.size() == 4);
  CHECK(a_lines[0].at("status") == "accepted");
  CHECK(a_lines[1].at("category") == "schema");  // no --provider: the null is not forced, and fails
  CHECK(a_lines[2].at("category") == "schema");
  CHECK(a_lines[3].at("errors").at(0).at("keyword") == "tool");
  CHECK(a_lines[3].at("call_id") == "toolu_4");

  const std::string ollama = boost::json::serialize(boost::json::object{
      {"model", "llama3.2"},
      {"message", {{"role", "assistant"}, {"content", ""}, {"tool_calls", ollama_calls}}},
      {"done", true}});
  const auto o = run_llmdlq("process --tools " + tools + " --reply ollama --provider ollama", ollama + "\n");
  const auto o_lines = lines_of(o.out);
  REQUIRE(o_lines.size() == 4);
  CHECK_FALSE(o_lines[0].contains("call_id"));
  CHECK(o_lines[2].at("category") == "schema");

  const auto invalid = run_llmdlq("process --tools " + tools + " --reply ollama", anthropic + "\n{\n");
  CHECK(invalid.exit_code == 2);
  const auto i_lines = lines_of(invalid.out);
  REQUIRE(i_lines.size() == 2);
  CHECK(i_lines[0].at("error") == "the body is not a reply of ollama's chat API");
  CHECK(i_lines[1].at("status") == "invalid_input");

  // Streamed by Anthropic and by Ollama.
  std::string events =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude\"}}\n\n";
  std::string lines;
  for (std::size_t i = 0; i < arguments().size(); ++i) {
    const auto& [name, args] = arguments()[i];
    const boost::json::object start{{"type", "content_block_start"},
                                    {"index", i},
                                    {"content_block",
                                     {{"type", "tool_use"},
                                      {"id", "toolu_" + std::to_string(i)},
                                      {"name", name},
                                      {"input", boost::json::object()}}}};
    const boost::json::object delta{{"type", "content_block_delta"},
                                    {"index", i},
                                    {"delta", {{"type", "input_json_delta"}, {"partial_json", args}}}};
    events += "data: " + boost::json::serialize(start) + "\n\ndata: " + boost::json::serialize(delta) + "\n\n";
    boost::system::error_code ec;
    boost::json::value input = boost::json::parse(args, ec);
    if (ec) input = args;  // a model's broken arguments, as a string
    lines += boost::json::serialize(boost::json::object{
                 {"message",
                  {{"role", "assistant"},
                   {"content", ""},
                   {"tool_calls",
                    boost::json::array{boost::json::object{{"function", {{"name", name}, {"arguments", input}}}}}}}},
                 {"done", false}}) +
             "\n";
  }
  events += "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n"
            "data: {\"type\":\"message_stop\"}\n\n";
  lines += R"({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop"})"
           "\n";
  for (const auto& [format, capture] :
       {std::pair{"anthropic", dir.write("a.sse", events)}, std::pair{"ndjson", dir.write("o.ndjson", lines)}}) {
    INFO(format);
    const auto streamed = run_llmdlq(std::string("process --tools ") + tools + " --provider openai --stream " + format +
                                     " " + capture);
    INFO(streamed.out << streamed.err);
    CHECK(streamed.exit_code == 0);
    const auto s_lines = lines_of(streamed.out);
    REQUIRE(s_lines.size() == arguments().size());
    CHECK(s_lines[0].at("status") == "accepted");
    CHECK(s_lines[1].at("repairs").at(0).at("code") == "forced_null");
    CHECK(s_lines[2].at("category") == "syntax");
    CHECK(s_lines[3].at("category") == "schema");
    CHECK(s_lines[4].at("errors").at(0).at("keyword") == "tool");
    CHECK(s_lines[4].at("stream").at("ended") == true);
  }

  // A reply cut off by its token limit cuts its last call.
  const std::string cut = R"({"choices": [{"index": 0, "finish_reason": "length", "message": {"tool_calls": [
      {"id": "a", "function": {"name": "record_receipt", "arguments": "{\"merchant\": \"AH\", \"total\": 1}"}},
      {"id": "b", "function": {"name": "record_receipt", "arguments": "{\"merchant\": \"AH\", \"tot"}}]}}]})";
  std::string one_line = cut;
  std::erase(one_line, '\n');
  const auto c = run_llmdlq("process --tools " + tools, one_line + "\n");
  INFO(c.out << c.err);
  const auto c_lines = lines_of(c.out);
  REQUIRE(c_lines.size() == 2);
  CHECK(c_lines[0].at("status") == "accepted");
  CHECK(c_lines[1].at("category") == "truncated");

  CHECK(run_llmdlq("process --tools " + tools + " --schema " + tools).exit_code == 2);
  CHECK(run_llmdlq("process --schema " + tools + " --reply openai").exit_code == 2);
  CHECK(run_llmdlq("process --tools " + dir.write("bad.json", "[{\"name\": \"\"}]")).exit_code == 2);
}

}  // namespace process_tool_calls_test
