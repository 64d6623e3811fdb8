// SPDX-License-Identifier: MIT
// A host of llmdlq::prometheus: its metrics, collected for prometheus-cpp,
// hold the families llmdlq exposes.
#include <cstdio>
#include <memory>

#include <llmdlq/prometheus/collectable.hpp>

int main() {
  auto metrics = std::make_shared<llmdlq::metrics>();
  metrics->count_accepted({});
  const llmdlq::prometheus_collectable collectable{metrics};
  const auto families = collectable.Collect();
  if (families.empty() || families[0].name != "llmdlq_processed_total" || families[0].metric.size() != 1 ||
      families[0].metric[0].counter.value != 1) {
    return 1;
  }
  std::printf("llmdlq::prometheus works\n");
  return 0;
}
