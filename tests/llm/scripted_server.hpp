// SPDX-License-Identifier: MIT
// An HTTP server on loopback that plays a script of replies, for testing
// clients of OpenAI-compatible APIs against real HTTP (cpp-httplib).
//
//     llmdlq::test::scripted_server server({
//         llmdlq::test::rate_limited("2"),
//         llmdlq::test::chat_completion(R"({"total": 3})"),
//     });
//     options.base_url = server.base_url();  // http://127.0.0.1:<port>/v1
//     ... client.complete(request) twice ...
//     CHECK(server.calls() == 2);
//     CHECK(server.requests()[1].json()["model"] == "m");
//
// Every request (any method, any path) takes the next reply of the script,
// after its delay; once the script is used up, each further request gets a
// 500 that says so. The server listens on an ephemeral port of 127.0.0.1
// from construction to destruction, which ends any delay still running.
#pragma once

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <llmdlq/provider_schema.hpp>

namespace llmdlq::test {

/// What the server saw of a streamed reply: how many events it sent, and
/// whether the client closed the connection before the last.
struct stream_log {
  std::atomic<std::size_t> sent{0};
  std::atomic<bool> closed_by_client{false};
};

/// One reply of the script.
struct scripted_reply {
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json";
  /// Waited before the reply is sent (cut short when the server stops).
  std::chrono::milliseconds delay{0};
  /// Sends the body in chunks without a Content-Length, so that the client
  /// learns its size only while reading it.
  bool chunked = false;
  /// Sends half the body in chunks, then drops the connection.
  bool cut = false;
  /// A streamed reply: each event written on its own, `event_gap` apart
  /// (the body is then unused); `log` says how far the server got.
  std::vector<std::string> events;
  std::chrono::milliseconds event_gap{0};
  /// Streamed: the events before this one are sent without the gap, as
  /// fast as the client reads them.
  std::size_t gap_from_event = 0;
  std::shared_ptr<stream_log> log = std::make_shared<stream_log>();
  /// Streamed: the connection is dropped after this many events.
  std::optional<std::size_t> cut_after_events;
};

/// One request the server received.
struct recorded_request {
  std::string method;
  std::string path;
  std::string body;
  httplib::Headers headers;  // names compare case-insensitively
  std::chrono::steady_clock::time_point at{};  // when it arrived

  /// The value of header `name` (the first one), if the request had it.
  [[nodiscard]] std::optional<std::string> header(const std::string& name) const {
    const auto it = headers.find(name);
    if (it == headers.end()) return std::nullopt;
    return it->second;
  }
  /// The body as JSON (null when it is not JSON).
  [[nodiscard]] boost::json::value json() const {
    boost::system::error_code ec;
    boost::json::value value = boost::json::parse(body, ec);
    return ec ? boost::json::value() : value;
  }
};

class scripted_server {
 public:
  explicit scripted_server(std::vector<scripted_reply> script = {}) : script_(std::move(script)) {
    server_.set_keep_alive_timeout(1);
    server_.Post(".*", [this](const httplib::Request& request, httplib::Response& response) {
      answer(request, response);
    });
    server_.Get(".*", [this](const httplib::Request& request, httplib::Response& response) {
      answer(request, response);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ > 0) thread_ = std::thread([this] { server_.listen_after_bind(); });
  }

  scripted_server(const scripted_server&) = delete;
  scripted_server& operator=(const scripted_server&) = delete;

  ~scripted_server() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
      // stop() does nothing before the listening loop has started.
      while (!server_.is_running()) std::this_thread::yield();
      server_.stop();
      thread_.join();
    }
  }

  /// Whether the server could bind a port (a test without one cannot run).
  [[nodiscard]] bool listening() const { return port_ > 0; }
  [[nodiscard]] int port() const { return port_; }
  /// `http://127.0.0.1:<port>/v1`, what an OpenAI-compatible client takes.
  [[nodiscard]] std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

  /// Answers each request `answer` gives a reply for, ahead of the script
  /// (which then answers the others, in order).
  void answer_with(std::function<std::optional<scripted_reply>(const recorded_request&)> answer) {
    const std::lock_guard lock(mutex_);
    responder_ = std::move(answer);
  }

  /// Appends a reply to the script.
  void add(scripted_reply reply) {
    const std::lock_guard lock(mutex_);
    script_.push_back(std::move(reply));
  }
  /// Requests received so far (a request counts when it arrives, before its
  /// delay).
  [[nodiscard]] std::size_t calls() const {
    const std::lock_guard lock(mutex_);
    return requests_.size();
  }
  [[nodiscard]] std::vector<recorded_request> requests() const {
    const std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void answer(const httplib::Request& request, httplib::Response& response) {
    scripted_reply reply;
    {
      std::unique_lock lock(mutex_);
      requests_.push_back(
          {request.method, request.path, request.body, request.headers, std::chrono::steady_clock::now()});
      std::optional<scripted_reply> chosen = responder_ ? responder_(requests_.back()) : std::nullopt;
      const std::size_t index = scripted_++;
      if (chosen) {
        --scripted_;
        reply = std::move(*chosen);
      } else if (index < script_.size()) {
        reply = script_[index];
      } else {
        reply.status = 500;
        reply.body = R"({"error":{"message":"scripted_server: no reply left in the script","type":"test"}})";
      }
      wake_.wait_for(lock, reply.delay, [this] { return stopping_; });
    }
    response.status = reply.status;
    for (const auto& [name, value] : reply.headers) response.set_header(name, value);
    if (!reply.events.empty()) return stream(std::move(reply), response);
    if (!reply.chunked && !reply.cut) {
      response.set_content(reply.body, reply.content_type.c_str());
      return;
    }
    auto body = std::make_shared<std::string>(std::move(reply.body));
    const bool cut = reply.cut;
    response.set_chunked_content_provider(reply.content_type, [body, cut](std::size_t offset, httplib::DataSink& sink) {
      constexpr std::size_t chunk = 1024;
      if (cut && offset >= body->size() / 2) return false;  // httplib closes the connection
      if (offset < body->size()) {
        sink.write(body->data() + offset, std::min(chunk, body->size() - offset));
      } else {
        sink.done();
      }
      return true;
    });
  }

  // Writes the events one at a time; a write the client no longer reads
  // fails, and the log says so.
  void stream(scripted_reply reply, httplib::Response& response) {
    auto events = std::make_shared<std::vector<std::string>>(std::move(reply.events));
    auto log = reply.log;
    const auto gap = reply.event_gap;
    const auto gap_from = reply.gap_from_event;
    const auto cut_after = reply.cut_after_events;
    response.set_chunked_content_provider(
        reply.content_type, [this, events, log, gap, gap_from, cut_after](std::size_t, httplib::DataSink& sink) {
          const std::size_t next = log->sent;
          if (next == events->size()) {
            sink.done();
            return true;
          }
          if (cut_after && next >= *cut_after) return false;  // httplib closes the connection
          if (gap.count() > 0 && next >= gap_from) {
            std::unique_lock lock(mutex_);
            if (wake_.wait_for(lock, gap, [this] { return stopping_; })) return false;
          }
          const std::string& event = (*events)[next];
          if (!sink.is_writable() || !sink.write(event.data(), event.size())) {
            log->closed_by_client = true;
            return false;
          }
          ++log->sent;
          return true;
        });
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<scripted_reply> script_;
  std::size_t scripted_ = 0;  // requests the script answered (or had no reply for)
  std::function<std::optional<scripted_reply>(const recorded_request&)> responder_;
  std::vector<recorded_request> requests_;
};

/// A responder (scripted_server::answer_with) that refuses, as `profile`'s
/// API does (its status and error body), a request whose schema its strict
/// mode would refuse; the script answers the rest.
inline std::function<std::optional<scripted_reply>(const recorded_request&)> strict_as(provider_profile profile) {
  return [profile](const recorded_request& request) -> std::optional<scripted_reply> {
    const auto schema = strict_schema_of_request(profile, request.json());
    if (!schema) return std::nullopt;
    const auto refusal = check_provider_schema(*schema, profile);
    if (!refusal) return std::nullopt;
    const auto error = provider_error_for(profile, *refusal);
    return scripted_reply{error.status, error.body, {}};
  };
}

// Replies an OpenAI-style server gives.

/// Ollama's streamed /api/chat answer: a JSON object per line for each piece,
/// then the last with done_reason and the counts, each line `gap` apart.
inline scripted_reply streamed_ollama_chat(const std::vector<std::string>& pieces,
                                           const std::string& done_reason = "stop",
                                           std::chrono::milliseconds gap = std::chrono::milliseconds(0)) {
  auto line = [](const std::string& content, bool done) {
    boost::json::object body{{"model", "qwen2.5:7b"}, {"created_at", "2026-12-05T10:00:00Z"},
                             {"message", boost::json::object{{"role", "assistant"}, {"content", content}}},
                             {"done", done}};
    return body;
  };
  scripted_reply reply;
  reply.content_type = "application/x-ndjson";
  reply.event_gap = gap;
  for (const auto& piece : pieces) reply.events.push_back(boost::json::serialize(line(piece, false)) + "\n");
  auto last = line("", true);
  last["done_reason"] = done_reason;
  last["prompt_eval_count"] = 26;
  last["eval_count"] = static_cast<std::int64_t>(pieces.size());
  reply.events.push_back(boost::json::serialize(last) + "\n");
  return reply;
}

/// The reply's whole stream written again as writes of `bytes` each, `gap`
/// apart: every event, line and multi-byte character is cut somewhere.
inline void cut_into_writes(scripted_reply& reply, std::size_t bytes, std::chrono::milliseconds gap) {
  std::string wire;
  for (const auto& event : reply.events) wire += event;
  reply.events.clear();
  for (std::size_t at = 0; at < wire.size(); at += bytes) reply.events.push_back(wire.substr(at, bytes));
  reply.event_gap = gap;
}

/// A streamed chat completion: server-sent events of the answer in
/// `pieces`, the finish reason, the usage (stream_options.include_usage)
/// and `[DONE]`, each event written `gap` apart.
inline scripted_reply streamed_chat_completion(const std::vector<std::string>& pieces,
                                               const std::string& finish_reason = "stop",
                                               std::chrono::milliseconds gap = std::chrono::milliseconds(0),
                                               std::int64_t prompt_tokens = 10) {
  auto chunk = [](boost::json::object delta, boost::json::value finish) {
    boost::json::object choice{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish)}};
    boost::json::object body{{"id", "chatcmpl-stream"}, {"object", "chat.completion.chunk"}, {"model", "scripted-model"},
                             {"choices", boost::json::array{std::move(choice)}}};
    return "data: " + boost::json::serialize(body) + "\n\n";
  };
  scripted_reply reply;
  reply.content_type = "text/event-stream";
  reply.event_gap = gap;
  reply.events.push_back(chunk({{"role", "assistant"}, {"content", ""}}, nullptr));
  for (const auto& piece : pieces) reply.events.push_back(chunk({{"content", piece}}, nullptr));
  reply.events.push_back(chunk({}, boost::json::string(finish_reason)));
  boost::json::object usage{{"prompt_tokens", prompt_tokens},
                            {"completion_tokens", static_cast<std::int64_t>(pieces.size())},
                            {"total_tokens", prompt_tokens + static_cast<std::int64_t>(pieces.size())}};
  reply.events.push_back("data: " + boost::json::serialize(boost::json::object{
                                        {"id", "chatcmpl-stream"}, {"choices", boost::json::array{}}, {"usage", usage}}) +
                         "\n\n");
  reply.events.push_back("data: [DONE]\n\n");
  return reply;
}

/// A chat completion whose first choice holds `content`.
inline scripted_reply chat_completion(const std::string& content, const std::string& finish_reason = "stop",
                                      std::int64_t prompt_tokens = 10, std::int64_t completion_tokens = 5,
                                      const std::string& model = "scripted-model") {
  boost::json::object message{{"role", "assistant"}, {"content", content}};
  boost::json::object body{
      {"id", "chatcmpl-scripted"},
      {"object", "chat.completion"},
      {"created", 1700000000},
      {"model", model},
      {"choices", boost::json::array{boost::json::object{
                      {"index", 0}, {"message", std::move(message)}, {"finish_reason", finish_reason}}}},
      {"usage", boost::json::object{{"prompt_tokens", prompt_tokens},
                                    {"completion_tokens", completion_tokens},
                                    {"total_tokens", prompt_tokens + completion_tokens}}},
  };
  return {200, boost::json::serialize(body)};
}

/// A completion cut off at max_tokens (`finish_reason: length`).
inline scripted_reply cut_off_completion(const std::string& partial_content) {
  return chat_completion(partial_content, "length");
}

/// A structured-outputs refusal: content null, the reason in `refusal`.
inline scripted_reply refusal(const std::string& reason, const std::string& model = "scripted-model") {
  boost::json::object message{{"role", "assistant"}, {"content", nullptr}, {"refusal", reason}};
  boost::json::object body{
      {"object", "chat.completion"},
      {"model", model},
      {"choices", boost::json::array{boost::json::object{
                      {"index", 0}, {"message", std::move(message)}, {"finish_reason", "stop"}}}},
      {"usage", boost::json::object{{"prompt_tokens", 10}, {"completion_tokens", 3}}},
  };
  return {200, boost::json::serialize(body)};
}

/// An OpenAI-style error: `{"error": {"message", "type", "code"}}`.
inline scripted_reply api_error(int status, const std::string& type, const std::string& code,
                                const std::string& message) {
  boost::json::object error{{"message", message}, {"type", type}, {"param", nullptr}};
  error["code"] = code.empty() ? boost::json::value() : boost::json::value(code);
  return {status, boost::json::serialize(boost::json::object{{"error", std::move(error)}})};
}

/// 429 with a Retry-After header (delta-seconds, or an HTTP date: see http_date).
inline scripted_reply rate_limited(const std::string& retry_after) {
  scripted_reply reply = api_error(429, "requests", "rate_limit_exceeded", "Rate limit reached. Please try again later.");
  reply.headers.emplace_back("Retry-After", retry_after);
  return reply;
}

inline scripted_reply server_error() {
  return api_error(500, "server_error", "", "The server had an error while processing your request.");
}

/// 503, with a Retry-After when one is given.
inline scripted_reply unavailable(const std::string& retry_after = "") {
  scripted_reply reply = api_error(503, "server_error", "", "The engine is currently unavailable.");
  if (!retry_after.empty()) reply.headers.emplace_back("Retry-After", retry_after);
  return reply;
}

/// 400 for a prompt longer than the model's context window.
inline scripted_reply context_length_exceeded() {
  return api_error(400, "invalid_request_error", "context_length_exceeded",
                   "This model's maximum context length is 8192 tokens. However, your messages resulted in "
                   "9000 tokens. Please reduce the length of the messages.");
}

/// `reply`, sent after `delay` (e.g. longer than the client's timeout).
inline scripted_reply delayed(scripted_reply reply, std::chrono::milliseconds delay) {
  reply.delay = delay;
  return reply;
}

/// An HTTP date (RFC 9110 IMF-fixdate) `from_now` from now, for Retry-After.
inline std::string http_date(std::chrono::seconds from_now) {
  const std::time_t at = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() + from_now);
  std::tm utc{};
  gmtime_r(&at, &utc);
  char text[64];
  std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return text;
}

}  // namespace llmdlq::test
