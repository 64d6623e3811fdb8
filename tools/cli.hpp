// SPDX-License-Identifier: MIT
// Small helpers shared by the `llmdlq` subcommands: argument walking, file
// reading (through the library's bounded reader) and exit codes.
#pragma once

#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <llmdlq/detail/bounded_read.hpp>
#include <llmdlq/expected.hpp>
#include <llmdlq/timestamp.hpp>

namespace llmdlq::cli {

/// Exit codes common to every subcommand.
enum exit_code : int {
  exit_ok = 0,        ///< everything was valid / accepted
  exit_invalid = 1,   ///< at least one document was invalid
  exit_usage = 2,     ///< bad arguments, an unusable schema or an unreadable file
  exit_sink = 3,      ///< a sink failed: the input must be retried
  /// An operator action lost a race: the record is no longer in a status
  /// that allows it (someone else acted first, or holds it).
  exit_conflict = 4,
  exit_not_found = 5,  ///< an operator action or `show` named no record of the store
  /// Some records do not read back (an unknown status, a time or an
  /// envelope that is not one): each was named on stderr with its dlq_id
  /// and why, and skipped; every other record was processed. For `show` and
  /// the actions: the record named does not read back.
  exit_unreadable = 6,
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

// Every file a command reads whole is read by the library's bounded reader,
// with the limit of its kind (detail::file_kinds): standard input as
// read_bounded(STDIN_FILENO, kind, "-").
using detail::file_kind;
using detail::read_bounded;
using detail::read_file_bounded;

/// A positive byte count: digits, optionally followed by K, M or G (KiB, MiB, GiB).
std::optional<std::size_t> parse_byte_count(std::string_view text);

/// Prints "llmdlq <command>: <message>" to stderr.
void complain(std::string_view command, std::string_view message);

/// complain(), then the command's usage on stderr; returns exit_usage.
int usage_error(std::string_view command, std::string_view usage, std::string_view message);

/// A time given on the command line: RFC 3339, or an age before `now`
/// (`90s`, `30m`, `2h`, `7d`). Nothing when the text is neither.
std::optional<timestamp> parse_time_or_age(std::string_view text, timestamp now);

/// An age for a person: `45s`, `12m`, `3h`, `2d` (the largest whole unit).
std::string format_age(std::chrono::milliseconds age);

/// The user's login name, or `uid N` when the system has none.
std::string login_name();

/// Whether to colour what goes to `fd`: a terminal, and NO_COLOR unset.
bool colour_for(int fd);

}  // namespace llmdlq::cli
