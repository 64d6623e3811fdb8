// SPDX-License-Identifier: MIT
// Small helpers shared by the `llmdlq` subcommands: argument walking, file
// reading and exit codes.
#pragma once

#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace llmdlq::cli {

/// Exit codes common to every subcommand.
enum exit_code : int {
  exit_ok = 0,        ///< everything was valid / accepted
  exit_invalid = 1,   ///< at least one document was invalid
  exit_usage = 2,     ///< bad arguments, an unusable schema or an unreadable file
  exit_sink = 3,      ///< a sink failed: the input must be retried
};

/// Walks argv, handing out flags and their values.
class arguments {
 public:
  explicit arguments(std::span<char* const> args) : args_(args) {}

  [[nodiscard]] bool done() const noexcept { return next_ >= args_.size(); }
  [[nodiscard]] std::string_view peek() const noexcept { return args_[next_]; }
  std::string_view take() noexcept { return args_[next_++]; }

  /// The value after flag `name`, or nothing (and an error message) when missing.
  std::optional<std::string_view> value_of(std::string_view name) {
    if (done()) {
      std::fprintf(stderr, "llmdlq: %.*s needs a value\n", static_cast<int>(name.size()), name.data());
      return std::nullopt;
    }
    return take();
  }

 private:
  std::span<char* const> args_;
  std::size_t next_ = 0;
};

/// The whole content of `path`, or nothing with `error` set to why not.
std::optional<std::string> read_file(const std::string& path, std::string& error);

/// The whole of standard input.
std::string read_stdin();

/// Prints "llmdlq <command>: <message>" to stderr.
void complain(std::string_view command, std::string_view message);

}  // namespace llmdlq::cli
