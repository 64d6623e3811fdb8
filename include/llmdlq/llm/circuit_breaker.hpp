// SPDX-License-Identifier: MIT
// A circuit breaker per (endpoint, model), against the retry loop of death:
// server errors and timeouts over a threshold open it, a cool-down later a
// probe may pass (half-open), and a success closes it again. Rate limits
// (429) throttle the endpoint until its Retry-After and never open it.
// Part of the llmdlq::llm library.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct circuit_breaker_options {
  std::uint32_t failure_threshold = 5;            ///< failures within `window` that open the circuit
  std::chrono::milliseconds window{std::chrono::seconds(60)};
  std::chrono::milliseconds cool_down{std::chrono::seconds(30)};  ///< open this long before a probe
};

enum class circuit_state : std::uint8_t {
  closed,     ///< calls pass
  open,       ///< calls are refused until the cool-down ends
  half_open,  ///< one probe is out: its outcome closes or reopens the circuit
};

[[nodiscard]] constexpr std::string_view to_string(circuit_state s) noexcept {
  switch (s) {
    case circuit_state::closed: return "closed";
    case circuit_state::open: return "open";
    case circuit_state::half_open: return "half_open";
  }
  return "closed";
}

/// Why a call may not go now, and until when.
struct call_refusal {
  enum class reason_kind : std::uint8_t { circuit_open, throttled } reason = reason_kind::circuit_open;
  timestamp until{};
};

/// Thread-safe; the time comes from `clock`, so tests can drive it.
class circuit_breaker {
 public:
  explicit circuit_breaker(circuit_breaker_options options = {}, clock_function clock = system_now);

  /// Whether a call to `model` at `endpoint` may go now. When the cool-down
  /// of an open circuit is over, the first caller is let through as the
  /// probe (half-open) and the others are refused until it reports back.
  [[nodiscard]] std::optional<call_refusal> admit(std::string_view endpoint, std::string_view model);

  /// The call got an answer: the circuit closes and its failures are forgotten.
  void record_success(std::string_view endpoint, std::string_view model);
  /// A server error, timeout or network failure. Opens the circuit when
  /// `failure_threshold` fall within `window`, or when a probe fails.
  void record_failure(std::string_view endpoint, std::string_view model);
  /// A rate limit: calls wait until `until`; the circuit is unchanged (and a
  /// throttled probe may go again).
  void record_throttle(std::string_view endpoint, std::string_view model, timestamp until);

  [[nodiscard]] circuit_state state(std::string_view endpoint, std::string_view model) const;

 private:
  struct circuit {
    circuit_state state = circuit_state::closed;
    std::vector<timestamp> failures;  // within the window, oldest first
    timestamp opened_at{};
    std::optional<timestamp> throttled_until;
  };
  circuit& find(std::string_view endpoint, std::string_view model);

  circuit_breaker_options options_;
  clock_function clock_;
  mutable std::mutex mutex_;
  std::map<std::string, circuit, std::less<>> circuits_;
};

LLMDLQ_END_NAMESPACE
