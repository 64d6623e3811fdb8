// SPDX-License-Identifier: MIT
// A host of llmdlq::kafka: creates a producer, which needs no broker yet.
#include <cstdio>

#include <llmdlq/kafka/producer.hpp>

int main() {
  auto producer = llmdlq::kafka_producer::open({.properties = {{"bootstrap.servers", "127.0.0.1:1"}}});
  if (!producer) return 1;
  std::printf("llmdlq::kafka works\n");
  return 0;
}
