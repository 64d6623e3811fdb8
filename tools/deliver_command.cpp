// SPDX-License-Identifier: MIT
// `llmdlq deliver`: sends the corrections people resolved dead letters with
// downstream, each payload once, through the replay ledger kept in the store.
#include <iostream>
#include <memory>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/llm/resolution_delivery.hpp>

#include "cli.hpp"
#include "line_writer.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "progress_line.hpp"
#include "replay_ledger.hpp"
#include "replay_targets.hpp"
#include "store_spec.hpp"
#include "unreadable.hpp"

namespace llmdlq::cli {
namespace {

constexpr option options[] = {
    {"--to", option_kind::value, "TARGET",
     "the target, required: jsonl:PATH, kafka:BROKERS/TOPIC,\n"
     "postgres:CONNINFO[#[SCHEMA.]TABLE] or redis:HOST:PORT/STREAM; it must be on\n"
     "the allowlist named by --allowlist FILE or $LLMDLQ_REPLAY_ALLOWLIST, as for\n"
     "`llmdlq replay --to`"},
    {"--allowlist", option_kind::value, "FILE", "the allowlist of targets"},
    {"--json", option_kind::flag, "", "print the summary as one JSON object"},
};
constexpr operand operands[] = {{"STORE", "give the DLQ whose resolutions to deliver"}};

const command_syntax syntax{
    .command = "deliver",
    .operands = operands,
    .groups = {group("", options)},
    .about = "  Writes the correction of every resolved dead letter to the target, once per payload: each\n"
             "  is recorded in the store's replay ledger before it is written and marked delivered after,\n"
             "  so a run killed midway and run again writes each once. Each holds idempotency_key,\n"
             "  source (operator), dlq_id, resolved_by, note and output. A payload that went downstream\n"
             "  before (the original, a replay) is not written again.\n",
    .stores = store_forms(writable_moderation_stores),
    .closing = "A resolved letter whose record does not read back is skipped and named on stderr; the others\n"
               "are delivered all the same. Exit 0 when done, 2 for usage errors, 3 when the store, the ledger or\n"
               "the target fails (what was delivered stays delivered: run it again), 6 when done but some\n"
               "resolved letters do not read back.\n",
};

}  // namespace

int deliver_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const bool json = parsed->has("--json");
  const std::string_view to = parsed->value("--to").value_or("");
  const std::string_view allowlist = parsed->value("--allowlist").value_or("");
  if (to.empty()) return usage_error(syntax, "--to is required");
  const auto spec = parse_store_spec(parsed->operand(0));
  if (!spec) return usage_error(syntax, spec.error());
  if (spec->kind == store_spec::store_kind::kafka) {
    return usage_error(syntax, "a Kafka topic holds no resolutions: deliver from the moderation store");
  }
  const auto allowed = allowed_target_spec(to, allowlist);
  if (!allowed) return usage_error(syntax, allowed.error());
  auto target = open_allowed_target(*allowed);
  if (!target) {
    complain("deliver", target.error());
    return exit_usage;
  }
  auto store = open_store(*spec, /*read_only=*/false);
  if (!store) {
    complain("deliver", store.error().message);
    return store.error().usage ? exit_usage : exit_sink;
  }
  auto ledger = open_ledger(*spec);
  if (!ledger) {
    complain("deliver", ledger.error());
    return exit_sink;
  }
  progress_line progress("deliver", !json);
  progress_counts counts;
  if (progress.shown()) {
    // The store counts its records by status itself.
    if (const auto statistics = (*store)->statistics()) {
      const auto resolved = statistics->by_status.find(std::string(to_string(moderation_status::resolved)));
      counts.selected = resolved == statistics->by_status.end() ? 0 : resolved->second;
    }
  }
  progress.update(counts);
  const auto summary = deliver_resolutions(**store, **ledger, **target, 100,
                                           [&](const resolution_delivery_summary& so_far) {
                                             counts.done = so_far.resolved;
                                             progress.update(counts);
                                           });
  progress.finish();
  if (!summary) {
    complain("deliver", summary.error().message);
    return exit_sink;
  }
  report_unreadable("deliver", summary->unreadable_letters, summary->unreadable);
  if (json) {
    std::cout << json_text(boost::json::object{{"resolved", summary->resolved},
                                               {"delivered", summary->delivered},
                                               {"already_delivered", summary->already_delivered},
                                               {"superseded", summary->superseded},
                                               {"unreadable", summary->unreadable},
                                               {"unreadable_letters", unreadable_json(summary->unreadable_letters)}})
              << '\n';
  } else {
    std::cout << fmt::format("{} resolved, {} delivered now, {} delivered before, {} already downstream otherwise{}\n",
                             summary->resolved, summary->delivered, summary->already_delivered, summary->superseded,
                             summary->unreadable == 0
                                 ? ""
                                 : fmt::format(", {} skipped: they do not read back", summary->unreadable));
  }
  if (!std::cout.flush()) {
    complain("deliver", "cannot write the summary to standard output: what was delivered is in the ledger");
    return exit_sink;
  }
  return exit_for_unreadable(summary->unreadable);
}

}  // namespace llmdlq::cli
