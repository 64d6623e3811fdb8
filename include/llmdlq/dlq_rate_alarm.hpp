// SPDX-License-Identifier: MIT
// dlq_rate_alarm: the share of responses dead-lettered over a sliding window,
// calling the host once when it crosses a threshold and once when it is back.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct dlq_rate_alarm_options {
  /// The window is the last `window`, kept as `buckets` steps of window /
  /// buckets each: it slides a step at a time, and memory stays fixed.
  std::chrono::milliseconds window = std::chrono::minutes(5);
  std::size_t buckets = 60;
  /// Breached while dead-lettered / processed in the window is above this...
  double threshold = 0.02;
  /// ...and at least this many responses were processed in it: a handful of
  /// responses says nothing, and no traffic never alarms.
  std::uint64_t min_processed = 100;
  clock_function clock = system_now;
};

/// The window at one moment.
struct dlq_rate_reading {
  timestamp at{};
  std::uint64_t processed = 0;
  std::uint64_t dead_lettered = 0;
  bool breached = false;

  [[nodiscard]] double rate() const noexcept {
    return processed == 0 ? 0.0 : static_cast<double>(dead_lettered) / static_cast<double>(processed);
  }
};

/// Counts processed and dead-lettered responses per step of a sliding window
/// and calls `on_breach` when the window becomes breached, `on_recovery` when
/// it stops being so (the rate fell, or the volume under min_processed):
/// once per change, never again while the state holds. Thread-safe; the
/// callbacks run on the thread whose record() or check() changed the state,
/// outside the alarm's lock (they may call the alarm).
///
/// Fed by the host with record(), or by a metrics registry that carries it
/// (metrics_options::alarm; the host then calls metrics::check_alarm() from
/// a timer instead of check()).
class dlq_rate_alarm {
 public:
  using callback = std::function<void(const dlq_rate_reading&)>;

  LLMDLQ_INLINE explicit dlq_rate_alarm(dlq_rate_alarm_options options = {}, callback on_breach = {},
                                        callback on_recovery = {});

  /// One processed response, dead-lettered or not.
  void record(bool dead_lettered) { record(1, dead_lettered ? 1 : 0); }
  /// Several at once (`dead_lettered` of `processed`).
  LLMDLQ_INLINE void record(std::uint64_t processed, std::uint64_t dead_lettered);

  /// Slides the window to now and judges it: a host with no traffic calls
  /// this from a timer so that a breach recovers once the window is empty.
  LLMDLQ_INLINE dlq_rate_reading check();

  [[nodiscard]] LLMDLQ_INLINE bool breached() const;
  [[nodiscard]] const dlq_rate_alarm_options& options() const noexcept { return options_; }

 private:
  struct bucket {
    std::int64_t step = -1;  // which step of time it counts (time / step length)
    std::uint64_t processed = 0;
    std::uint64_t dead_lettered = 0;
  };

  // Under the lock: drops the steps that left the window, and returns the
  // step `now` falls in (never earlier than one already seen).
  LLMDLQ_INLINE std::int64_t slide(timestamp now);
  // Judges the window; a change of state is returned for firing.
  LLMDLQ_INLINE dlq_rate_reading judge(timestamp now, bool& changed);
  LLMDLQ_INLINE void fire(const dlq_rate_reading& reading) const;

  dlq_rate_alarm_options options_;
  callback on_breach_;
  callback on_recovery_;
  std::chrono::milliseconds step_length_;
  mutable std::mutex mutex_;
  std::vector<bucket> ring_;
  std::int64_t latest_step_ = -1;
  std::uint64_t processed_ = 0;  // over the window
  std::uint64_t dead_lettered_ = 0;
  bool breached_ = false;
};

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/dlq_rate_alarm.ipp"
#endif
