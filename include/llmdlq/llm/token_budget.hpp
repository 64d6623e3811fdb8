// SPDX-License-Identifier: MIT
// A token budget over a sliding time window: what the replays of all
// payloads together may spend, so that a bad hour cannot empty an account.
// Part of the llmdlq::llm library.
#pragma once

#include <algorithm>
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
  explicit token_budget(std::int64_t tokens_per_window = 0, std::chrono::milliseconds window = std::chrono::hours(1),
                        clock_function clock = system_now)
      : limit_(tokens_per_window), window_(window), clock_(clock ? std::move(clock) : clock_function(system_now)) {}

  /// Tokens still available in the current window (the limit when there is none).
  [[nodiscard]] std::int64_t remaining() {
    if (limit_ <= 0) return INT64_MAX;
    const std::lock_guard lock(mutex_);
    forget_old(clock_());
    return limit_ > spent_ ? limit_ - spent_ : 0;
  }

  /// What a call in flight may still spend, held against the window from
  /// reserve() until it is destroyed (after spend() counted what it did).
  class share {
   public:
    share(share&& other) noexcept : budget_(std::exchange(other.budget_, nullptr)), tokens_(other.tokens_) {}
    share& operator=(share&&) = delete;
    share(const share&) = delete;
    share& operator=(const share&) = delete;
    ~share() {
      if (budget_ != nullptr) budget_->give_back(tokens_);
    }
    /// Whether the call may go: the window, less what the calls in flight may spend, was not spent.
    [[nodiscard]] bool admitted() const noexcept { return admitted_; }

   private:
    friend class token_budget;
    share(token_budget* budget, std::int64_t tokens, bool admitted) noexcept
        : budget_(budget), tokens_(tokens), admitted_(admitted) {}
    token_budget* budget_;
    std::int64_t tokens_;
    bool admitted_ = true;
  };

  /// Admits a call that may spend up to `tokens` when the window, less what
  /// the calls in flight hold, is not spent: calls made together then stay
  /// within it as one made after another does (each may pass its end once).
  [[nodiscard]] share reserve(std::int64_t tokens) {
    if (limit_ <= 0) return {nullptr, 0, true};
    const std::lock_guard lock(mutex_);
    forget_old(clock_());
    if (spent_ + held_ >= limit_) return {nullptr, 0, false};
    held_ += std::max<std::int64_t>(tokens, 0);
    return {this, std::max<std::int64_t>(tokens, 0), true};
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
  void give_back(std::int64_t tokens) {
    const std::lock_guard lock(mutex_);
    held_ -= tokens;
  }

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
  std::int64_t held_ = 0;  // by the calls in flight
};

LLMDLQ_END_NAMESPACE
