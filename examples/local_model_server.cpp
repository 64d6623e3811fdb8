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
// With --strict PROFILE (openai, gemini, anthropic, ollama) it refuses a
// request whose json_schema (strict: true) that provider's strict mode
// would refuse, with that provider's status and error body, as an
// OpenAI-compatible endpoint of that provider does.
//
//   local_model_server [--strict PROFILE] [PORT]
//                                 prints "listening on http://127.0.0.1:PORT/v1", serves until killed
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
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

// What the model answers: the repaired document, or a verbatim answer.
std::string answer_text(const std::string& prompt, const std::string& last_message) {
  if (last_message.starts_with(verbatim)) return last_message.substr(verbatim.size());
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
  boost::json::object message{{"role", "assistant"}, {"content", answer_text(prompt, last)}};
  const auto completion_tokens = tokens_in(message["content"].as_string());
  boost::json::object body{
      {"id", "chatcmpl-local"},
      {"object", "chat.completion"},
      {"model", request.at("model")},
      {"choices",
       boost::json::array{boost::json::object{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
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
  auto events = std::make_shared<std::vector<std::string>>();
  const boost::json::value model = request.at("model");
  events->push_back(chunk_of(model, {{"role", "assistant"}}, nullptr));
  const auto tokens = tokens_of(answer_text(prompt, last));
  for (const auto& token : tokens) events->push_back(chunk_of(model, {{"content", token}}, nullptr));
  events->push_back(chunk_of(model, {}, "stop"));
  events->push_back(event({{"id", "chatcmpl-local"},
                           {"object", "chat.completion.chunk"},
                           {"model", model},
                           {"choices", boost::json::array{}},
                           {"usage",
                            {{"prompt_tokens", tokens_in(prompt)},
                             {"completion_tokens", static_cast<std::int64_t>(tokens.size())}}}}));
  events->push_back("data: [DONE]\n\n");
  ++counts.streams;
  counts.tokens_in_answers += tokens.size();
  auto next = std::make_shared<std::size_t>(0);
  res.set_chunked_content_provider("text/event-stream", [events, next, &counts](std::size_t, httplib::DataSink& sink) {
    if (*next == events->size()) {
      sink.done();
      return true;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    const std::string& e = (*events)[*next];
    if (!sink.is_writable() || !sink.write(e.data(), e.size())) {
      ++counts.closed_early;
      return false;
    }
    // The first and the last three events carry no answer text.
    if (*next > 0 && *next + 3 < events->size()) ++counts.tokens_sent;
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
  if (argc > 2 && std::string_view(argv[1]) == "--strict") {
    strict = llmdlq::provider_profile_from(argv[2]);
    if (!strict) {
      std::fprintf(stderr, "local_model_server: --strict takes openai, gemini, anthropic or ollama\n");
      return 2;
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
      if (refusal) {
        const auto error = llmdlq::provider_error_for(*strict, *refusal);
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
    std::fprintf(stderr, "usage: local_model_server [--strict PROFILE] [PORT]\n");
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
