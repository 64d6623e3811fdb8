// SPDX-License-Identifier: MIT
// An in-memory sink for host services' unit tests: inspectable, thread-safe,
// and able to fail on demand so that retry paths can be tested.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/sink.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Keeps envelopes in memory, in publish order; a re-published dlq_id is a
/// duplicate and is not stored twice.
class memory_sink final : public sink {
 public:
  [[nodiscard]] expected<receipt, sink_error> publish(const envelope& e) override {
    std::lock_guard lock(mutex_);
    if (failures_left_ > 0) {
      --failures_left_;
      return unexpected(failure_);
    }
    // try_emplace: a publish seen before allocates nothing under the lock.
    const auto [at, inserted] = index_.try_emplace(e.dlq_id, envelopes_.size());
    if (!inserted) return receipt{e.dlq_id, true, "memory:" + std::to_string(at->second)};
    envelopes_.push_back(e);
    return receipt{e.dlq_id, false, "memory:" + std::to_string(envelopes_.size() - 1)};
  }

  /// Makes the next `count` publishes fail with `error`, as a broken store would.
  void fail_next(std::size_t count, sink_error error = {sink_errc::unavailable, "memory_sink: injected failure"}) {
    std::lock_guard lock(mutex_);
    failures_left_ = count;
    failure_ = std::move(error);
  }

  /// A copy of everything stored, in publish order.
  [[nodiscard]] std::vector<envelope> envelopes() const {
    std::lock_guard lock(mutex_);
    return envelopes_;
  }

  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(mutex_);
    return envelopes_.size();
  }

  [[nodiscard]] std::optional<envelope> find(std::string_view dlq_id) const {
    std::lock_guard lock(mutex_);
    const auto at = index_.find(std::string(dlq_id));
    if (at == index_.end()) return std::nullopt;
    return envelopes_[at->second];
  }

  void clear() {
    std::lock_guard lock(mutex_);
    envelopes_.clear();
    index_.clear();
  }

  [[nodiscard]] std::string_view kind() const noexcept override { return "memory"; }

 private:
  mutable std::mutex mutex_;
  std::vector<envelope> envelopes_;
  std::unordered_map<std::string, std::size_t> index_;  // dlq_id -> position
  std::size_t failures_left_ = 0;
  sink_error failure_;
};

LLMDLQ_END_NAMESPACE
