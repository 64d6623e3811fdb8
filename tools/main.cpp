// SPDX-License-Identifier: MIT
// The `llmdlq` command-line tool: dispatches to its subcommands.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string_view>

#include <llmdlq/version.hpp>

#include "commands.hpp"

namespace {

constexpr std::string_view usage =
    "usage: llmdlq <command> [options]\n"
    "commands:\n"
    "  validate   validate JSON documents against a JSON Schema (drafts 4, 6, 7, 2019-09, 2020-12)\n"
    "  process    judge LLM responses (JSON Lines on stdin) and dead-letter the failures\n"
    "  stats      count a DLQ's records by category, triage and status\n"
    "  repair     repair the JSON in an LLM response, reporting every change\n"
    "  provider-schema  a JSON Schema as a provider's structured outputs take it\n"
    "  replay     run the recovery ladder over a DLQ (dry run by default)\n"
    "  deliver    send the corrections of resolved dead letters downstream, each once\n"
#ifdef LLMDLQ_TOOL_WITH_KAFKA
    "  redrive    send dead letters' original inputs back to their Kafka topics (dry run by default)\n"
#endif
    "  eval       ask a candidate prompt or model for the inputs of a DLQ's letters, and count what it fixes\n"
    "  purge      remove a DLQ's expired dead letters, with an audit record\n"
    "  list       list a DLQ's dead letters, filtered, a page at a time\n"
    "  show       show one dead letter: its response with the failing places marked, its history\n"
    "  export     write a DLQ's dead letters as a JSON Lines dataset, filtered as list filters\n"
    "  claim      claim a dead letter for an operator\n"
    "  resolve    resolve a claimed dead letter with a correction its schema accepts\n"
    "  discard    discard a dead letter\n"
    "  requeue    requeue a dead letter for the replayer\n"
    "  top        watch a DLQ's counts by status, category and triage\n"
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
    "  rekey      re-seal a DLQ's sealed originals with another key\n"
    "  keys       generate, use, shred and list the keys that seal originals\n"
#endif
    "  report     write a DLQ's counts and charts as one HTML page\n"
#ifdef LLMDLQ_TOOL_WITH_CONSOLE
    "  console    serve the moderation queue to a browser\n"
#endif
    "run 'llmdlq <command> --help' for a command's options\n";

// The command's exit code, or nothing for a command there is not.
std::optional<int> run_command(std::string_view command, llmdlq::cli::arguments rest) {
  using namespace llmdlq::cli;
  if (command == "validate") return validate_command(rest);
  if (command == "process") return process_command(rest);
  if (command == "stats") return stats_command(rest);
  if (command == "repair") return repair_command(rest);
  if (command == "provider-schema") return provider_schema_command(rest);
  if (command == "replay") return replay_command(rest);
  if (command == "deliver") return deliver_command(rest);
#ifdef LLMDLQ_TOOL_WITH_KAFKA
  if (command == "redrive") return redrive_command(rest);
#endif
  if (command == "eval") return eval_command(rest);
  if (command == "purge") return purge_command(rest);
  if (command == "list") return list_command(rest);
  if (command == "show") return show_command(rest);
  if (command == "export") return export_command(rest);
  if (command == "claim") return act_command(llmdlq::moderation_action::claim, rest);
  if (command == "resolve") return act_command(llmdlq::moderation_action::resolve, rest);
  if (command == "discard") return act_command(llmdlq::moderation_action::discard, rest);
  if (command == "requeue") return act_command(llmdlq::moderation_action::requeue, rest);
  if (command == "top") return top_command(rest);
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
  if (command == "rekey") return rekey_command(rest);
  if (command == "keys") return keys_command(rest);
#endif
  if (command == "report") return report_command(rest);
#ifdef LLMDLQ_TOOL_WITH_CONSOLE
  if (command == "console") return console_command(rest);
#endif
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace llmdlq::cli;
  if (argc < 2) {
    std::cerr << usage;
    return exit_usage;
  }
  const std::string_view command = argv[1];
  const arguments rest(std::span<char* const>(argv + 2, static_cast<std::size_t>(argc - 2)));
  if (const auto code = run_command(command, rest)) {
    // Results that did not reach standard output are never a success.
    if (!std::cout.flush() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::cerr << "llmdlq " << command << ": cannot write standard output: what it printed is incomplete\n";
      return *code == exit_ok ? exit_sink : *code;
    }
    return *code;
  }
  if (command == "--version") {
    std::cout << "llmdlq " << llmdlq::version_string << '\n';
    return exit_ok;
  }
  if (command == "--help" || command == "-h") {
    std::cout << usage;
    return exit_ok;
  }
  std::cerr << "llmdlq: unknown command '" << command << "'\n" << usage;
  return exit_usage;
}
