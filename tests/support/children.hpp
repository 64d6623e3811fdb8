// SPDX-License-Identifier: MIT
// Child processes for tests of what holds between processes: they start
// together and report through their exit codes.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <vector>

#include "catch.hpp"

namespace llmdlq::test {

/// Runs `body(i)` in `n` forked children that start together, and returns
/// their exit codes (128 + signal for a killed child). A child ends with
/// _exit: it never returns into Catch, runs no destructor and never touches
/// the parent's connections, so `body` opens its own.
inline std::vector<int> in_children(int n, const std::function<int(int)>& body) {
  int go[2];
  REQUIRE(::pipe(go) == 0);
  std::vector<pid_t> children;
  for (int i = 0; i < n; ++i) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(go[1]);
      char byte;
      const bool started = ::read(go[0], &byte, 1) == 0;  // the parent closed its end: all start
      ::_exit(started ? body(i) : 99);
    }
    children.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);
  std::vector<int> codes;
  for (const pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

}  // namespace llmdlq::test
