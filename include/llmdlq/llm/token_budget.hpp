// SPDX-License-Identifier: MIT
// A token budget over a sliding time window: what the replays of all
// payloads together may spend, so that a bad hour cannot empty an account.
// Part of the llmdlq::llm library.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>

#include "llmdlq/config.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Thread-safe. A budget of 0 tokens means no limit.
class token_budget {
 public:
  explicit token_budget(std::int64_t tokens_per_window = 0,
                        std::chrono::milliseconds window = std::chrono::hours(1), clock_function clock = system_now)
      : limit_(tokens_per_window), window_(window), clock_(clock ? std::move(clock) : clock_function(system_now)) {}

  /// Tokens still available in the current window (the limit when there is none).
  [[nodiscard]] std::int64_t remaining() {
    if (limit_ <= 0) return INT64_MAX;
    const std::lock_guard lock(mutex_);
    forget_old(clock_());
    return limit_ > spent_ ? limit_ - spent_ : 0;
  }

  /// Counts tokens that were spent (also past the limit: they are gone).
  void spend(std::int64_t tokens) {
    if (limit_ <= 0 || tokens <= 0) return;
    const std::lock_guard lock(mutex_);
    const timestamp now = clock_();
    forget_old(now);
    spending_.emplace_back(now, tokens);
    spent_ += tokens;
  }

 private:
  void forget_old(timestamp now) {
    while (!spending_.empty() && spending_.front().first + window_ <= now) {
      spent_ -= spending_.front().second;
      spending_.pop_front();
    }
  }

  std::int64_t limit_;
  std::chrono::milliseconds window_;
  clock_function clock_;
  std::mutex mutex_;
  std::deque<std::pair<timestamp, std::int64_t>> spending_;
  std::int64_t spent_ = 0;
};

LLMDLQ_END_NAMESPACE
