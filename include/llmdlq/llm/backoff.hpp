// SPDX-License-Identifier: MIT
// Full-jitter exponential backoff: the wait before the n-th retry is drawn
// uniformly from [0, min(cap, base · 2^n)], so that many workers that failed
// together do not come back together.
// Part of the llmdlq::llm library.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct backoff_options {
  std::chrono::milliseconds base{500};
  std::chrono::milliseconds cap{std::chrono::seconds(60)};
};

/// The longest wait before retry number `retry`: min(cap, base · 2^retry).
[[nodiscard]] inline std::chrono::milliseconds backoff_ceiling(std::uint32_t retry, const backoff_options& options) {
  const std::int64_t cap = std::max<std::int64_t>(options.cap.count(), 0);
  std::int64_t ceiling = std::max<std::int64_t>(options.base.count(), 0);
  for (std::uint32_t i = 0; i < retry && ceiling < cap; ++i) ceiling *= 2;
  return std::chrono::milliseconds(std::min(ceiling, cap));
}

/// The wait before retry number `retry` (0 for the first), drawn with `random`.
template <class Generator>
[[nodiscard]] std::chrono::milliseconds full_jitter_backoff(std::uint32_t retry, const backoff_options& options,
                                                            Generator& random) {
  std::uniform_int_distribution<std::int64_t> draw(0, backoff_ceiling(retry, options).count());
  return std::chrono::milliseconds(draw(random));
}

LLMDLQ_END_NAMESPACE
