// SPDX-License-Identifier: MIT
// A metrics snapshot as named metric families (Prometheus conventions:
// llmdlq_ prefix, _total counters, base units) and as Prometheus text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/metrics.hpp"

LLMDLQ_BEGIN_NAMESPACE

enum class metric_type : std::uint8_t { counter, gauge, histogram };

/// One series of a family: its labels (name, value) and its value.
struct metric_sample {
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

/// One metric: counters and gauges hold samples, a histogram its buckets.
struct metric_family {
  std::string name;  ///< `llmdlq_processed_total`
  std::string help;
  metric_type type = metric_type::counter;
  std::vector<metric_sample> samples;
  std::optional<metrics_snapshot::histogram> histogram;
};

/// Every family llmdlq exposes, each present even without samples (a
/// gauge the host never set has none), in a fixed order.
[[nodiscard]] LLMDLQ_INLINE std::vector<metric_family> metric_families(const metrics_snapshot& snapshot);

/// The families in the Prometheus text exposition format 0.0.4: a HELP and
/// a TYPE line per family, label values escaped (\\, \", \n), histograms as
/// cumulative `_bucket{le=...}` series with `_sum` and `_count`. Serve it
/// with `Content-Type: text/plain; version=0.0.4`.
[[nodiscard]] LLMDLQ_INLINE std::string to_prometheus_text(const metrics_snapshot& snapshot);

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/metrics_exposition.ipp"
#endif
