// SPDX-License-Identifier: MIT
#include "llmdlq/llm/circuit_breaker.hpp"

#include <algorithm>
#include <utility>

LLMDLQ_BEGIN_NAMESPACE

namespace {

std::string circuit_key(std::string_view endpoint, std::string_view model) {
  std::string key;
  key.reserve(endpoint.size() + model.size() + 1);
  key.append(endpoint).push_back('\n');
  key.append(model);
  return key;
}

}  // namespace

circuit_breaker::circuit_breaker(circuit_breaker_options options, clock_function clock)
    : options_(options), clock_(clock ? std::move(clock) : clock_function(system_now)) {}

circuit_breaker::circuit& circuit_breaker::find(std::string_view endpoint, std::string_view model) {
  const std::string key = circuit_key(endpoint, model);
  auto it = circuits_.find(key);
  if (it == circuits_.end()) it = circuits_.emplace(key, circuit{}).first;
  return it->second;
}

std::optional<call_refusal> circuit_breaker::admit(std::string_view endpoint, std::string_view model) {
  const timestamp now = clock_();
  const std::lock_guard lock(mutex_);
  circuit& c = find(endpoint, model);
  if (c.throttled_until && now < *c.throttled_until) {
    return call_refusal{call_refusal::reason_kind::throttled, *c.throttled_until};
  }
  switch (c.state) {
    case circuit_state::closed: return std::nullopt;
    case circuit_state::half_open: return call_refusal{call_refusal::reason_kind::circuit_open, now + options_.cool_down};
    case circuit_state::open:
      if (now < c.opened_at + options_.cool_down) {
        return call_refusal{call_refusal::reason_kind::circuit_open, c.opened_at + options_.cool_down};
      }
      c.state = circuit_state::half_open;  // this caller is the probe
      return std::nullopt;
  }
  return std::nullopt;
}

void circuit_breaker::record_success(std::string_view endpoint, std::string_view model) {
  const std::lock_guard lock(mutex_);
  circuit& c = find(endpoint, model);
  c.state = circuit_state::closed;
  c.failures.clear();
}

void circuit_breaker::record_failure(std::string_view endpoint, std::string_view model) {
  const timestamp now = clock_();
  const std::lock_guard lock(mutex_);
  circuit& c = find(endpoint, model);
  if (c.state == circuit_state::half_open) {
    c.state = circuit_state::open;
    c.opened_at = now;
    return;
  }
  std::erase_if(c.failures, [&](timestamp t) { return t + options_.window <= now; });
  c.failures.push_back(now);
  if (c.state == circuit_state::closed && c.failures.size() >= std::max<std::uint32_t>(options_.failure_threshold, 1)) {
    c.state = circuit_state::open;
    c.opened_at = now;
    c.failures.clear();
  }
}

void circuit_breaker::record_throttle(std::string_view endpoint, std::string_view model, timestamp until) {
  const std::lock_guard lock(mutex_);
  circuit& c = find(endpoint, model);
  if (!c.throttled_until || *c.throttled_until < until) c.throttled_until = until;
  if (c.state == circuit_state::half_open) c.state = circuit_state::open;  // the probe comes again after the wait
}

circuit_state circuit_breaker::state(std::string_view endpoint, std::string_view model) const {
  const std::lock_guard lock(mutex_);
  const auto it = circuits_.find(circuit_key(endpoint, model));
  return it == circuits_.end() ? circuit_state::closed : it->second.state;
}

LLMDLQ_END_NAMESPACE
