// SPDX-License-Identifier: MIT
// Definitions for dlq_rate_alarm.hpp.
#pragma once

#include <algorithm>
#include <utility>

#include "llmdlq/config.hpp"
#include "llmdlq/dlq_rate_alarm.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE dlq_rate_alarm::dlq_rate_alarm(dlq_rate_alarm_options options, callback on_breach,
                                             callback on_recovery)
    : options_(std::move(options)),
      on_breach_(std::move(on_breach)),
      on_recovery_(std::move(on_recovery)) {
  options_.buckets = std::max<std::size_t>(options_.buckets, 1);
  if (!options_.clock) options_.clock = system_now;
  const auto buckets = static_cast<std::chrono::milliseconds::rep>(options_.buckets);
  step_length_ = std::max(options_.window / buckets, std::chrono::milliseconds(1));
  ring_.resize(options_.buckets);
}

LLMDLQ_INLINE std::int64_t dlq_rate_alarm::slide(timestamp now) {
  const std::int64_t step = std::max<std::int64_t>(now.time_since_epoch() / step_length_, latest_step_);
  const auto size = static_cast<std::int64_t>(ring_.size());
  // Each step that enters the window takes the slot of the one leaving it.
  for (std::int64_t s = std::max(latest_step_ + 1, step - size + 1); s <= step; ++s) {
    bucket& b = ring_[static_cast<std::size_t>(s % size)];
    processed_ -= b.processed;
    dead_lettered_ -= b.dead_lettered;
    b = bucket{s, 0, 0};
  }
  latest_step_ = step;
  return step;
}

LLMDLQ_INLINE dlq_rate_reading dlq_rate_alarm::judge(timestamp now, bool& changed) {
  dlq_rate_reading reading{now, processed_, dead_lettered_, false};
  reading.breached = processed_ > 0 && processed_ >= options_.min_processed && reading.rate() > options_.threshold;
  changed = reading.breached != breached_;
  breached_ = reading.breached;
  return reading;
}

LLMDLQ_INLINE void dlq_rate_alarm::fire(const dlq_rate_reading& reading) const {
  const callback& call = reading.breached ? on_breach_ : on_recovery_;
  if (call) call(reading);
}

LLMDLQ_INLINE void dlq_rate_alarm::record(std::uint64_t processed, std::uint64_t dead_lettered) {
  const timestamp now = options_.clock();
  bool changed = false;
  dlq_rate_reading reading;
  {
    std::lock_guard lock(mutex_);
    const std::int64_t step = slide(now);
    bucket& b = ring_[static_cast<std::size_t>(step % static_cast<std::int64_t>(ring_.size()))];
    b.processed += processed;
    b.dead_lettered += dead_lettered;
    processed_ += processed;
    dead_lettered_ += dead_lettered;
    reading = judge(now, changed);
  }
  if (changed) fire(reading);
}

LLMDLQ_INLINE dlq_rate_reading dlq_rate_alarm::check() {
  const timestamp now = options_.clock();
  bool changed = false;
  dlq_rate_reading reading;
  {
    std::lock_guard lock(mutex_);
    slide(now);
    reading = judge(now, changed);
  }
  if (changed) fire(reading);
  return reading;
}

LLMDLQ_INLINE bool dlq_rate_alarm::breached() const {
  std::lock_guard lock(mutex_);
  return breached_;
}

LLMDLQ_END_NAMESPACE
