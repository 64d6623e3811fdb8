// SPDX-License-Identifier: MIT
// Runs the `llmdlq` binary the way a shell user would, capturing its output.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <sys/wait.h>

namespace llmdlq::test {

struct tool_run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// A fresh directory under the system temporary folder, removed on destruction.
class temp_dir {
 public:
  temp_dir() {
    std::random_device seed;
    path_ = std::filesystem::temp_directory_path() / ("llmdlq-test-" + std::to_string(seed()));
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  /// Writes `content` to `name` inside the directory and returns its path.
  std::string write(const std::string& name, std::string_view content) const {
    const auto file = path_ / name;
    std::ofstream(file, std::ios::binary) << content;
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

inline std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

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
