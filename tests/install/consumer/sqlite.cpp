// SPDX-License-Identifier: MIT
// A host of llmdlq::sqlite: opens a dead-letter queue in a file, and the
// replay state beside it.
#include <cstdio>

#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

int main() {
  auto dlq = llmdlq::sqlite_store::open("consumer-dlq.db");
  if (!dlq) return 1;
  auto replays = llmdlq::sqlite_replay_state::open("consumer-dlq.db");
  if (!replays || !replays->reserve_attempt("consumer", 2)) return 1;
  std::printf("llmdlq::sqlite works\n");
  return 0;
}
