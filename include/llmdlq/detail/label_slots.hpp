// SPDX-License-Identifier: MIT
// A fixed table of labelled counters: a bounded set of label values, each
// with its counters, found without a lock once it is there.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// `capacity` slots of `Labels` label values and `Values` counters, plus
/// one overflow slot whose labels are all "other": the label set a metric
/// exposes stays bounded whatever values come. A slot, once published, never
/// changes its labels, so finding one reads without a lock; adding one locks.
template <std::size_t Labels, std::size_t Values>
class label_slots {
 public:
  using key = std::array<std::string_view, Labels>;

  explicit label_slots(std::size_t capacity) : capacity_(capacity), slots_(new slot[capacity + 1]) {
    slots_[capacity_].labels.fill("other");
  }

  /// The slot holding `labels`, added when there is room, else the overflow slot.
  [[nodiscard]] std::size_t find_or_add(const key& labels) {
    const std::size_t seen = published_.load(std::memory_order_acquire);
    if (const auto at = find(labels, 0, seen); at != npos) return at;
    std::lock_guard lock(adding_);
    const std::size_t now = published_.load(std::memory_order_relaxed);
    if (const auto at = find(labels, seen, now); at != npos) return at;
    if (now == capacity_) return capacity_;
    std::copy(labels.begin(), labels.end(), slots_[now].labels.begin());
    published_.store(now + 1, std::memory_order_release);
    return now;
  }

  void add(std::size_t at, std::size_t value, std::uint64_t n = 1) noexcept {
    slots_[at].values[value].fetch_add(n, std::memory_order_relaxed);
  }

  /// Calls `f(labels, values)` for each slot that counted something, in
  /// the order the slots were added (the overflow slot last).
  template <class F>
  void for_each(F&& f) const {
    const std::size_t seen = published_.load(std::memory_order_acquire);
    auto visit = [&](const slot& s) {
      std::array<std::uint64_t, Values> values{};
      bool any = false;
      for (std::size_t v = 0; v < Values; ++v) {
        values[v] = s.values[v].load(std::memory_order_relaxed);
        any = any || values[v] != 0;
      }
      if (any) f(s.labels, values);
    };
    for (std::size_t i = 0; i < seen; ++i) visit(slots_[i]);
    visit(slots_[capacity_]);
  }

 private:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  struct slot {
    std::array<std::string, Labels> labels;
    std::array<std::atomic<std::uint64_t>, Values> values{};
  };

  [[nodiscard]] std::size_t find(const key& labels, std::size_t from, std::size_t to) const noexcept {
    for (std::size_t i = from; i < to; ++i) {
      if (std::equal(labels.begin(), labels.end(), slots_[i].labels.begin())) return i;
    }
    return npos;
  }

  std::size_t capacity_;
  std::unique_ptr<slot[]> slots_;
  std::atomic<std::size_t> published_{0};
  std::mutex adding_;
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
