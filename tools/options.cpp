// SPDX-License-Identifier: MIT
#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

namespace llmdlq::cli {

// Walks a command line against a syntax, filling a parsed_arguments.
class argument_reader {
 public:
  argument_reader(const command_syntax& syntax, arguments args) : syntax_(syntax), args_(args) {
    parsed_.syntax_ = &syntax;
  }

  // The parsed arguments, or the exit code after saying why not.
  expected<parsed_arguments, int> read() {
    while (!args_.done()) {
      const std::string_view arg = args_.take();
      if (arg == "--help" || arg == "-h") {
        std::cout << usage_text(syntax_);
        return unexpected(static_cast<int>(exit_ok));
      }
      const bool operand = arg == "-" || !arg.starts_with("-");
      if (auto error = operand ? take_operand(arg) : take_option(arg)) return unexpected(usage_error(syntax_, *error));
    }
    const auto& operands = syntax_.operands;
    for (std::size_t i = parsed_.operands_.size(); i < operands.size(); ++i) {
      if (!operands[i].missing.empty()) return unexpected(usage_error(syntax_, operands[i].missing));
    }
    return std::move(parsed_);
  }

 private:
  std::optional<std::string> take_operand(std::string_view arg) {
    const auto& operands = syntax_.operands;
    const bool room = parsed_.operands_.size() < operands.size() || (!operands.empty() && operands.back().repeated);
    if (!room) return "unexpected argument " + std::string(arg);
    parsed_.operands_.push_back(arg);
    return std::nullopt;
  }

  std::optional<std::string> take_option(std::string_view arg) {
    const option* found = nullptr;
    for (const auto& g : syntax_.groups) {
      const auto it = std::find_if(g.options.begin(), g.options.end(), [&](const option& o) { return o.name == arg; });
      if (it != g.options.end()) found = &*it;
    }
    if (found == nullptr) return "unknown option " + std::string(arg);
    if (found->kind == option_kind::flag) {
      parsed_.given_.emplace_back(found, std::string_view());
      return std::nullopt;
    }
    if (args_.done()) return std::string(arg) + " needs a value (" + std::string(found->value_name) + ")";
    parsed_.given_.emplace_back(found, args_.take());
    return std::nullopt;
  }

  const command_syntax& syntax_;
  arguments args_;
  parsed_arguments parsed_;
};

const option& parsed_arguments::declared(std::string_view name) const {
  for (const auto& g : syntax_->groups) {
    for (const auto& o : g.options) {
      if (o.name == name) return o;
    }
  }
  // A command asking for an option its table lacks is a bug in the command.
  throw std::logic_error(fmt::format("llmdlq {} declares no option {}", syntax_->command, name));
}

bool parsed_arguments::has(std::string_view name) const {
  const option* o = &declared(name);
  return std::any_of(given_.begin(), given_.end(), [&](const auto& g) { return g.first == o; });
}

std::optional<std::string_view> parsed_arguments::value(std::string_view name) const {
  const option* o = &declared(name);
  const auto it = std::find_if(given_.rbegin(), given_.rend(), [&](const auto& g) { return g.first == o; });
  if (it == given_.rend()) return std::nullopt;
  return it->second;
}

std::vector<std::string_view> parsed_arguments::values(std::string_view name) const {
  const option* o = &declared(name);
  std::vector<std::string_view> found;
  for (const auto& [option, value] : given_) {
    if (option == o) found.push_back(value);
  }
  return found;
}

namespace {

constexpr std::size_t help_column = 24;

std::string usage_line(const command_syntax& syntax) {
  std::string line = "usage: llmdlq " + std::string(syntax.command);
  for (const auto& o : syntax.operands) {
    const std::string name = std::string(o.name) + (o.repeated ? "..." : "");
    line += o.missing.empty() ? " [" + name + "]" : " " + name;
  }
  if (!syntax.groups.empty()) line += " [options]";
  return line + "\n";
}

// `  --name VALUE   help`, the help's further lines under its first.
std::string option_lines(const option& o) {
  std::string head = "  " + std::string(o.name);
  if (o.kind != option_kind::flag) head += " " + std::string(o.value_name);
  std::string text = head;
  const std::string repeatable = std::string(o.help) + (o.kind == option_kind::repeated ? " (repeatable)" : "");
  std::string_view help = repeatable;
  bool first = true;
  while (!help.empty() || first) {
    const auto end = help.find('\n');
    const std::string_view line = help.substr(0, end);
    if (first && head.size() + 2 <= help_column) {
      text += std::string(help_column - head.size(), ' ');
    } else {
      text += "\n" + std::string(help_column, ' ');
    }
    text += line;
    first = false;
    help = end == std::string_view::npos ? std::string_view() : help.substr(end + 1);
  }
  return text + "\n";
}

}  // namespace

std::string usage_text(const command_syntax& syntax) {
  std::string text = usage_line(syntax);
  text += syntax.about;
  if (!syntax.stores.empty()) text += "  STORE: " + syntax.stores + "\n";
  for (const auto& g : syntax.groups) {
    if (g.options.empty()) continue;
    text += (g.heading.empty() ? std::string("options") : std::string(g.heading)) + ":\n";
    for (const auto& o : g.options) text += option_lines(o);
  }
  text += syntax.closing;
  return text;
}

expected<parsed_arguments, int> parse_arguments(const command_syntax& syntax, arguments args) {
  return argument_reader(syntax, args).read();
}

int usage_error(const command_syntax& syntax, std::string_view message) {
  complain(syntax.command, message);
  std::cerr << usage_text(syntax);
  return exit_usage;
}

std::optional<std::int64_t> parse_count(std::string_view text, std::int64_t minimum, std::int64_t maximum) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < minimum || n > maximum) {
    return std::nullopt;
  }
  return n;
}

}  // namespace llmdlq::cli
