// SPDX-License-Identifier: MIT
// What a replay and a redrive share while they run: the state's answers as
// a run reports them, the store's lease, and the pace of letters. Private
// to llmdlq_llm.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/replay_error.hpp"
#include "llmdlq/replay_state.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// A part's failure, its code kept, its message saying what the run was doing.
inline replay_error failed(std::string_view doing, replay_error error) {
  error.message = std::string(doing) + error.message;
  return error;
}

/// The state's failures, as a run reports them.
template <class T>
expected<T, replay_error> state_answer(expected<T, replay_state_error> answer) {
  if (!answer) return unexpected(replay_error_of(std::move(answer.error())));
  if constexpr (std::is_void_v<T>) {
    return {};
  } else {
    return std::move(*answer);
  }
}

/// The lease a run holds on its store: taken, renewed once a third of its
/// time has passed (by whichever of the run's threads comes first), and
/// given back however the run ends.
class run_lease {
 public:
  run_lease(replay_state& state, std::string name, std::string owner, std::chrono::seconds ttl, clock_function clock)
      : state_(state), name_(std::move(name)), owner_(std::move(owner)), ttl_(ttl), clock_(std::move(clock)) {}
  run_lease(const run_lease&) = delete;
  run_lease& operator=(const run_lease&) = delete;
  ~run_lease() {
    if (held_) (void)state_.release_lease(name_, owner_);
  }

  /// lease_held while another run holds it.
  expected<void, replay_error> take() {
    if (auto lease = state_answer(state_.acquire_lease(name_, owner_, ttl_)); !lease) return lease;
    taken_ = clock_();
    held_ = true;
    return {};
  }

  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  /// lease_lost when another run took it meanwhile.
  expected<void, replay_error> keep() {
    const std::lock_guard lock(mutex_);
    const timestamp now = clock_();
    if (now - taken_ < ttl_ / 3) return {};
    if (auto lease = state_.acquire_lease(name_, owner_, ttl_); !lease) {
      // A store that failed is not a lost lease.
      if (lease.error().code != replay_state_errc::lease_held) return unexpected(replay_error_of(lease.error()));
      return unexpected(replay_error{replay_errc::lease_lost, "the lease went to " + lease.error().holder,
                                     lease.error().holder, lease.error().expires_at});
    }
    taken_ = now;
    return {};
  }

 private:
  replay_state& state_;
  std::string name_;
  std::string owner_;
  std::chrono::seconds ttl_;
  clock_function clock_;
  std::mutex mutex_;  // guards taken_
  timestamp taken_{};
  bool held_ = false;
};

/// Letters at `rate` per second (0: no limit): pace() waits until the next
/// may go. Threads that pace together share the rate.
class run_pace {
 public:
  run_pace(double rate, clock_function clock, std::function<void(std::chrono::milliseconds)> sleep)
      : rate_(rate), clock_(std::move(clock)), sleep_(std::move(sleep)), next_(clock_()) {}

  void pace() {
    if (rate_ <= 0) return;
    timestamp slot{};
    timestamp now{};
    {
      const std::lock_guard lock(mutex_);
      now = clock_();
      slot = std::max(next_, now);
      next_ = slot + std::chrono::milliseconds(static_cast<std::int64_t>(1000.0 / rate_));
    }
    if (slot > now) wait(std::chrono::duration_cast<std::chrono::milliseconds>(slot - now));
  }

 private:
  void wait(std::chrono::milliseconds d) const {
    if (d.count() <= 0) return;
    if (sleep_) {
      sleep_(d);
    } else {
      std::this_thread::sleep_for(d);
    }
  }

  double rate_;
  clock_function clock_;
  std::function<void(std::chrono::milliseconds)> sleep_;
  std::mutex mutex_;  // guards next_
  timestamp next_;
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
