// SPDX-License-Identifier: MIT
// A host of llmdlq::postgres: a connection to a port where no server listens
// fails with an error (and does not crash).
#include <cstdio>

#include <llmdlq/postgres/replay_state.hpp>
#include <llmdlq/postgres/store.hpp>

int main() {
  if (llmdlq::postgres_store::open("host=127.0.0.1 port=1 connect_timeout=2")) return 1;
  if (llmdlq::postgres_replay_state::open("host=127.0.0.1 port=1 connect_timeout=2")) return 1;
  std::printf("llmdlq::postgres works\n");
  return 0;
}
