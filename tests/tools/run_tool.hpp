// SPDX-License-Identifier: MIT
// Runs the `llmdlq` binary the way a shell user would, capturing its output.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

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

/// The JSON objects of a command's output, one per line.
inline std::vector<boost::json::object> lines_of(const std::string& out) {
  std::vector<boost::json::object> lines;
  std::size_t at = 0;
  while (at < out.size()) {
    const auto end = out.find('\n', at);
    lines.push_back(boost::json::parse(out.substr(at, end - at)).as_object());
    at = end + 1;
  }
  return lines;
}

/// Runs `llmdlq <arguments>` (a shell-quoted string) with `input` on stdin.
inline tool_run run_llmdlq(const std::string& arguments, std::string_view input = {}) {
  temp_dir io;
  return run_llmdlq_reading(arguments, io.write("stdin", input));
}

/// Starts `llmdlq <arguments...>` in the background with standard input read
/// from `in`, standard output written to `out` and standard error to `err`;
/// returns its pid, for waitpid or kill.
inline pid_t start_llmdlq(const std::vector<std::string>& arguments, const std::string& in = "/dev/null",
                          const std::string& out = "/dev/null", const std::string& err = "/dev/null") {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int input = ::open(in.c_str(), O_RDONLY);
    const int output = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int error = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(input, STDIN_FILENO);
    ::dup2(output, STDOUT_FILENO);
    ::dup2(error, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>("llmdlq")};
    for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    ::execv(LLMDLQ_TOOL, argv.data());
    ::_exit(127);
  }
  return pid;
}

/// The exit status of the child `pid` (128 + N when signal N ended it), once it ended.
inline int exit_code_of(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace llmdlq::test
