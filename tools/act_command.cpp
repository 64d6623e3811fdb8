// SPDX-License-Identifier: MIT
// `llmdlq claim|resolve|discard|requeue`: an operator's action on one dead letter.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/moderation_query.hpp>

#include "cli.hpp"
#include "line_writer.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "record_view.hpp"
#include "resolution.hpp"
#include "store_spec.hpp"

namespace llmdlq::cli {
namespace {

std::string_view about(moderation_action action) {
  switch (action) {
    case moderation_action::claim:
      return "  Claims a pending, requeued or exhausted dead letter for the operator: no one else can act\n"
             "  on it until it is resolved, discarded or requeued.\n";
    case moderation_action::resolve:
      return "  Resolves a claimed dead letter with the corrected JSON (a file, or - for standard input).\n"
             "  The correction must be strict JSON that the schema accepts, `format` asserted: one that\n"
             "  is not is refused (exit 1) with its errors, and nothing changes.\n";
    case moderation_action::discard: return "  Discards a pending, claimed or exhausted dead letter: it needs nothing more.\n";
    case moderation_action::requeue: return "  Requeues a pending, claimed or exhausted dead letter for the replayer.\n";
    default: return "";
  }
}

constexpr option correction[] = {
    {"--corrected", option_kind::value, "FILE|-", "the corrected JSON (- for standard input); required"},
    {"--schema", option_kind::value, "FILE", "the schema the correction must pass; required"},
};
constexpr option common[] = {
    {"--operator", option_kind::value, "NAME", "who acts, for the operator log (default: the login name)"},
    {"--note", option_kind::value, "TEXT", "why, for the operator log"},
    {"--json", option_kind::flag, "", "print the record as it now is (as `list --json` does)"},
};
constexpr operand operands[] = {{"STORE", "give the DLQ and the dlq_id"}, {"DLQ_ID", "give the DLQ and the dlq_id"}};

command_syntax syntax_of(moderation_action action) {
  command_syntax syntax{
      .command = to_string(action),
      .operands = operands,
      .groups = {},
      .about = about(action),
      .stores = store_forms(writable_moderation_stores),
      .closing = "Exit 0 when done, 1 for a refused correction, 2 for usage errors, 3 when the store fails,\n"
                 "4 when the record's status does not allow the action (another operator acted first: the\n"
                 "message says its status and who claimed it), 5 when there is no such record, 6 when its\n"
                 "stored status is none of the statuses (the message names it; nothing changes).\n",
  };
  if (action == moderation_action::resolve) syntax.groups.push_back(group("correction", correction));
  syntax.groups.push_back(group("", common));
  return syntax;
}

// The correction --corrected names, checked against --schema, into `request`;
// exit_ok, or the exit code after saying why not.
int read_correction(const command_syntax& syntax, const parsed_arguments& parsed, moderation_request& request) {
  const std::string_view command = syntax.command;
  const auto usage_error = [&](std::string_view message) { return cli::usage_error(syntax, message); };
  const bool json = parsed.has("--json");
  const auto corrected_path = parsed.value("--corrected");
  const auto schema_path = parsed.value("--schema");
  if (!corrected_path || !schema_path) return usage_error("resolve needs --corrected FILE|- and --schema FILE");
  auto schema_text = read_file_bounded(std::string(*schema_path), file_kind::schema);
  if (!schema_text) return usage_error(schema_text.error().message);
  auto schema = compile_resolution_schema(*schema_text);
  if (!schema) return usage_error(fmt::format("{} is not a usable schema: {}", *schema_path, schema.error()));
  auto corrected = *corrected_path == "-" ? read_bounded(STDIN_FILENO, file_kind::document, "-")
                                          : read_file_bounded(std::string(*corrected_path), file_kind::document);
  if (!corrected) return usage_error(corrected.error().message);
  const auto errors = check_resolution(*schema, *corrected);
  if (!errors.empty()) {
    complain(command, fmt::format("the correction is refused: {} error{}", errors.size(), errors.size() == 1 ? "" : "s"));
    for (const auto& e : errors) {
      std::cerr << fmt::format("  {} ({}): {}\n", e.instance_path.empty() ? "/" : e.instance_path, e.keyword,
                               e.message);
    }
    if (json) {
      boost::json::array list;
      for (const auto& e : errors) list.push_back(to_json(e));
      std::cout << json_text(boost::json::object{{"refused", true}, {"errors", std::move(list)}})
                << '\n';
    }
    return exit_invalid;
  }
  request.corrected = std::move(*corrected);
  return exit_ok;
}

}  // namespace

int act_command(moderation_action action, arguments args) {
  const std::string command(to_string(action));
  const command_syntax syntax = syntax_of(action);
  const auto usage_error = [&](std::string_view message) { return cli::usage_error(syntax, message); };
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const bool json = parsed->has("--json");
  moderation_request request;
  request.action = action;
  if (auto v = parsed->value("--operator")) {
    if (v->empty()) return usage_error("--operator wants a name");
    request.operator_name = std::string(*v);
  }
  if (auto v = parsed->value("--note")) request.note = std::string(*v);
  const std::vector<std::string_view>& positional = parsed->operands();
  request.dlq_id = std::string(positional[1]);
  if (request.operator_name.empty()) request.operator_name = login_name();
  if (action == moderation_action::resolve) {
    if (const int refused = read_correction(syntax, *parsed, request); refused != exit_ok) return refused;
  }
  auto spec = parse_store_spec(positional[0]);
  if (!spec) return usage_error(spec.error());
  // An operator acts on an existing queue: a SQLite file is never created here.
  if (spec->kind == store_spec::store_kind::sqlite && !std::filesystem::exists(spec->location)) {
    complain(command, "no DLQ at " + spec->location);
    return exit_usage;
  }
  auto store = open_store(*spec, /*read_only=*/false);
  if (!store) {
    complain(command, store.error().message);
    return store.error().usage ? exit_usage : exit_sink;
  }
  auto done = (*store)->act(request);
  if (!done) {
    const auto& error = done.error();
    switch (error.code) {
      case moderation_errc::not_found:
        complain(command, fmt::format("no dead letter {} in {}", request.dlq_id, display_name(*spec)));
        return exit_not_found;
      case moderation_errc::invalid_transition: {
        std::string holder;
        if (auto now = (*store)->get(request.dlq_id); now && *now && !(*now)->claimed_by.empty()) {
          holder = fmt::format(" (claimed by {}, last changed {})", (*now)->claimed_by, (*now)->updated_at);
        }
        complain(command, fmt::format("cannot {} {}: it is {}{}", command, request.dlq_id,
                                      error.current ? to_string(*error.current) : "in another status", holder));
        return exit_conflict;
      }
      case moderation_errc::invalid_resolution:
        complain(command, error.message);
        return exit_invalid;
      case moderation_errc::unreadable_record:
        complain(command, error.message + ": nothing changed (show it, and repair or purge the record)");
        return exit_unreadable;
      case moderation_errc::store_unavailable:
        complain(command, error.message);
        return exit_sink;
    }
  }
  if (json) {
    std::cout << json_text(record_summary_json(*done, system_now())) << '\n';
  } else {
    std::cout << fmt::format("{}: {} by {}\n", done->dlq_id, to_string(done->status), request.operator_name);
  }
  return exit_ok;
}

}  // namespace llmdlq::cli
