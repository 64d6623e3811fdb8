// SPDX-License-Identifier: MIT
#include "http_endpoint.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <ctime>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "llmdlq/stream_judge.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace llm_detail {

namespace {

using std::chrono::milliseconds;

// Once per process, whichever thread opens the first client.
bool curl_ready() {
  static const bool ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return ready;
}

struct easy_deleter {
  void operator()(CURL* handle) const noexcept { curl_easy_cleanup(handle); }
};
struct list_deleter {
  void operator()(curl_slist* list) const noexcept { curl_slist_free_all(list); }
};
struct url_deleter {
  void operator()(CURLU* url) const noexcept { curl_url_cleanup(url); }
};

bool has_line_break(std::string_view text) {
  return text.find_first_of("\r\n") != std::string_view::npos || text.find('\0') != std::string_view::npos;
}

// Whether `url` is http(s) without credentials, query or fragment.
bool usable_base_url(const std::string& url) {
  std::unique_ptr<CURLU, url_deleter> parsed(curl_url());
  if (!parsed || curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return false;
  char* scheme = nullptr;
  if (curl_url_get(parsed.get(), CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) return false;
  const bool web = std::string_view(scheme) == "http" || std::string_view(scheme) == "https";
  curl_free(scheme);
  if (!web) return false;
  for (CURLUPart part : {CURLUPART_USER, CURLUPART_PASSWORD, CURLUPART_QUERY, CURLUPART_FRAGMENT}) {
    char* value = nullptr;
    if (curl_url_get(parsed.get(), part, &value, 0) == CURLUE_OK) {
      curl_free(value);
      return false;
    }
  }
  return true;
}

struct response_body {
  std::string text;
  std::size_t limit = 0;
  bool too_large = false;
};

std::size_t append_body(char* data, std::size_t, std::size_t size, void* user) {
  auto& body = *static_cast<response_body*>(user);
  if (size > body.limit - body.text.size()) {
    body.too_large = true;
    return 0;  // anything but `size` makes libcurl abort the transfer
  }
  body.text.append(data, size);
  return size;
}

// A streamed answer as it arrives: chat chunks into the judge while the
// status is 2xx (an error status's body is kept, for its message).
struct streamed_body {
  CURL* handle;
  chat_stream_decoder decoder;
  stream_judge* judge;
  std::string error_text;
  std::size_t limit = 0;
  std::size_t received = 0;
  bool too_large = false;
  bool cancelled = false;
  bool whole = false;     // the server answered with one JSON body, not a stream
  std::string body{};     // that body
};

bool is_json_body(CURL* handle) {
  char* type = nullptr;
  if (curl_easy_getinfo(handle, CURLINFO_CONTENT_TYPE, &type) != CURLE_OK || type == nullptr) return false;
  return std::string_view(type).starts_with("application/json");
}

std::size_t judge_stream(char* data, std::size_t, std::size_t size, void* user) {
  auto& s = *static_cast<streamed_body*>(user);
  if (size > s.limit - std::min(s.limit, s.received)) {
    s.too_large = true;
    return 0;
  }
  s.received += size;
  long status = 0;
  curl_easy_getinfo(s.handle, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status >= 300) {
    s.error_text.append(data, size);
    return size;
  }
  if (s.whole || (s.received == size && is_json_body(s.handle))) {
    s.whole = true;
    s.body.append(data, size);
    return size;
  }
  const std::string_view text = s.decoder.feed(std::string_view(data, size));
  if (!text.empty()) s.judge->feed(text);
  if (s.decoder.refusal() && !s.judge->verdict().dead) s.judge->refuse(*s.decoder.refusal());
  if (s.judge->verdict().dead) {
    s.cancelled = true;
    return 0;  // closes the connection: the rest is not generated
  }
  return s.decoder.error() ? 0 : size;
}

// Retry-After as delta-seconds or an HTTP date (which libcurl parses).
std::optional<milliseconds> retry_after(CURL* handle) {
  curl_header* header = nullptr;
  if (curl_easy_header(handle, "Retry-After", 0, CURLH_HEADER, -1, &header) != CURLHE_OK) return std::nullopt;
  const std::string_view value = header->value;
  if (!value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (value.size() > 9) return std::nullopt;  // over 30 years: not a delay
    return std::chrono::seconds(std::stoll(std::string(value)));
  }
  const std::time_t at = curl_getdate(header->value, nullptr);
  if (at == -1) return std::nullopt;
  const auto delay = std::chrono::system_clock::from_time_t(at) - std::chrono::system_clock::now();
  return std::max(milliseconds{0}, std::chrono::ceil<milliseconds>(delay));
}

void replace_all(std::string& text, std::string_view what, std::string_view with) {
  if (what.empty()) return;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size())) {
    text.replace(at, what.size(), with);
  }
}


}  // namespace

// What a person reads of an error body: the API's own message when it gave
// one ({"error": {"message": ...}} or {"error": "..."}), else its start.
std::string error_detail(std::string_view body) {
  constexpr std::size_t max_detail = 500;
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(body, ec);
  if (!ec) {
    if (const auto* object = parsed.if_object()) {
      if (const auto* error = object->if_contains("error")) {
        if (const auto* text = error->if_string()) return std::string(text->subview().substr(0, max_detail));
        if (const auto* inner = error->if_object()) {
          if (const auto* message = inner->if_contains("message"); message && message->is_string()) {
            return std::string(message->get_string().subview().substr(0, max_detail));
          }
        }
      }
    }
  }
  return std::string(body.substr(0, max_detail));
}

struct http_endpoint::state {
  std::mutex mutex;  // one call at a time on the handle
  std::unique_ptr<CURL, easy_deleter> handle;
  std::unique_ptr<curl_slist, list_deleter> headers;
  char curl_message[CURL_ERROR_SIZE] = {};
};

http_endpoint::~http_endpoint() = default;

expected<std::unique_ptr<http_endpoint>, call_error> http_endpoint::open(http_endpoint_options options) {
  auto configuration = [&](std::string message) {
    return unexpected(call_error{call_decision{call_verdict::retry_later, "configuration", std::nullopt, std::nullopt},
                                 std::nullopt, options.client + ": " + std::move(message), milliseconds{0}});
  };
  std::unique_ptr<http_endpoint> e(new http_endpoint());
  e->endpoint_ = options.base_url;
  while (!e->endpoint_.empty() && e->endpoint_.back() == '/') e->endpoint_.pop_back();
  if (!curl_ready()) return configuration("libcurl failed to initialise");
  // The URL is not quoted back: it might hold a password.
  if (!usable_base_url(e->endpoint_)) {
    return configuration("base_url must be an http or https URL without credentials, query or fragment");
  }
  e->url_ = e->endpoint_ + options.path;
  if (has_line_break(options.api_key)) return configuration("api_key holds a line break");
  if (options.connect_timeout < milliseconds{0} || options.timeout < milliseconds{0}) {
    return configuration("a timeout is negative");
  }
  e->state_ = std::make_unique<state>();
  std::vector<std::string> lines = {"Content-Type: application/json", "Accept: application/json",
                                    "Expect:"};  // no 100-continue round trip before the body
  if (!options.api_key.empty()) lines.push_back("Authorization: Bearer " + options.api_key);
  for (const auto& [name, value] : options.headers) {
    if (name.empty() || name.find(':') != std::string::npos || has_line_break(name) || has_line_break(value)) {
      return configuration("a header name is empty or holds ':' or a line break, or its value does");
    }
    lines.push_back(name + ": " + value);
  }
  for (const std::string& line : lines) {
    // The list keeps its head: appending returns it (or null, leaving it whole).
    curl_slist* head = curl_slist_append(e->state_->headers.get(), line.c_str());
    if (!head) return configuration("out of memory");
    if (!e->state_->headers) e->state_->headers.reset(head);
  }
  e->state_->handle.reset(curl_easy_init());
  if (!e->state_->handle) return configuration("curl_easy_init failed");
  e->options_ = std::move(options);
  return e;
}

call_error http_endpoint::error(call_decision decision, std::optional<int> status, std::string message,
                                milliseconds latency) const {
  replace_all(message, options_.api_key, "[api key]");  // servers may echo a wrong key
  return call_error{std::move(decision), status, std::move(message), latency};
}

namespace {

// The request's options on the handle, but for where the answer goes.
void prepare(CURL* h, const std::string& url, curl_slist* headers, const http_endpoint_options& options,
             const std::string& body, char* curl_message) {
  curl_easy_reset(h);  // keeps the connection cache
  curl_message[0] = '\0';
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options.max_response_bytes));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_message);
}

// The call's failure, if it failed: the transport's, the status's, or an answer over the limit.
std::optional<call_error> failure_of(const http_endpoint& e, CURL* h, CURLcode code, bool too_large,
                                     bool decoder_failed, std::string_view error_body, const char* curl_message,
                                     std::size_t max_bytes, milliseconds latency) {
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  call_outcome outcome;
  if (status != 0) outcome.http_status = static_cast<int>(status);
  too_large = too_large || code == CURLE_FILESIZE_EXCEEDED;
  if (code == CURLE_OPERATION_TIMEDOUT) {
    outcome.timed_out = true;
  } else if (code != CURLE_OK && !too_large && !decoder_failed) {
    outcome.connection_failed = true;
  }
  outcome.body = error_body;
  if (outcome.http_status) outcome.retry_after = retry_after(h);
  call_decision decision = classify_call(outcome);
  if (decision.verdict != call_verdict::proceed) {
    std::string message;
    if (outcome.timed_out || outcome.connection_failed) {
      message = std::string(curl_easy_strerror(code));
      if (curl_message[0] != '\0') message += std::string(": ") + curl_message;
      message = "no response from " + e.url() + ": " + message;
    } else {
      message = "HTTP " + std::to_string(status) + " from " + e.url() + ": " + error_detail(error_body);
    }
    return e.error(std::move(decision), outcome.http_status, std::move(message), latency);
  }
  if (too_large) {
    return e.error({call_verdict::retry_later, "response_too_large", std::nullopt, std::nullopt}, outcome.http_status,
                   "the response from " + e.url() + " is longer than max_response_bytes (" +
                       std::to_string(max_bytes) + ")",
                   latency);
  }
  return std::nullopt;
}

}  // namespace

expected<http_reply, call_error> http_endpoint::post(const std::string& body) {
  const std::lock_guard lock(state_->mutex);
  CURL* h = state_->handle.get();
  response_body response{{}, options_.max_response_bytes, false};
  prepare(h, url_, state_->headers.get(), options_, body, state_->curl_message);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &append_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response);
  const auto start = std::chrono::steady_clock::now();
  const CURLcode code = curl_easy_perform(h);
  const auto latency = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  if (auto failed = failure_of(*this, h, code, response.too_large, false, response.text, state_->curl_message,
                               options_.max_response_bytes, latency)) {
    return unexpected(std::move(*failed));
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  return http_reply{status, std::move(response.text), latency};
}

expected<streamed_reply, call_error> http_endpoint::post_streamed(const std::string& body, chat_stream_format format,
                                                                 stream_judge& judge) {
  const std::lock_guard lock(state_->mutex);
  CURL* h = state_->handle.get();
  streamed_body stream{h, chat_stream_decoder(format), &judge, {}, options_.max_response_bytes};
  prepare(h, url_, state_->headers.get(), options_, body, state_->curl_message);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &judge_stream);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &stream);
  const auto start = std::chrono::steady_clock::now();
  const CURLcode code = curl_easy_perform(h);
  const auto latency = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  if (stream.cancelled) return streamed_reply{std::move(stream.decoder), true, latency, std::nullopt};
  if (auto failed = failure_of(*this, h, code, stream.too_large, stream.decoder.error().has_value(), stream.error_text,
                               state_->curl_message, options_.max_response_bytes, latency)) {
    return unexpected(std::move(*failed));
  }
  if (stream.whole) {
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    return streamed_reply{std::move(stream.decoder), false, latency, http_reply{status, std::move(stream.body), latency}};
  }
  if (stream.decoder.error() || !stream.decoder.done()) {
    return unexpected(error({call_verdict::retry_later, "invalid_response", std::nullopt, std::nullopt}, std::nullopt,
                            "the stream from " + url_ + " is not a chat completion stream: " +
                                stream.decoder.error().value_or("it ended before its last chunk"),
                            latency));
  }
  return streamed_reply{std::move(stream.decoder), false, latency, std::nullopt};
}

completion streamed_completion(const streamed_reply& reply, stream_judge& judge, const std::string& model) {
  const chat_stream_decoder& decoder = reply.decoder;
  completion c;
  c.text = std::string(judge.received());
  c.finish_reason = decoder.finish_reason();
  c.refusal = decoder.refusal();
  if (decoder.usage()) c.usage = *decoder.usage();
  c.model = decoder.model().empty() ? model : decoder.model();
  c.latency = reply.latency;
  if (reply.cancelled) {
    c.cancelled = stream_cancel{judge.received().size(), decoder.content_events()};
    judge.cancel(decoder.content_events());
  }
  return c;
}

}  // namespace llm_detail
LLMDLQ_END_NAMESPACE
