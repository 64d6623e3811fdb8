// SPDX-License-Identifier: MIT
// A host of llmdlq::sqlite: opens a dead-letter queue in a file.
#include <cstdio>

#include <llmdlq/sqlite/store.hpp>

int main() {
  auto dlq = llmdlq::sqlite_store::open("consumer-dlq.db");
  if (!dlq) return 1;
  std::printf("llmdlq::sqlite works\n");
  return 0;
}
