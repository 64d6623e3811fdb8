// SPDX-License-Identifier: MIT
// openai_compatible_client on libcurl (one easy handle, one mutex) and
// Boost.JSON (request and response bodies).
#include "llmdlq/config.hpp"
#include "llmdlq/llm/openai_compatible_client.hpp"
#include "llmdlq/chat_stream.hpp"
#include "llmdlq/stream_judge.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <string>
#include <string_view>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

LLMDLQ_BEGIN_NAMESPACE

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
using header_list = std::unique_ptr<curl_slist, list_deleter>;

call_error configuration_error(std::string message) {
  return call_error{call_decision{call_verdict::retry_later, "configuration", std::nullopt, std::nullopt},
                    std::nullopt, "openai_compatible_client: " + std::move(message), milliseconds{0}};
}

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

// The request body; nothing when the request cannot be sent as it stands.
expected<std::string, std::string> request_body(const llm_request& request, bool structured_outputs,
                                                bool stream = false) {
  boost::json::object body;
  body["model"] = request.model;
  boost::json::array messages;
  for (const chat_message& message : request.messages) {
    messages.push_back(boost::json::object{{"role", message.role}, {"content", message.content}});
  }
  body["messages"] = std::move(messages);
  if (request.max_tokens) body["max_tokens"] = *request.max_tokens;
  if (request.temperature) {
    if (!std::isfinite(*request.temperature)) return unexpected(std::string("temperature is not a finite number"));
    body["temperature"] = *request.temperature;
  }
  if (request.seed) body["seed"] = *request.seed;
  if (stream) {
    body["stream"] = true;
    body["stream_options"] = boost::json::object{{"include_usage", true}};
  }
  if (request.json_schema && structured_outputs) {
    boost::system::error_code ec;
    boost::json::value schema = boost::json::parse(*request.json_schema, ec);
    if (ec) return unexpected("json_schema is not JSON: " + ec.message());
    body["response_format"] = boost::json::object{
        {"type", "json_schema"},
        {"json_schema", boost::json::object{{"name", "response"}, {"strict", true}, {"schema", std::move(schema)}}}};
  }
  return boost::json::serialize(body);
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

// A streamed answer as it arrives: server-sent events into the judge while
// the status is 2xx (an error status's body is kept, for its message).
struct streamed_body {
  CURL* handle;
  chat_stream_decoder decoder{chat_stream_format::openai_sse};
  stream_judge* judge;
  std::string error_text;  // the body of a non-2xx answer, up to `limit`
  std::size_t limit = 0;
  std::size_t received = 0;
  bool too_large = false;
  bool cancelled = false;
};

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
  const std::string_view text = s.decoder.feed(std::string_view(data, size));
  if (!text.empty() && s.judge->feed(text).dead) {
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

std::int64_t token_count(const boost::json::object& usage, std::string_view name) {
  const auto* count = usage.if_contains(name);
  if (!count) return 0;
  if (const auto* n = count->if_int64()) return *n;
  if (const auto* n = count->if_uint64()) return static_cast<std::int64_t>(std::min<std::uint64_t>(*n, INT64_MAX));
  return 0;
}

// choices[0] of a chat completion; nothing when the body is not one.
std::optional<completion> parse_completion(std::string_view body) {
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(body, ec);
  if (ec || !parsed.is_object()) return std::nullopt;
  const auto& object = parsed.get_object();
  const auto* choices = object.if_contains("choices");
  if (!choices || !choices->is_array() || choices->get_array().empty()) return std::nullopt;
  const auto* choice = choices->get_array().front().if_object();
  if (!choice) return std::nullopt;
  const auto* message = choice->if_contains("message");
  if (!message || !message->is_object()) return std::nullopt;

  completion result;
  // Content is null in a refusal (and in tool calls, which are not asked for).
  if (const auto* content = message->get_object().if_contains("content"); content && !content->is_null()) {
    if (!content->is_string()) return std::nullopt;
    result.text = content->get_string();
  }
  if (const auto* refusal = message->get_object().if_contains("refusal"); refusal && refusal->is_string()) {
    result.refusal = std::string(refusal->get_string());
  }
  if (const auto* reason = choice->if_contains("finish_reason"); reason && reason->is_string()) {
    result.finish_reason = reason->get_string();
  }
  if (const auto* usage = object.if_contains("usage"); usage && usage->is_object()) {
    result.usage = {token_count(usage->get_object(), "prompt_tokens"),
                    token_count(usage->get_object(), "completion_tokens")};
  }
  if (const auto* model = object.if_contains("model"); model && model->is_string()) {
    result.model = model->get_string();
  }
  return result;
}

void replace_all(std::string& text, std::string_view what, std::string_view with) {
  if (what.empty()) return;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size())) {
    text.replace(at, what.size(), with);
  }
}

}  // namespace

struct openai_compatible_client::impl {
  openai_compatible_client_options options;
  std::string endpoint;  // base_url without its trailing slash
  std::string url;       // endpoint + /chat/completions
  header_list headers;
  std::mutex mutex;  // one call at a time on the handle
  std::unique_ptr<CURL, easy_deleter> handle;
  char curl_message[CURL_ERROR_SIZE] = {};

  call_error error(call_decision decision, std::optional<int> status, std::string message, milliseconds latency) const {
    replace_all(message, options.api_key, "[api key]");  // servers may echo a wrong key
    return call_error{std::move(decision), status, std::move(message), latency};
  }

  expected<completion, call_error> complete(const llm_request& request);
  expected<completion, call_error> complete_streamed(const llm_request& request, stream_judge& judge);
  // The request's options on the handle, but for where the body goes.
  void prepare(CURL* h, const std::string& body);
};

openai_compatible_client::openai_compatible_client(std::unique_ptr<impl> state) noexcept : impl_(std::move(state)) {}
openai_compatible_client::openai_compatible_client(openai_compatible_client&&) noexcept = default;
openai_compatible_client& openai_compatible_client::operator=(openai_compatible_client&&) noexcept = default;
openai_compatible_client::~openai_compatible_client() = default;

expected<openai_compatible_client, call_error> openai_compatible_client::open(openai_compatible_client_options options) {
  auto state = std::make_unique<impl>();
  state->endpoint = options.base_url;
  while (!state->endpoint.empty() && state->endpoint.back() == '/') state->endpoint.pop_back();
  if (!curl_ready()) return unexpected(configuration_error("libcurl failed to initialise"));
  // The URL is not quoted back: it might hold a password.
  if (!usable_base_url(state->endpoint)) {
    return unexpected(configuration_error("base_url must be an http or https URL without credentials, query or fragment"));
  }
  state->url = state->endpoint + "/chat/completions";
  if (has_line_break(options.api_key)) return unexpected(configuration_error("api_key holds a line break"));
  if (options.connect_timeout < milliseconds{0} || options.timeout < milliseconds{0}) {
    return unexpected(configuration_error("a timeout is negative"));
  }

  std::vector<std::string> lines = {"Content-Type: application/json", "Accept: application/json",
                                    "Expect:"};  // no 100-continue round trip before the body
  if (!options.api_key.empty()) lines.push_back("Authorization: Bearer " + options.api_key);
  for (const auto& [name, value] : options.headers) {
    if (name.empty() || name.find(':') != std::string::npos || has_line_break(name) || has_line_break(value)) {
      return unexpected(configuration_error("a header name is empty or holds ':' or a line break, or its value does"));
    }
    lines.push_back(name + ": " + value);
  }
  for (const std::string& line : lines) {
    // The list keeps its head: appending returns it (or null, leaving it whole).
    curl_slist* head = curl_slist_append(state->headers.get(), line.c_str());
    if (!head) return unexpected(configuration_error("out of memory"));
    if (!state->headers) state->headers.reset(head);
  }
  state->handle.reset(curl_easy_init());
  if (!state->handle) return unexpected(configuration_error("curl_easy_init failed"));
  state->options = std::move(options);
  return openai_compatible_client(std::move(state));
}

std::string openai_compatible_client::endpoint() const { return impl_->endpoint; }

expected<completion, call_error> openai_compatible_client::complete(const llm_request& request) {
  const std::lock_guard lock(impl_->mutex);
  return impl_->complete(request);
}

void openai_compatible_client::impl::prepare(CURL* h, const std::string& body) {
  curl_easy_reset(h);  // keeps the connection cache
  curl_message[0] = '\0';
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options.max_response_bytes));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_message);
}

expected<completion, call_error> openai_compatible_client::impl::complete(const llm_request& request) {
  auto body = request_body(request, options.structured_outputs);
  if (!body) {
    return unexpected(error({call_verdict::dead_letter, "invalid_request", failure_category::poison, std::nullopt},
                            std::nullopt, "openai_compatible_client: " + body.error(), milliseconds{0}));
  }

  CURL* h = handle.get();
  response_body response{{}, options.max_response_bytes, false};
  prepare(h, *body);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &append_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response);

  const auto start = std::chrono::steady_clock::now();
  const CURLcode code = curl_easy_perform(h);
  const auto latency = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);

  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  call_outcome outcome;
  if (status != 0) outcome.http_status = static_cast<int>(status);
  const bool too_large = response.too_large || code == CURLE_FILESIZE_EXCEEDED;
  if (code == CURLE_OPERATION_TIMEDOUT) {
    outcome.timed_out = true;
  } else if (code != CURLE_OK && !too_large) {
    outcome.connection_failed = true;
  }
  outcome.body = response.text;
  if (outcome.http_status) outcome.retry_after = retry_after(h);

  call_decision decision = classify_call(outcome);
  if (decision.verdict != call_verdict::proceed) {
    std::string message;
    if (outcome.timed_out || outcome.connection_failed) {
      message = std::string(curl_easy_strerror(code));
      if (curl_message[0] != '\0') message += std::string(": ") + curl_message;
      message = "no response from " + url + ": " + message;
    } else {
      message = "HTTP " + std::to_string(status) + " from " + url + ": " + error_detail(response.text);
    }
    return unexpected(error(std::move(decision), outcome.http_status, std::move(message), latency));
  }
  if (too_large) {
    return unexpected(error({call_verdict::retry_later, "response_too_large", std::nullopt, std::nullopt},
                            outcome.http_status,
                            "the response from " + url + " is longer than max_response_bytes (" +
                                std::to_string(options.max_response_bytes) + ")",
                            latency));
  }
  std::optional<completion> answer = parse_completion(response.text);
  if (!answer) {
    return unexpected(error({call_verdict::retry_later, "invalid_response", std::nullopt, std::nullopt},
                            outcome.http_status,
                            "HTTP " + std::to_string(status) + " from " + url +
                                " is not a chat completion: " + error_detail(response.text),
                            latency));
  }
  if (answer->model.empty()) answer->model = request.model;  // servers that do not say
  answer->latency = latency;
  return *std::move(answer);
}

expected<completion, call_error> openai_compatible_client::complete_streamed(const llm_request& request,
                                                                            stream_judge& judge) {
  const std::lock_guard lock(impl_->mutex);
  return impl_->complete_streamed(request, judge);
}

expected<completion, call_error> openai_compatible_client::impl::complete_streamed(const llm_request& request,
                                                                                   stream_judge& judge) {
  auto body = request_body(request, options.structured_outputs, true);
  if (!body) {
    return unexpected(error({call_verdict::dead_letter, "invalid_request", failure_category::poison, std::nullopt},
                            std::nullopt, "openai_compatible_client: " + body.error(), milliseconds{0}));
  }
  CURL* h = handle.get();
  streamed_body stream{h, chat_stream_decoder(chat_stream_format::openai_sse), &judge, {}, options.max_response_bytes};
  prepare(h, *body);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &judge_stream);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &stream);

  const auto start = std::chrono::steady_clock::now();
  const CURLcode code = curl_easy_perform(h);
  const auto latency = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  const chat_stream_decoder& decoder = stream.decoder;
  auto answer = [&] {
    completion c;
    c.text = std::string(judge.received());
    c.finish_reason = decoder.finish_reason();
    c.refusal = decoder.refusal();
    if (decoder.usage()) c.usage = *decoder.usage();
    c.model = decoder.model().empty() ? request.model : decoder.model();
    c.latency = latency;
    return c;
  };
  if (stream.cancelled) {
    completion c = answer();
    c.cancelled = stream_cancel{judge.received().size(), decoder.content_events()};
    return c;
  }

  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  call_outcome outcome;
  if (status != 0) outcome.http_status = static_cast<int>(status);
  const bool too_large = stream.too_large || code == CURLE_FILESIZE_EXCEEDED;
  if (code == CURLE_OPERATION_TIMEDOUT) {
    outcome.timed_out = true;
  } else if (code != CURLE_OK && !too_large && !decoder.error()) {
    outcome.connection_failed = true;
  }
  outcome.body = stream.error_text;
  if (outcome.http_status) outcome.retry_after = retry_after(h);
  call_decision decision = classify_call(outcome);
  if (decision.verdict != call_verdict::proceed) {
    std::string message;
    if (outcome.timed_out || outcome.connection_failed) {
      message = std::string(curl_easy_strerror(code));
      if (curl_message[0] != '\0') message += std::string(": ") + curl_message;
      message = "no response from " + url + ": " + message;
    } else {
      message = "HTTP " + std::to_string(status) + " from " + url + ": " + error_detail(stream.error_text);
    }
    return unexpected(error(std::move(decision), outcome.http_status, std::move(message), latency));
  }
  if (too_large) {
    return unexpected(error({call_verdict::retry_later, "response_too_large", std::nullopt, std::nullopt},
                            outcome.http_status,
                            "the stream from " + url + " is longer than max_response_bytes (" +
                                std::to_string(options.max_response_bytes) + ")",
                            latency));
  }
  if (decoder.error() || !decoder.done()) {
    return unexpected(error({call_verdict::retry_later, "invalid_response", std::nullopt, std::nullopt},
                            outcome.http_status,
                            "the stream from " + url + " is not a chat completion stream: " +
                                decoder.error().value_or("it ended before [DONE]"),
                            latency));
  }
  return answer();
}

LLMDLQ_END_NAMESPACE
