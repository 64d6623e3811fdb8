// SPDX-License-Identifier: MIT
// llmdlq::prometheus: a metrics registry as a prometheus-cpp Collectable,
// for a host that already serves a prometheus::Registry or Exposer.
#pragma once

#include <memory>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "llmdlq/config.hpp"
#include "llmdlq/metrics.hpp"
#include "llmdlq/metrics_exposition.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// The families of metric_families(), in prometheus-cpp's types.
[[nodiscard]] std::vector<::prometheus::MetricFamily> to_prometheus_families(const metrics_snapshot& snapshot);

/// Collects a snapshot of `source` at each scrape. The host keeps the
/// collectable alive while it is registered (Exposer and Registry hold a
/// weak_ptr):
///
/// \code
///   auto collectable = std::make_shared<llmdlq::prometheus_collectable>(metrics);
///   prometheus::Exposer exposer{"127.0.0.1:9464"};
///   exposer.RegisterCollectable(collectable);
/// \endcode
class prometheus_collectable final : public ::prometheus::Collectable {
 public:
  explicit prometheus_collectable(std::shared_ptr<const metrics> source) noexcept : source_(std::move(source)) {}

  [[nodiscard]] std::vector<::prometheus::MetricFamily> Collect() const override;

 private:
  std::shared_ptr<const metrics> source_;
};

LLMDLQ_END_NAMESPACE
