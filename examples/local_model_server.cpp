// SPDX-License-Identifier: MIT
// A stand-in for a local model server (llama.cpp server, vLLM, Ollama) for
// the demo: it speaks the OpenAI chat completions API on 127.0.0.1 and
// "repairs" what a repair prompt quotes by closing and fixing its JSON with
// llmdlq's own repair, all tiers allowed. Deterministic, no model behind it:
// enough to show the recovery ladder end to end, including the answers it
// cannot use.
//
//   local_model_server [PORT]     prints "listening on http://127.0.0.1:PORT/v1", serves until killed
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <httplib.h>

#include <boost/json.hpp>
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

std::string answer(const boost::json::value& request) {
  std::string prompt;
  for (const auto& message : request.at("messages").as_array()) {
    prompt += message.at("content").as_string().c_str();
    prompt += '\n';
  }
  llmdlq::repair_options all;
  all.allowed = {llmdlq::repair_tier::lossless, llmdlq::repair_tier::syntactic, llmdlq::repair_tier::lossy};
  const auto repaired = llmdlq::repair(quoted_document(prompt), all);
  // A cut-off document comes back closed (the lossy tier drops its unfinished
  // tail): all a model that sees only the quoted part could answer.
  const bool ok = repaired.has_value();
  boost::json::object message{{"role", "assistant"},
                              {"content", ok ? repaired->json : std::string("I cannot repair this document.")}};
  const auto completion_tokens = static_cast<std::int64_t>(message["content"].as_string().size() / 4 + 1);
  boost::json::object body{
      {"id", "chatcmpl-local"},
      {"object", "chat.completion"},
      {"model", request.at("model")},
      {"choices", boost::json::array{boost::json::object{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
      {"usage", boost::json::object{{"prompt_tokens", static_cast<std::int64_t>(prompt.size() / 4 + 1)},
                                    {"completion_tokens", completion_tokens}}}};
  return boost::json::serialize(body);
}

}  // namespace

int main(int argc, char** argv) {
  httplib::Server server;
  // cpp-httplib's default adds SO_REUSEPORT: a second server would share a busy PORT instead of failing.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.Post("/v1/chat/completions", [](const httplib::Request& req, httplib::Response& res) {
    boost::system::error_code ec;
    const auto request = boost::json::parse(req.body, ec);
    if (ec || !request.is_object() || !request.as_object().contains("messages")) {
      res.status = 400;
      res.set_content(R"({"error":{"message":"not a chat completion request","type":"invalid_request_error"}})",
                      "application/json");
      return;
    }
    res.set_content(answer(request), "application/json");
  });
  const int wanted = argc > 1 ? std::atoi(argv[1]) : 0;
  if (argc > 2 || (argc > 1 && (wanted <= 0 || wanted > 65535))) {
    std::fprintf(stderr, "usage: local_model_server [PORT]\n");
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
