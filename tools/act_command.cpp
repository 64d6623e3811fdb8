// SPDX-License-Identifier: MIT
// `llmdlq claim|resolve|discard|requeue`: an operator's action on one dead letter.
#include <filesystem>
#include <iostream>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/moderation_query.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "record_view.hpp"
#include "resolution.hpp"
#include "store_spec.hpp"

namespace llmdlq::cli {
namespace {

std::string usage(moderation_action action) {
  const std::string name(to_string(action));
  const bool resolve = action == moderation_action::resolve;
  std::string text = fmt::format("usage: llmdlq {} STORE DLQ_ID [--operator NAME] [--note TEXT]{} [--json]\n", name,
                                 resolve ? " --corrected FILE|- --schema FILE" : "");
  switch (action) {
    case moderation_action::claim:
      text += "  Claims a pending, requeued or exhausted dead letter for the operator: no one else can act\n"
              "  on it until it is resolved, discarded or requeued.\n";
      break;
    case moderation_action::resolve:
      text += "  Resolves a claimed dead letter with the corrected JSON (a file, or - for standard input).\n"
              "  The correction must be strict JSON that the schema accepts, `format` asserted: one that\n"
              "  is not is refused (exit 1) with its errors, and nothing changes.\n";
      break;
    case moderation_action::discard:
      text += "  Discards a pending, claimed or exhausted dead letter: it needs nothing more.\n";
      break;
    case moderation_action::requeue:
      text += "  Requeues a pending, claimed or exhausted dead letter for the replayer.\n";
      break;
    default:
      break;
  }
  text += "  STORE: sqlite:PATH[#TABLE] | postgres:CONNINFO[#[SCHEMA.]TABLE]\n"
          "  --operator NAME  who acts, for the operator log (default: the login name)\n"
          "  --note TEXT      why, for the operator log\n"
          "  --json           print the record as it now is (as `list --json` does)\n"
          "  Exit 0 when done, 1 for a refused correction, 2 for usage errors, 3 when the store fails,\n"
          "  4 when the record's status does not allow the action (another operator acted first: the\n"
          "  message says its status and who claimed it), 5 when there is no such record.\n";
  return text;
}

}  // namespace

int act_command(moderation_action action, arguments args) {
  const std::string command(to_string(action));
  const auto usage_error = [&](std::string_view message) {
    complain(command, message);
    std::cerr << usage(action);
    return exit_usage;
  };
  bool json = false;
  moderation_request request;
  request.action = action;
  std::optional<std::string> corrected_path, schema_path;
  std::vector<std::string_view> positional;
  while (!args.done()) {
    const std::string_view arg = args.take();
    if (arg == "--help" || arg == "-h") {
      std::cout << usage(action);
      return exit_ok;
    }
    if (arg == "--json") {
      json = true;
      continue;
    }
    if (arg == "-" || !arg.starts_with("-")) {
      positional.push_back(arg);
      continue;
    }
    const auto value = args.value_of(arg);
    if (!value) return exit_usage;
    if (arg == "--operator") {
      if (value->empty()) return usage_error("--operator wants a name");
      request.operator_name = std::string(*value);
    } else if (arg == "--note") {
      request.note = std::string(*value);
    } else if (action == moderation_action::resolve && arg == "--corrected") {
      corrected_path = std::string(*value);
    } else if (action == moderation_action::resolve && arg == "--schema") {
      schema_path = std::string(*value);
    } else {
      return usage_error("unknown option " + std::string(arg));
    }
  }
  if (positional.size() != 2) return usage_error("give the DLQ and the dlq_id");
  request.dlq_id = std::string(positional[1]);
  if (request.operator_name.empty()) request.operator_name = login_name();
  if (action == moderation_action::resolve) {
    if (!corrected_path || !schema_path) return usage_error("resolve needs --corrected FILE|- and --schema FILE");
    auto schema_text = read_file(*schema_path);
    if (!schema_text) return usage_error(fmt::format("cannot read {}: {}", *schema_path, schema_text.error()));
    auto schema = compile_resolution_schema(*schema_text);
    if (!schema) return usage_error(fmt::format("{} is not a usable schema: {}", *schema_path, schema.error()));
    auto corrected = *corrected_path == "-" ? read_stdin() : read_file(*corrected_path);
    if (!corrected) return usage_error(fmt::format("cannot read {}: {}", *corrected_path, corrected.error()));
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
        std::cout << boost::json::serialize(boost::json::object{{"refused", true}, {"errors", std::move(list)}})
                  << '\n';
      }
      return exit_invalid;
    }
    request.corrected = std::move(*corrected);
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
      case moderation_errc::store_unavailable:
        complain(command, error.message);
        return exit_sink;
    }
  }
  if (json) {
    std::cout << boost::json::serialize(record_summary_json(*done, system_now())) << '\n';
  } else {
    std::cout << fmt::format("{}: {} by {}\n", done->dlq_id, to_string(done->status), request.operator_name);
  }
  return exit_ok;
}

}  // namespace llmdlq::cli
