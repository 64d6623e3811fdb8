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

/// Runs `<launcher> llmdlq <arguments>` (shell-quoted strings) with standard
/// input read from `stdin_path`.
inline tool_run run_llmdlq_reading(const std::string& arguments, const std::string& stdin_path,
                                   const std::string& launcher = {}) {
  temp_dir io;
  const auto out = io.path() / "stdout";
  const auto err = io.path() / "stderr";
  const std::string command = launcher + " '" + LLMDLQ_TOOL + "' " + arguments + " <'" + stdin_path + "' >'" +
                              out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(command.c_str());
  tool_run run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = slurp(out);
  run.err = slurp(err);
  return run;
}

/// Runs `llmdlq <arguments>` (a shell-quoted string) with `input` on stdin.
inline tool_run run_llmdlq(const std::string& arguments, std::string_view input = {}) {
  temp_dir io;
  return run_llmdlq_reading(arguments, io.write("stdin", input));
}

}  // namespace llmdlq::test
