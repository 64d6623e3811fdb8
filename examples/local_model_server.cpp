// SPDX-License-Identifier: MIT
// A stand-in for a local model server (llama.cpp server, vLLM, Ollama) for
// the demo: it speaks the OpenAI chat completions API on 127.0.0.1 and
// "repairs" what a repair prompt quotes by closing and fixing its JSON with
// llmdlq's own repair, all tiers allowed. Deterministic, no model behind it:
// enough to show the recovery ladder end to end, including the answers it
// cannot use.
//
// A request whose last message starts with the line `answer verbatim:`
// gets the rest of that message as its answer (a model's answer, replayed).
// With `stream: true` the answer goes as server-sent events, about four
// bytes (a token) each, at a model's pace; a client that closes the
// connection stops the generation. GET /v1/stats says what was streamed:
// {"streams", "closed_early", "tokens_sent", "tokens_in_answers"}.
//
// A request whose last message starts with the line `call tools verbatim:`
// gets the rest of that message, a JSON array of {"name", "arguments"}
// (arguments as the model's text, broken or not), as its tool calls
// (`finish_reason: "tool_calls"`); streamed, each call's arguments go in
// pieces of about four bytes, the calls one after the other, as OpenAI
// streams parallel calls.
//
// With --answers FILE it answers by what the prompt says, as a model whose
// answers depend on its prompt: FILE holds JSON Lines
// {"when": ["text", ...], "answer": "..."}, and a request whose messages
// together hold every text of a line's `when` (a string or an array) gets
// that line's answer; the first such line counts. A request no line takes
// is answered as without FILE. `llmdlq eval`'s test and the demo give it a
// fixed prompt this way: examples/data/eval_answers.jsonl.
//
// With --strict PROFILE (openai, gemini, anthropic, ollama) it refuses a
// request whose json_schema (strict: true) that provider's strict mode
// would refuse, with that provider's status and error body, as an
// OpenAI-compatible endpoint of that provider does; so are the request's
// tools whose `function.strict` is true.
//
//   local_model_server [--strict PROFILE] [--answers FILE] [PORT]
//                                 prints "listening on http://127.0.0.1:PORT/v1", serves until killed
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>

#include <boost/json.hpp>
#include <llmdlq/provider_schema.hpp>
#include <llmdlq/repair.hpp>

namespace {

// The document a repair prompt quotes between a line `<<<BOUNDARY` and a
// line `BOUNDARY>>>`. The instruction names the boundary too, inside a
// sentence: only a line that starts with it opens the document.
std::string quoted_document(const std::string& prompt) {
  const auto open = prompt.find("\n<<<llmdlq-data-");
  if (open == std::string::npos) return {};
  const auto line_end = prompt.find('\n', open + 1);
  if (line_end == std::string::npos) return {};
  const std::string boundary = prompt.substr(open + 4, line_end - open - 4);
  const auto close = prompt.find("\n" + boundary + ">>>", line_end);
  if (close == std::string::npos) return {};
  return prompt.substr(line_end + 1, close - line_end - 1);
}

constexpr std::string_view verbatim = "answer verbatim:\n";
constexpr std::string_view verbatim_calls = "call tools verbatim:\n";

// The calls a `call tools verbatim:` message asks for, as OpenAI's
// `tool_calls`; nothing for another message, or an array of another shape.
std::optional<boost::json::array> verbatim_tool_calls(const std::string& last_message) {
  if (!last_message.starts_with(verbatim_calls)) return std::nullopt;
  boost::system::error_code ec;
  const auto asked = boost::json::parse(last_message.substr(verbatim_calls.size()), ec);
  if (ec || !asked.is_array()) return std::nullopt;
  boost::json::array calls;
  for (const auto& c : asked.as_array()) {
    const auto* o = c.if_object();
    if (!o || !o->contains("name") || !o->contains("arguments") || !o->at("arguments").is_string()) return std::nullopt;
    calls.push_back({{"id", "call_" + std::to_string(calls.size())},
                     {"type", "function"},
                     {"function", {{"name", o->at("name")}, {"arguments", o->at("arguments")}}}});
  }
  return calls;
}

// An answer of --answers FILE, and the texts a prompt must hold for it.
struct scripted_answer {
  std::vector<std::string> when;
  std::string answer;
};
std::vector<scripted_answer> scripted_answers;

// Reads --answers FILE; why not, for the usage message.
std::optional<std::string> read_answers(const char* path) {
  std::ifstream in(path);
  if (!in) return std::string("cannot read ") + path;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    boost::system::error_code ec;
    const auto value = boost::json::parse(line, ec);
    const auto* o = ec ? nullptr : value.if_object();
    const auto* when = o ? o->if_contains("when") : nullptr;
    const auto* answer = o ? o->if_contains("answer") : nullptr;
    scripted_answer a;
    if (when && when->is_string()) a.when.emplace_back(when->as_string());
    if (when && when->is_array()) {
      for (const auto& text : when->as_array()) {
        if (text.is_string()) a.when.emplace_back(text.as_string());
      }
    }
    if (!answer || !answer->is_string() || a.when.empty()) {
      return std::string(path) + " line " + std::to_string(number) + ": expected {\"when\": [texts], \"answer\": text}";
    }
    a.answer = answer->as_string();
    scripted_answers.push_back(std::move(a));
  }
  return std::nullopt;
}

// The answer of the first line of --answers FILE whose texts are all in the prompt.
std::optional<std::string> scripted_answer_for(const std::string& prompt) {
  for (const auto& a : scripted_answers) {
    if (std::all_of(a.when.begin(), a.when.end(),
                    [&](const std::string& text) { return prompt.find(text) != std::string::npos; })) {
      return a.answer;
    }
  }
  return std::nullopt;
}

// What the model answers: a verbatim answer, the answer --answers FILE
// gives the prompt, or the repaired document.
std::string answer_text(const std::string& prompt, const std::string& last_message) {
  if (last_message.starts_with(verbatim)) return last_message.substr(verbatim.size());
  if (auto scripted = scripted_answer_for(prompt)) return *scripted;
  llmdlq::repair_options all;
  all.allowed = {llmdlq::repair_tier::lossless, llmdlq::repair_tier::syntactic, llmdlq::repair_tier::lossy};
  const auto repaired = llmdlq::repair(quoted_document(prompt), all);
  // A cut-off document comes back closed (the lossy tier drops its unfinished
  // tail): all a model that sees only the quoted part could answer.
  return repaired ? repaired->json : std::string("I cannot repair this document.");
}

std::string prompt_of(const boost::json::value& request, std::string* last_message) {
  std::string prompt;
  for (const auto& message : request.at("messages").as_array()) {
    *last_message = message.at("content").as_string().c_str();
    prompt += *last_message;
    prompt += '\n';
  }
  return prompt;
}

std::int64_t tokens_in(std::string_view text) { return static_cast<std::int64_t>(text.size() / 4 + 1); }

std::string answer(const boost::json::value& request) {
  std::string last;
  const std::string prompt = prompt_of(request, &last);
  const auto calls = verbatim_tool_calls(last);
  boost::json::object message{{"role", "assistant"}};
  if (calls) {
    message.emplace("content", nullptr);
    message.emplace("tool_calls", *calls);
  } else {
    message.emplace("content", answer_text(prompt, last));
  }
  const auto completion_tokens = tokens_in(calls ? boost::json::serialize(*calls)
                                                 : std::string(message["content"].as_string()));
  boost::json::object body{
      {"id", "chatcmpl-local"},
      {"object", "chat.completion"},
      {"model", request.at("model")},
      {"choices", boost::json::array{boost::json::object{
                      {"index", 0}, {"message", message}, {"finish_reason", calls ? "tool_calls" : "stop"}}}},
      {"usage", boost::json::object{{"prompt_tokens", static_cast<std::int64_t>(prompt.size() / 4 + 1)},
                                    {"completion_tokens", completion_tokens}}}};
  return boost::json::serialize(body);
}

// The answer in pieces of about four bytes, each a whole UTF-8 sequence.
std::vector<std::string> tokens_of(const std::string& text) {
  std::vector<std::string> tokens;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = std::min(text.size(), at + 4);
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
    tokens.push_back(text.substr(at, end - at));
    at = end;
  }
  return tokens;
}

std::string event(const boost::json::object& chunk) { return "data: " + boost::json::serialize(chunk) + "\n\n"; }

std::string chunk_of(const boost::json::value& model, boost::json::object delta, boost::json::value finish) {
  return event({{"id", "chatcmpl-local"},
                {"object", "chat.completion.chunk"},
                {"model", model},
                {"choices", boost::json::array{boost::json::object{
                                {"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish)}}}}});
}

struct stream_counts {
  std::atomic<std::uint64_t> streams{0}, closed_early{0}, tokens_sent{0}, tokens_in_answers{0};
};

// The answer as server-sent events, a token every 100 µs or so, as a fast
// model writes them; a closed connection ends the generation.
void stream_answer(const boost::json::value& request, httplib::Response& res, stream_counts& counts) {
  std::string last;
  const std::string prompt = prompt_of(request, &last);
  // Each event, and whether it carries a token of the answer or of a call's arguments.
  auto events = std::make_shared<std::vector<std::pair<std::string, bool>>>();
  const boost::json::value model = request.at("model");
  events->emplace_back(chunk_of(model, {{"role", "assistant"}}, nullptr), false);
  std::size_t token_count = 0;
  const auto calls = verbatim_tool_calls(last);
  if (calls) {
    // A piece of call `i`, as a chunk's delta.
    const auto piece = [](std::size_t i, boost::json::object part) {
      part.emplace("index", i);
      return boost::json::object{{"tool_calls", boost::json::array{std::move(part)}}};
    };
    for (std::size_t i = 0; i < calls->size(); ++i) {
      const auto& call = (*calls)[i].as_object();
      const auto& function = call.at("function").as_object();
      boost::json::object opening{{"name", function.at("name")}, {"arguments", ""}};
      events->emplace_back(
          chunk_of(model, piece(i, {{"id", call.at("id")}, {"type", "function"}, {"function", std::move(opening)}}),
                   nullptr),
          false);
      for (const auto& token : tokens_of(std::string(function.at("arguments").as_string()))) {
        boost::json::object arguments{{"arguments", token}};
        events->emplace_back(chunk_of(model, piece(i, {{"function", std::move(arguments)}}), nullptr), true);
        ++token_count;
      }
    }
  } else {
    for (const auto& token : tokens_of(answer_text(prompt, last))) {
      events->emplace_back(chunk_of(model, {{"content", token}}, nullptr), true);
      ++token_count;
    }
  }
  events->emplace_back(chunk_of(model, {}, calls ? "tool_calls" : "stop"), false);
  events->emplace_back(
      event({{"id", "chatcmpl-local"},
             {"object", "chat.completion.chunk"},
             {"model", model},
             {"choices", boost::json::array{}},
             {"usage",
              {{"prompt_tokens", tokens_in(prompt)}, {"completion_tokens", static_cast<std::int64_t>(token_count)}}}}),
      false);
  events->emplace_back("data: [DONE]\n\n", false);
  ++counts.streams;
  counts.tokens_in_answers += token_count;
  auto next = std::make_shared<std::size_t>(0);
  res.set_chunked_content_provider("text/event-stream", [events, next, &counts](std::size_t, httplib::DataSink& sink) {
    if (*next == events->size()) {
      sink.done();
      return true;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    const auto& [e, token] = (*events)[*next];
    if (!sink.is_writable() || !sink.write(e.data(), e.size())) {
      ++counts.closed_early;
      return false;
    }
    if (token) ++counts.tokens_sent;
    ++*next;
    return true;
  });
}

}  // namespace

int main(int argc, char** argv) {
  httplib::Server server;
  // cpp-httplib's default adds SO_REUSEPORT: a second server would share a busy PORT instead of failing.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  static stream_counts counts;
  server.Get("/v1/stats", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(boost::json::serialize(boost::json::object{{"streams", counts.streams.load()},
                                                               {"closed_early", counts.closed_early.load()},
                                                               {"tokens_sent", counts.tokens_sent.load()},
                                                               {"tokens_in_answers", counts.tokens_in_answers.load()}}),
                    "application/json");
  });
  std::optional<llmdlq::provider_profile> strict;
  while (argc > 2 && std::string_view(argv[1]).starts_with("--")) {
    const std::string_view option = argv[1];
    if (option == "--strict") {
      strict = llmdlq::provider_profile_from(argv[2]);
      if (!strict) {
        std::fprintf(stderr, "local_model_server: --strict takes openai, gemini, anthropic or ollama\n");
        return 2;
      }
    } else if (option == "--answers") {
      if (const auto error = read_answers(argv[2])) {
        std::fprintf(stderr, "local_model_server: %s\n", error->c_str());
        return 2;
      }
    } else {
      break;
    }
    argc -= 2;
    argv += 2;
  }
  server.Post("/v1/chat/completions", [strict](const httplib::Request& req, httplib::Response& res) {
    boost::system::error_code ec;
    const auto request = boost::json::parse(req.body, ec);
    if (ec || !request.is_object() || !request.as_object().contains("messages")) {
      res.status = 400;
      res.set_content(R"({"error":{"message":"not a chat completion request","type":"invalid_request_error"}})",
                      "application/json");
      return;
    }
    if (strict) {
      const auto schema = llmdlq::strict_schema_of_request(llmdlq::provider_profile::openai_strict, request);
      const auto refusal = schema ? llmdlq::check_provider_schema(*schema, *strict) : std::nullopt;
      auto refused = refusal;
      if (const auto* tools = request.as_object().if_contains("tools"); !refused && tools && tools->is_array()) {
        for (const auto& tool : tools->as_array()) {
          const auto* function = tool.is_object() ? tool.as_object().if_contains("function") : nullptr;
          if (!function || !function->is_object()) continue;
          const auto* on = function->as_object().if_contains("strict");
          const auto* parameters = function->as_object().if_contains("parameters");
          if (on && *on == true && parameters) refused = llmdlq::check_provider_schema(*parameters, *strict);
          if (refused) break;
        }
      }
      if (refused) {
        const auto error = llmdlq::provider_error_for(*strict, *refused);
        res.status = error.status;
        res.set_content(error.body, "application/json");
        return;
      }
    }
    if (const auto* stream = request.as_object().if_contains("stream"); stream && *stream == true) {
      stream_answer(request, res, counts);
      return;
    }
    res.set_content(answer(request), "application/json");
  });
  const int wanted = argc > 1 ? std::atoi(argv[1]) : 0;
  if (argc > 2 || (argc > 1 && (wanted <= 0 || wanted > 65535))) {
    std::fprintf(stderr, "usage: local_model_server [--strict PROFILE] [--answers FILE] [PORT]\n");
    return 2;
  }
  const int port = wanted > 0 ? (server.bind_to_port("127.0.0.1", wanted) ? wanted : -1)
                              : server.bind_to_any_port("127.0.0.1");
  if (port <= 0) {
    std::fprintf(stderr, "local_model_server: cannot listen on 127.0.0.1\n");
    return 1;
  }
  std::printf("listening on http://127.0.0.1:%d/v1\n", port);
  std::fflush(stdout);
  return server.listen_after_bind() ? 0 : 1;
}
