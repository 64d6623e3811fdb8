// SPDX-License-Identifier: MIT
// Per-call latency percentiles as Google Benchmark counters.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
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

/// How often, and for how long, the machine takes the CPU from a thread that
/// only reads the clock: the gaps over 5 us between two reads (counters
/// interruptions_per_s, mean_interruption_us). A call of d us meets such a
/// gap with a probability of about d times the rate: once that passes 1 %,
/// the p99 of the call measures the machine, not the call.
inline void host_interruptions(benchmark::State& state) {
  using clock = std::chrono::steady_clock;
  const auto micros = [](clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
  std::int64_t gaps = 0;
  double gap_us = 0;
  double spun_us = 0;
  for (auto _ : state) {
    const auto start = clock::now();
    auto previous = start;
    while (previous - start < std::chrono::milliseconds(10)) {
      const auto now = clock::now();
      if (const double d = micros(now - previous); d > 5) {
        ++gaps;
        gap_us += d;
      }
      previous = now;
    }
    spun_us += micros(previous - start);
  }
  state.counters["interruptions_per_s"] = spun_us > 0 ? static_cast<double>(gaps) / (spun_us / 1e6) : 0;
  state.counters["mean_interruption_us"] = gaps > 0 ? gap_us / static_cast<double>(gaps) : 0;
}

}  // namespace llmdlq_bench
