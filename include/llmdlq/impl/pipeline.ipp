// SPDX-License-Identifier: MIT
// Definitions for pipeline.hpp.
#pragma once

#include <chrono>

#include "llmdlq/config.hpp"
#include "llmdlq/pipeline.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE disposition pipeline::handle(std::string_view raw, const request_context& context) const {
  return settle(process_llm_response(raw, schema_, context, config_));
}

LLMDLQ_INLINE disposition pipeline::settle(expected<accepted, envelope> judged) const {
  if (judged) {
    disposition d;
    d.action = disposition::commit;
    d.accepted = std::move(*judged);
    count_accepted();
    return d;
  }
  return dead_letter(std::move(judged.error()));
}

namespace detail {

inline void count_publish(metrics* m, std::size_t slot, const expected<receipt, sink_error>& outcome) noexcept {
  if (!m) return;
  if (outcome) m->count_publish(slot);
  else m->count_sink_failure(slot, outcome.error().code);
}

}  // namespace detail

LLMDLQ_INLINE disposition pipeline::dead_letter(envelope e) const {
  disposition d;
  if (!sink_) {
    d.action = disposition::commit;
    d.dead_letter = std::move(e);
    return d;
  }
  auto stored = (*sink_)->publish(e);
  detail::count_publish(config_.metrics.get(), sink_slot_, stored);
  if (stored) {
    d.action = disposition::commit;
    d.stored = std::move(*stored);
  } else if (fallback_ && is_permanent(stored.error().code)) {
    d.error = std::move(stored.error());
    auto spooled = (*fallback_)->publish(e);
    detail::count_publish(config_.metrics.get(), fallback_slot_, spooled);
    if (spooled) {
      d.action = disposition::commit;
      d.stored = std::move(*spooled);
      d.in_fallback = true;
    } else {
      d.action = disposition::retry;
      d.fallback_error = std::move(spooled.error());
    }
  } else {
    d.action = disposition::retry;
    d.error = std::move(stored.error());
  }
  d.dead_letter = std::move(e);
  if (traffic_ && d.should_commit()) traffic_->count_dead_letter();
  return d;
}

LLMDLQ_INLINE expected<void, moderation_error> pipeline::flush_traffic() const {
  if (!traffic_) return {};
  return traffic_->flush();
}

LLMDLQ_INLINE traffic_status pipeline::traffic() const {
  if (!traffic_) return {};
  return traffic_->status();
}

namespace detail {

inline std::int64_t minute_of(timestamp t) noexcept {
  return std::chrono::floor<std::chrono::minutes>(t).time_since_epoch().count();
}

LLMDLQ_INLINE traffic_counter::traffic_counter(sink_handle dead_letters, moderation_store& store, clock_function clock)
    : sink_(std::move(dead_letters)), store_(&store), clock_(std::move(clock)) {
  flushed_minute_.store(minute_of(now()), std::memory_order_relaxed);
}

LLMDLQ_INLINE traffic_counter::~traffic_counter() {
  const std::lock_guard lock(mutex_);
  (void)flush_locked(now());  // best effort: nobody is left to tell
}

LLMDLQ_INLINE timestamp traffic_counter::now() const { return clock_ ? clock_() : system_now(); }

LLMDLQ_INLINE void traffic_counter::count_dead_letter() {
  dead_lettered_.fetch_add(1, std::memory_order_relaxed);
  const timestamp at = now();
  if (minute_of(at) == flushed_minute_.load(std::memory_order_relaxed)) return;
  // Another thread flushing takes this count along, or leaves it for the next flush.
  const std::unique_lock lock(mutex_, std::try_to_lock);
  if (lock) (void)flush_locked(at);
}

LLMDLQ_INLINE expected<void, moderation_error> traffic_counter::flush() {
  const std::lock_guard lock(mutex_);
  return flush_locked(now());
}

LLMDLQ_INLINE expected<void, moderation_error> traffic_counter::flush_locked(timestamp at) {
  flushed_minute_.store(minute_of(at), std::memory_order_relaxed);
  // Accepted and dead-lettered are counted apart, so each exchange takes a
  // consistent share: processed is their sum, never fewer than the dead letters.
  const std::uint64_t accepted = accepted_.exchange(0, std::memory_order_relaxed);
  const std::uint64_t dead_lettered = dead_lettered_.exchange(0, std::memory_order_relaxed);
  if (accepted == 0 && dead_lettered == 0) return {};
  auto recorded = store_->record_traffic(at, accepted + dead_lettered, dead_lettered);
  if (!recorded) {
    accepted_.fetch_add(accepted, std::memory_order_relaxed);
    dead_lettered_.fetch_add(dead_lettered, std::memory_order_relaxed);
    ++failed_flushes_;
    last_error_ = recorded.error();
    return recorded;
  }
  last_error_.reset();
  return {};
}

LLMDLQ_INLINE traffic_status traffic_counter::status() const {
  const std::lock_guard lock(mutex_);
  return {true, failed_flushes_, last_error_};
}

LLMDLQ_INLINE std::shared_ptr<traffic_counter> make_traffic_counter(const sink_handle& dead_letters,
                                                                  const clock_function& clock) {
  auto* store = dynamic_cast<moderation_store*>(&dead_letters.get());
  if (!store) return nullptr;
  return std::make_shared<traffic_counter>(dead_letters, *store, clock);
}

}  // namespace detail

LLMDLQ_END_NAMESPACE
