// SPDX-License-Identifier: MIT
// `llmdlq validate`: validates documents against a JSON Schema, one JSON
// verdict per document on standard output.
#include <unistd.h>

#include <cerrno>

#include <iostream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <llmdlq/json_parser.hpp>
#include <llmdlq/schema.hpp>

#include "cli.hpp"
#include "line_writer.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "line_reader.hpp"
#include "schema_flags.hpp"

namespace llmdlq::cli {
namespace {

constexpr option options_table[] = {
    {"--schema", option_kind::value, "FILE", "the JSON Schema; required"},
    {"--remote", option_kind::repeated, "URI=DIR", "serves $ref targets under the URI prefix from files in DIR"},
    {"--jsonl", option_kind::flag, "", "one document per line of standard input"},
};
constexpr operand operands[] = {{"FILE", "", true}};

const command_syntax syntax{
    .command = "validate",
    .operands = operands,
    .groups = {group("", options_table), group("schema", schema_options)},
    .about = "  Validates each FILE (its whole content is one document), or with --jsonl one\n"
             "  document per line of standard input, or else all of standard input as one.\n"
             "  Prints one JSON line per document. Exit 0 when all are valid, 1 when any is\n"
             "  invalid, 2 for usage errors, an unusable schema or an unreadable file.\n"
             "  Each verdict names the schema's draft (\"dialect\").\n",
    .stores = "",
    .closing = "",
};

struct remote_mapping {
  std::string prefix;
  std::string directory;
};

boost::json::object syntax_verdict(const syntax_error& e) {
  return {{"valid", false},
          {"syntax",
           {{"offset", e.offset}, {"line", e.line}, {"column", e.column}, {"message", e.message}}}};
}

boost::json::object errors_verdict(const std::vector<validation_error>& errors) {
  boost::json::array list;
  for (const auto& e : errors) list.push_back(to_json(e));
  return {{"valid", false}, {"errors", std::move(list)}};
}

class validator {
 public:
  explicit validator(const llmdlq::schema& schema) : schema_(schema) {}

  // Validates one document and prints its verdict; returns whether it was valid.
  bool run(std::string_view document) {
    const auto parsed = parser_.parse(document);
    boost::json::object verdict;
    bool valid = false;
    if (!parsed) {
      verdict = syntax_verdict(parsed.error());
    } else if (schema_.is_valid(*parsed)) {
      verdict = {{"valid", true}};
      valid = true;
    } else {
      verdict = errors_verdict(schema_.validate(*parsed));
    }
    verdict.emplace("dialect", to_string(schema_.dialect()));
    std::cout << json_text(verdict) << '\n';
    return valid;
  }

 private:
  const llmdlq::schema& schema_;
  json_parser parser_;
};

// Validates each line of standard input as one document; the exit code.
int validate_lines(validator& check, const llmdlq::schema& schema) {
  const std::size_t max_document = parse_options{}.max_size;
  bool all_valid = true;
  line_reader lines(STDIN_FILENO, max_document, 0);
  while (true) {
    auto line = lines.next();
    if (!line) {
      complain("validate", "cannot read standard input: " + line.error());
      return exit_usage;
    }
    if (!*line) break;
    if ((*line)->over_limit) {
      std::cout << json_text(boost::json::object{
                       {"valid", false},
                       {"too_large", {{"length", (*line)->length}, {"limit", max_document}}},
                       {"dialect", to_string(schema.dialect())}})
                << '\n';
      all_valid = false;
      continue;
    }
    all_valid &= check.run((*line)->text);
  }
  return all_valid ? exit_ok : exit_invalid;
}

}  // namespace

int validate_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  compile_options options;
  if (auto error = read_schema_options(*parsed, options)) return usage_error(syntax, *error);
  const bool jsonl = parsed->has("--jsonl");
  std::vector<remote_mapping> remotes;
  for (const auto value : parsed->values("--remote")) {
    const auto equals = value.find('=');
    if (equals == std::string_view::npos || equals == 0) return usage_error(syntax, "--remote wants URI=DIR");
    remotes.push_back({std::string(value.substr(0, equals)), std::string(value.substr(equals + 1))});
  }
  const std::vector<std::string> files(parsed->operands().begin(), parsed->operands().end());
  const auto schema_option = parsed->value("--schema");
  if (!schema_option) return usage_error(syntax, "--schema is required");
  const std::optional<std::string> schema_path = std::string(*schema_option);
  if (jsonl && !files.empty()) {
    complain("validate", "--jsonl reads standard input: give no FILE");
    return exit_usage;
  }

  const auto schema_text = read_file_bounded(*schema_path, file_kind::schema);
  if (!schema_text) {
    complain("validate", schema_text.error().message);
    return exit_usage;
  }
  // A --remote file there is but that cannot be read (or is over the schema
  // limit) is said as such, rather than as a reference nothing answers.
  std::optional<detail::read_error> remote_error;
  options.resolver = [&remotes, &remote_error](std::string_view uri) -> std::optional<std::string> {
    for (const auto& remote : remotes) {
      if (!uri.starts_with(remote.prefix)) continue;
      auto content = read_file_bounded(remote.directory + "/" + std::string(uri.substr(remote.prefix.size())),
                                       file_kind::schema);
      if (!content) {
        if (content.error().system_error != ENOENT && !remote_error) remote_error = std::move(content.error());
        return std::nullopt;
      }
      return std::move(*content);
    }
    return std::nullopt;
  };
  const auto schema = llmdlq::schema::compile(*schema_text, options);
  if (!schema) {
    const auto& e = schema.error();
    complain("validate", "invalid schema " + *schema_path + (e.location.empty() ? "" : " at " + e.location) +
                             ": " + e.message + (remote_error ? " (" + remote_error->message + ")" : ""));
    return exit_usage;
  }
  if (remote_error) {  // a --remote file there is but cannot be read: never left for a document to reach
    complain("validate", "invalid schema " + *schema_path + ": a schema it refers to cannot be read (" +
                             remote_error->message + ")");
    return exit_usage;
  }
  print_schema_warnings("validate", *schema);

  validator check(*schema);
  bool all_valid = true;
  bool io_failed = false;
  if (jsonl) {
    return validate_lines(check, *schema);
  } else if (files.empty()) {
    const auto document = read_bounded(STDIN_FILENO, file_kind::document, "-");
    if (!document) {
      complain("validate", document.error().message);
      return exit_usage;
    }
    all_valid = check.run(*document);
  } else {
    for (const auto& file : files) {
      const auto document = read_file_bounded(file, file_kind::document);
      if (!document) {
        complain("validate", document.error().message);
        std::cout << json_text(boost::json::object{
                         {"valid", false}, {"file", file}, {"read_error", document.error().reason}})
                  << '\n';
        io_failed = true;
        continue;
      }
      all_valid &= check.run(*document);
    }
  }
  if (io_failed) return exit_usage;
  return all_valid ? exit_ok : exit_invalid;
}

}  // namespace llmdlq::cli
