// SPDX-License-Identifier: MIT
// For a host's own unit tests: a scripted in-process model and a manual
// clock, so that a test can drive its recovery ladder configuration (with
// the memory sink) in a Catch2 or GoogleTest case without any server.
// Part of the llmdlq::llm library.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/llm/client.hpp"
#include "llmdlq/memory_sink.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace testing {

/// A clock that moves only when told: `now()` for clock_function options,
/// `sleep()` for the ladder's sleep (advancing instead of waiting).
class manual_clock {
 public:
  explicit manual_clock(timestamp start = timestamp(std::chrono::milliseconds(1'800'000'000'000))) : now_(start) {}

  [[nodiscard]] timestamp now() const {
    const std::lock_guard lock(mutex_);
    return now_;
  }
  void advance(std::chrono::milliseconds by) {
    const std::lock_guard lock(mutex_);
    now_ += by;
  }
  /// What the ladder slept, in order.
  [[nodiscard]] std::vector<std::chrono::milliseconds> sleeps() const {
    const std::lock_guard lock(mutex_);
    return sleeps_;
  }

  /// A clock_function reading this clock (which must outlive it).
  [[nodiscard]] clock_function function() {
    return [this] { return now(); };
  }
  /// A sleep function that advances this clock.
  [[nodiscard]] std::function<void(std::chrono::milliseconds)> sleeper() {
    return [this](std::chrono::milliseconds d) {
      const std::lock_guard lock(mutex_);
      sleeps_.push_back(d);
      now_ += d;
    };
  }

 private:
  mutable std::mutex mutex_;
  timestamp now_;
  std::vector<std::chrono::milliseconds> sleeps_;
};

/// An llm_client that answers from a script, in order, and records every
/// request. When the script runs out it answers with a call_error
/// (`script_exhausted`), so a test sees an unexpected extra call.
class scripted_llm_client final : public llm_client {
 public:
  using answer = std::variant<completion, call_error>;

  explicit scripted_llm_client(std::string endpoint = "scripted://model") : endpoint_(std::move(endpoint)) {}

  /// Queues an answer.
  scripted_llm_client& then(answer a) {
    const std::lock_guard lock(mutex_);
    script_.push_back(std::move(a));
    return *this;
  }
  /// Queues a completion with this text.
  scripted_llm_client& then_reply(std::string text, token_usage usage = {10, 10}, std::string finish_reason = "stop") {
    completion c;
    c.text = std::move(text);
    c.finish_reason = std::move(finish_reason);
    c.usage = usage;
    return then(std::move(c));
  }
  /// Queues a failed call (`reason` as call_outcome.hpp names them: rate_limited, server_error, timeout, ...).
  scripted_llm_client& then_fail(std::string reason, call_verdict verdict = call_verdict::retry_later,
                                 std::optional<std::chrono::milliseconds> retry_after = std::nullopt) {
    call_error e;
    e.decision.verdict = verdict;
    e.decision.reason = std::move(reason);
    e.decision.retry_after = retry_after;
    e.message = e.decision.reason;
    return then(std::move(e));
  }

  [[nodiscard]] expected<completion, call_error> complete(const llm_request& request) override {
    const std::lock_guard lock(mutex_);
    requests_.push_back(request);
    if (script_.empty()) {
      call_error e;
      e.decision.verdict = call_verdict::retry_later;
      e.decision.reason = "script_exhausted";
      e.message = "the scripted client has no answer left";
      return unexpected(std::move(e));
    }
    answer next = std::move(script_.front());
    script_.pop_front();
    if (auto* c = std::get_if<completion>(&next)) {
      if (c->model.empty()) c->model = request.model;
      return std::move(*c);
    }
    return unexpected(std::get<call_error>(std::move(next)));
  }

  [[nodiscard]] std::string endpoint() const override { return endpoint_; }

  /// Every request received, in order.
  [[nodiscard]] std::vector<llm_request> requests() const {
    const std::lock_guard lock(mutex_);
    return requests_;
  }
  [[nodiscard]] std::size_t calls() const {
    const std::lock_guard lock(mutex_);
    return requests_.size();
  }
  [[nodiscard]] std::size_t answers_left() const {
    const std::lock_guard lock(mutex_);
    return script_.size();
  }

 private:
  std::string endpoint_;
  mutable std::mutex mutex_;
  std::deque<answer> script_;
  std::vector<llm_request> requests_;
};

}  // namespace testing
LLMDLQ_END_NAMESPACE
