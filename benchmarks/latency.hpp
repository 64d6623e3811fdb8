// SPDX-License-Identifier: MIT
// Per-call latency percentiles as Google Benchmark counters.
#pragma once

#include <algorithm>
#include <vector>

#include <benchmark/benchmark.h>

namespace llmdlq_bench {

/// Sets p50_us, p99_us and max_us from per-call latencies in microseconds.
inline void report_latencies(benchmark::State& state, std::vector<double>& micros) {
  if (micros.empty()) return;
  std::sort(micros.begin(), micros.end());
  auto at = [&](double q) { return micros[std::min(micros.size() - 1, static_cast<std::size_t>(q * micros.size()))]; };
  state.counters["p50_us"] = at(0.50);
  state.counters["p99_us"] = at(0.99);
  state.counters["max_us"] = micros.back();
}

}  // namespace llmdlq_bench
