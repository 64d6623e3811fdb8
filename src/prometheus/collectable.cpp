// SPDX-License-Identifier: MIT
#include "llmdlq/prometheus/collectable.hpp"

#include <limits>
#include <string>
#include <utility>

LLMDLQ_BEGIN_NAMESPACE

namespace {

::prometheus::MetricType type_of(metric_type t) noexcept {
  switch (t) {
    case metric_type::counter: return ::prometheus::MetricType::Counter;
    case metric_type::gauge: return ::prometheus::MetricType::Gauge;
    case metric_type::histogram: return ::prometheus::MetricType::Histogram;
  }
  return ::prometheus::MetricType::Untyped;
}

}  // namespace

std::vector<::prometheus::MetricFamily> to_prometheus_families(const metrics_snapshot& snapshot) {
  std::vector<::prometheus::MetricFamily> out;
  for (auto& f : metric_families(snapshot)) {
    ::prometheus::MetricFamily family;
    family.name = std::move(f.name);
    family.help = std::move(f.help);
    family.type = type_of(f.type);
    for (auto& sample : f.samples) {
      ::prometheus::ClientMetric metric;
      for (auto& [name, value] : sample.labels) metric.label.push_back({std::move(name), std::move(value)});
      if (f.type == metric_type::gauge) metric.gauge.value = sample.value;
      else metric.counter.value = sample.value;
      family.metric.push_back(std::move(metric));
    }
    if (f.histogram) {
      ::prometheus::ClientMetric metric;
      metric.histogram.sample_count = f.histogram->count;
      metric.histogram.sample_sum = f.histogram->sum;
      for (std::size_t i = 0; i < f.histogram->upper_bounds.size(); ++i) {
        metric.histogram.bucket.push_back({f.histogram->cumulative[i], f.histogram->upper_bounds[i]});
      }
      metric.histogram.bucket.push_back({f.histogram->count, std::numeric_limits<double>::infinity()});
      family.metric.push_back(std::move(metric));
    }
    out.push_back(std::move(family));
  }
  return out;
}

std::vector<::prometheus::MetricFamily> prometheus_collectable::Collect() const {
  return to_prometheus_families(source_->snapshot());
}

LLMDLQ_END_NAMESPACE
