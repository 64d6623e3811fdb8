// SPDX-License-Identifier: MIT
// A command's syntax as a table: its operands and options, each declared
// once with its value's name and its help. Parsing and the --help text are
// both made from the table, so the two cannot disagree, and every command
// answers a wrong command line with the same messages.
#pragma once

#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <llmdlq/expected.hpp>

#include "cli.hpp"

namespace llmdlq::cli {

/// How an option is given.
enum class option_kind {
  flag,      ///< alone: `--json`
  value,     ///< with a value, the last one given counts: `--limit 10`
  repeated,  ///< with a value, every one counts: `--status pending --status claimed`
};

/// One option: `--name VALUE  help`. A help of several lines has `\n`
/// between them; the usage text aligns them.
struct option {
  std::string_view name;
  option_kind kind = option_kind::flag;
  std::string_view value_name;  ///< `FILE`, `N`…; empty for a flag
  std::string_view help;
};

/// Options shown together under a heading (none when empty).
struct option_group {
  std::string_view heading;
  std::span<const option> options;
};

/// An argument that is not an option (`-` alone is one: standard input).
struct operand {
  std::string_view name;     ///< `STORE`, `DLQ_ID`
  std::string_view missing;  ///< the message when it is not given; empty: it may be left out
  bool repeated = false;     ///< the last operand only: any number of them
};

/// What a command takes, and the text its --help prints around the options.
struct command_syntax {
  std::string_view command;           ///< `stats`, as typed after `llmdlq`
  std::span<const operand> operands;  ///< in the order they are given
  std::vector<option_group> groups;
  std::string_view about;    ///< after the usage line: what the command does (lines indented by two)
  std::string stores;        ///< the forms of the STORE operand (store_forms), printed after `about`
  std::string_view closing;  ///< after the options: exit codes and the like
};

/// An option group of `options` under `heading` (a named array, as groups hold spans).
template <std::size_t N>
option_group group(std::string_view heading, const option (&options)[N]) {
  return option_group{heading, std::span<const option>(options)};
}

/// A command line read against its syntax.
class parsed_arguments {
 public:
  /// Whether option `name` was given (a flag, or an option with a value).
  [[nodiscard]] bool has(std::string_view name) const;
  /// The last value of option `name`, or nothing when it was not given.
  [[nodiscard]] std::optional<std::string_view> value(std::string_view name) const;
  /// Every value of option `name`, in the order given.
  [[nodiscard]] std::vector<std::string_view> values(std::string_view name) const;
  /// The operands, in the order given.
  [[nodiscard]] const std::vector<std::string_view>& operands() const noexcept { return operands_; }
  /// Operand `index`, or an empty view when there are fewer.
  [[nodiscard]] std::string_view operand(std::size_t index) const noexcept {
    return index < operands_.size() ? operands_[index] : std::string_view();
  }

 private:
  friend class argument_reader;
  const option& declared(std::string_view name) const;

  const command_syntax* syntax_ = nullptr;
  std::vector<std::pair<const option*, std::string_view>> given_;
  std::vector<std::string_view> operands_;
};

/// The --help text of `syntax`: the usage line, `about`, the options by group, `closing`.
[[nodiscard]] std::string usage_text(const command_syntax& syntax);

/// Reads `args` against `syntax`. On --help (or -h) prints the usage text to
/// standard output and fails with exit_ok; on an unknown option, an option
/// without its value, an operand too many or one missing, says so on stderr
/// followed by the usage text and fails with exit_usage. The error is the
/// exit code the command returns.
[[nodiscard]] expected<parsed_arguments, int> parse_arguments(const command_syntax& syntax, arguments args);

/// complain(), then the usage text on stderr; returns exit_usage.
int usage_error(const command_syntax& syntax, std::string_view message);

/// A whole count from `minimum` to `maximum`, or nothing.
[[nodiscard]] std::optional<std::int64_t> parse_count(std::string_view text, std::int64_t minimum = 0,
                                                      std::int64_t maximum = INT64_MAX);

}  // namespace llmdlq::cli
