// SPDX-License-Identifier: MIT
// Waiting on a condition with a deadline, instead of sleeping for a guess.
#pragma once

#include <chrono>
#include <thread>

namespace llmdlq::test {

/// Checks `condition` every 20 ms until it holds or `timeout` passes;
/// returns whether it held.
template <class Condition>
bool eventually(Condition&& condition, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace llmdlq::test
