// SPDX-License-Identifier: MIT
// A host of llmdlq::stores: opens the DLQ and the target its user names as
// specs, and is told, typed, what it cannot open.
#include <cstdio>

#include <llmdlq/stores/open.hpp>

int main() {
  auto dlq = llmdlq::open_store("sqlite:consumer-stores.db");
  if (!dlq) return 1;
  auto spec = llmdlq::parse_store_spec("jsonl:consumer-payloads.jsonl", llmdlq::replay_target_kinds);
  if (!spec || !llmdlq::open_target(*spec)) return 2;
  auto refused = llmdlq::open_target(*llmdlq::parse_store_spec("sqlite:consumer-stores.db"));
  if (refused || refused.error().code != llmdlq::open_errc::not_a_target) return 3;
  std::printf("llmdlq::stores works\n");
  return 0;
}
