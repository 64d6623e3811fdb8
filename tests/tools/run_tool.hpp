// SPDX-License-Identifier: MIT
// Runs the `llmdlq` binary the way a shell user would, capturing its output.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "support/temp_dir.hpp"

namespace llmdlq::test {

struct tool_run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs `llmdlq <arguments>` (a shell-quoted string) with `input` on stdin.
inline tool_run run_llmdlq(const std::string& arguments, std::string_view input = {}) {
  temp_dir io;
  const std::string in = io.write("stdin", input);
  const auto out = io.path() / "stdout";
  const auto err = io.path() / "stderr";
  const std::string command = std::string("'") + LLMDLQ_TOOL + "' " + arguments + " <'" + in + "' >'" +
                              out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(command.c_str());
  tool_run run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = slurp(out);
  run.err = slurp(err);
  return run;
}

}  // namespace llmdlq::test
