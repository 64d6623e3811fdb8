// SPDX-License-Identifier: MIT
// Definitions for metrics.hpp.
#pragma once

#include <algorithm>

#include "llmdlq/config.hpp"
#include "llmdlq/metrics.hpp"

LLMDLQ_BEGIN_NAMESPACE

// metrics_snapshot::sink_count::failures and the sink slots hold one counter per sink_errc.
static_assert(to_string(static_cast<sink_errc>(5)) != "unknown" && to_string(static_cast<sink_errc>(6)) == "unknown");

LLMDLQ_INLINE metrics::metrics(metrics_options options)
    : alarm_(std::move(options.alarm)),
      repaired_(options.max_repair_series),
      dead_letters_(options.max_dead_letter_series),
      sinks_(options.max_sinks),
      replays_(options.max_replay_series),
      tokens_(options.max_models),
      stream_deaths_(16) {}  // one series per failure category at most

LLMDLQ_INLINE void metrics::count_repairs(std::span<const repair_action> repairs) {
  for (const auto& action : repairs) repaired_.add(repaired_.find_or_add({action.code, to_string(action.tier)}), 0);
}

LLMDLQ_INLINE void metrics::count_dead_letter(const envelope& e, std::chrono::nanoseconds failure_path) {
  dead_letters_.add(dead_letters_.find_or_add({to_string(e.failure.category), to_string(e.triage.kind), e.failure.code}),
                    0);
  const double seconds = std::chrono::duration<double>(failure_path).count();
  const auto bucket = static_cast<std::size_t>(
      std::lower_bound(failure_path_bounds.begin(), failure_path_bounds.end(), seconds) - failure_path_bounds.begin());
  failure_path_buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  failure_path_nanoseconds_.fetch_add(static_cast<std::uint64_t>(std::max<std::int64_t>(failure_path.count(), 0)),
                                      std::memory_order_relaxed);
  if (alarm_) feed_alarm(1);
}

LLMDLQ_INLINE void metrics::feed_alarm(std::uint64_t dead_lettered) {
  // Each accepted response is given to the alarm once, whichever thread
  // feeds it: the mark only moves forward.
  const std::uint64_t accepted = accepted_.load(std::memory_order_relaxed);
  std::uint64_t fed = accepted_fed_to_alarm_.load(std::memory_order_relaxed);
  while (accepted > fed && !accepted_fed_to_alarm_.compare_exchange_weak(fed, accepted, std::memory_order_relaxed)) {
  }
  const std::uint64_t newly_accepted = accepted > fed ? accepted - fed : 0;
  alarm_->record(newly_accepted + dead_lettered, dead_lettered);
}

LLMDLQ_INLINE void metrics::check_alarm() {
  if (alarm_) feed_alarm(0);  // a record of nothing new slides and judges the window
}

LLMDLQ_INLINE void metrics::set_pending(std::uint64_t records, std::chrono::duration<double> oldest_age) noexcept {
  pending_records_.store(records, std::memory_order_relaxed);
  oldest_pending_age_.store(std::max(oldest_age.count(), 0.0), std::memory_order_relaxed);
  pending_set_.store(true, std::memory_order_release);
}

LLMDLQ_INLINE metrics_snapshot metrics::snapshot() const {
  metrics_snapshot s;
  s.accepted = accepted_.load(std::memory_order_relaxed);
  repaired_.for_each([&](const auto& labels, const auto& values) {
    s.repaired.push_back({labels[0], labels[1], values[0]});
  });
  dead_letters_.for_each([&](const auto& labels, const auto& values) {
    s.dead_lettered.push_back({labels[0], labels[1], labels[2], values[0]});
  });
  sinks_.for_each([&](const auto& labels, const auto& values) {
    metrics_snapshot::sink_count c{labels[0], values[0], {}};
    std::copy(values.begin() + 1, values.end(), c.failures.begin());
    s.sinks.push_back(std::move(c));
  });
  replays_.for_each([&](const auto& labels, const auto& values) {
    s.replays.push_back({labels[0], labels[1], values[0]});
  });
  tokens_.for_each([&](const auto& labels, const auto& values) {
    s.tokens.push_back({labels[0], values[0], values[1]});
  });
  stream_deaths_.for_each([&](const auto& labels, const auto& values) {
    s.stream_deaths.push_back({labels[0], values[0], values[1]});
  });
  s.processed = s.accepted + s.dead_lettered_total();

  s.failure_path.upper_bounds.assign(failure_path_bounds.begin(), failure_path_bounds.end());
  std::uint64_t running = 0;
  for (const auto& bucket : failure_path_buckets_) {
    running += bucket.load(std::memory_order_relaxed);
    s.failure_path.cumulative.push_back(running);
  }
  s.failure_path.count = running;
  s.failure_path.sum = static_cast<double>(failure_path_nanoseconds_.load(std::memory_order_relaxed)) / 1e9;

  if (pending_set_.load(std::memory_order_acquire)) {
    s.pending_records = pending_records_.load(std::memory_order_relaxed);
    s.oldest_pending_age_seconds = oldest_pending_age_.load(std::memory_order_relaxed);
  }
  return s;
}

LLMDLQ_END_NAMESPACE
