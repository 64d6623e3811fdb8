// SPDX-License-Identifier: MIT
// `llmdlq redrive`: sends dead letters' original inputs back to the Kafka
// topics they were read from, for the fixed pipeline to process again; dry
// by default.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/kafka/redrive_source.hpp>
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
#include <llmdlq/crypto/file_key_provider.hpp>
#include <llmdlq/crypto/sodium_field_cipher.hpp>
#endif
#include <llmdlq/llm/redriver.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "line_writer.hpp"
#include "options.hpp"
#include "progress_line.hpp"
#include "replay_ledger.hpp"
#include "replay_targets.hpp"
#include "selection_flags.hpp"
#include "store_spec.hpp"
#include "unreadable.hpp"

namespace llmdlq::cli {
namespace {

constexpr option run_options[] = {
    {"--execute", option_kind::flag, "", "send the inputs and mark the letters (default: dry run)"},
    {"--kafka", option_kind::value, "BROKERS",
     "the cluster the inputs were read from (their letters name the topic,\npartition and offset)"},
    {"--to", option_kind::value, "kafka:BROKERS/TOPIC",
     "send every input to this topic (of the cluster --kafka names, if given)\n"
     "instead of its own"},
    {"--allowlist", option_kind::value, "FILE",
     "where inputs may go, as for `llmdlq replay --to` (default\n"
     "$LLMDLQ_REPLAY_ALLOWLIST; required): each destination, its own topic or\n"
     "--to, must be on it"},
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
    {"--keys", option_kind::value, "DIR",
     "the key directory, to open a letter's sealed input when its record is gone\n"
     "and the stored text is redacted"},
#endif
    {"--rate", option_kind::value, "N", "letters per second (default 10; 0: no limit)"},
    {"--max-attempts", option_kind::value, "N",
     "automated attempts per payload, replays' and redrives' together (default 2)"},
    {"--json", option_kind::flag, "", "one JSON line per letter, then the summary as JSON"},
};
constexpr operand operands[] = {{"STORE", "give the DLQ whose letters to redrive"}};

const command_syntax syntax{
    .command = "redrive",
    .operands = operands,
    .groups = {group("selection", selection_options), group("run", run_options)},
    .about = "  Sends the original inputs of a DLQ's pending, requeued and exhausted letters back to where they\n"
             "  came from, for the pipeline to process again once a prompt or a schema is fixed: each\n"
             "  letter's record is read back from its origin (topic, partition, offset) and produced again\n"
             "  with its key and headers, plus llmdlq-redrive-of (the dlq_id) and llmdlq-redrive-attempt;\n"
             "  when the record is gone, the input the letter stores stands in for it, and a letter with\n"
             "  neither is named and skipped. Each send is an automated attempt at the payload, counted in\n"
             "  the store's replay state with the replays' (at most --max-attempts), and the letter becomes\n"
             "  `redriven`; a redriven letter whose input has since succeeded (the worker noted it in the\n"
             "  ledger) becomes `recovered`. A dry run (the default) reads and reports, and sends and changes\n"
             "  nothing. --execute runs under the store's redrive lease, at --rate letters per second.\n",
    .stores = store_forms(writable_moderation_stores),
    .closing = "Exit 0 when the redrive ran (see the summary), 2 for usage errors, 3 when the store, the state\n"
               "or Kafka failed (what was sent stays sent: run it again), 4 when another redrive holds the\n"
               "lease, 6 when it ran but skipped letters that do not read back.\n",
};

constexpr int exit_busy = 4;

boost::json::object report_json(const redrive_report& r) {
  boost::json::object o{{"dlq_id", r.dlq_id}, {"outcome", r.outcome}};
  if (!r.destination.empty()) o.emplace("to", r.destination);
  if (!r.from.empty()) o.emplace("from", r.from);
  if (r.attempt > 0) o.emplace("attempt", r.attempt);
  if (!r.detail.empty()) o.emplace("detail", r.detail);
  return o;
}

std::string report_line(const redrive_report& r) {
  if (r.outcome == "sent" || r.outcome == "would_send") {
    return fmt::format("{} {} {} to {}{}", r.dlq_id, r.outcome == "sent" ? "sent" : "would send", r.from, r.destination,
                       r.attempt > 0 ? fmt::format(" (automated attempt {})", r.attempt) : "");
  }
  return fmt::format("{} {}: {}", r.dlq_id, r.outcome,
                     r.detail.empty() ? "sent, but an operator or a replay moved it meanwhile" : r.detail);
}

// Sends an input only where the allowlist allows: its topic on the cluster
// the inputs are sent to, as `kafka:BROKERS/TOPIC`. Another destination
// refuses the letter (it is named with why, and the run goes on).
class allowed_destinations final : public redrive_source {
 public:
  allowed_destinations(redrive_source& inner, std::string brokers, std::string allowlist)
      : inner_(inner), brokers_(std::move(brokers)), allowlist_(std::move(allowlist)) {}

  expected<redrive_input, replay_error> fetch(const envelope& letter) override {
    auto input = inner_.fetch(letter);
    if (!input) return input;
    auto spec = llmdlq::parse_store_spec(fmt::format("kafka:{}/{}", brokers_, input->destination),
                                         llmdlq::store_kinds{store_spec::store_kind::kafka});
    if (!spec) return detail::target_failure(replay_errc::target_refused, std::move(spec.error().message));
    if (auto allowed = llmdlq::allowed_target(*spec, allowlist_); !allowed) {
      return detail::target_failure(replay_errc::target_refused, std::move(allowed.error().message));
    }
    return input;
  }
  expected<void, replay_error> send(const redrive_input& input, const redrive_reference& link) override {
    return inner_.send(input, link);
  }

 private:
  redrive_source& inner_;
  std::string brokers_;
  std::string allowlist_;
};

}  // namespace

int redrive_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const bool json = parsed->has("--json");
  const auto spec = parse_store_spec(parsed->operand(0), writable_moderation_stores);
  if (!spec) return usage_error(syntax, spec.error());
  letter_selection selection;
  if (auto e = read_selection(*parsed, selection)) return usage_error(syntax, *e);
  redrive_options options;
  options.dry_run = !parsed->has("--execute");
  options.filter = std::move(selection.filter);
  options.limit = selection.limit;
  if (selection.requeued_only) options.statuses = {moderation_status::requeued};
  if (auto e = read_rate(*parsed, options.rate)) return usage_error(syntax, *e);
  if (auto e = read_count(*parsed, "--max-attempts", options.max_attempts)) return usage_error(syntax, *e);

  kafka_redrive_options kafka;
  std::string brokers(parsed->value("--kafka").value_or(""));
  const std::string allowlist = allowlist_of(parsed->value("--allowlist").value_or(""));
  if (allowlist.empty()) {
    return usage_error(syntax, "redrive needs an allowlist of where inputs may go (--allowlist FILE or "
                               "$LLMDLQ_REPLAY_ALLOWLIST)");
  }
  if (const auto to = parsed->value("--to")) {
    auto target = parse_store_spec(*to, {store_spec::store_kind::kafka});
    if (!target) return usage_error(syntax, "--to wants kafka:BROKERS/TOPIC");
    if (!brokers.empty() && brokers != target->location) {
      return usage_error(syntax,
                         "--to names another cluster than --kafka: inputs go back to the cluster they came from");
    }
    kafka.topic = target->topic;
    brokers = target->location;
  }
  if (brokers.empty()) return usage_error(syntax, "give --kafka BROKERS, the cluster the inputs came from");
  kafka.properties = {{"bootstrap.servers", brokers}};
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
  std::optional<sodium_field_cipher> cipher;  // outlives the source
  if (const auto keys = parsed->value("--keys")) {
    cipher.emplace(std::make_shared<file_key_provider>(std::string(*keys)));
    kafka.cipher = &*cipher;
  }
#endif

  auto store = open_store(*spec, /*read_only=*/false);
  if (!store) {
    complain("redrive", store.error().message);
    return store.error().usage ? exit_usage : exit_sink;
  }
  auto ledger = open_ledger(*spec);
  if (!ledger) {
    complain("redrive", ledger.error());
    return exit_sink;
  }
  auto kafka_source = kafka_redrive_source::open(std::move(kafka));
  if (!kafka_source) {
    complain("redrive", kafka_source.error().message);
    return kafka_source.error().code == replay_errc::target_refused ? exit_usage : exit_sink;
  }
  allowed_destinations source(*kafka_source, brokers, allowlist);
  line_writer out(STDOUT_FILENO);
  progress_line progress("redrive", !json);
  progress_counts sent_of;
  if (progress.shown()) sent_of.selected = count_selected(**store, options.statuses, options.filter, options.limit);
  progress.update(sent_of);
  const bool lines_on_terminal = progress.shown() && ::isatty(STDOUT_FILENO) == 1;
  options.on_letter = [&](const redrive_report& r) {
    if (lines_on_terminal) progress.clear();  // the letter's line goes above the progress
    (void)out.write_line(json ? json_text(report_json(r)) : report_line(r));
    if (lines_on_terminal) (void)out.flush();
    ++sent_of.done;
    progress.update(sent_of);
  };
  redriver redrive(**store, **ledger, source, std::move(options));
  const auto summary = redrive.run();
  progress.finish();
  if (!summary) {
    (void)out.flush();
    complain("redrive", summary.error().message);
    return summary.error().code == replay_errc::lease_held ? exit_busy : exit_sink;
  }
  report_unreadable("redrive", summary->unreadable_letters, summary->unreadable);
  boost::json::object counts;
  for (const auto& [outcome, n] : summary->by_outcome) counts.emplace(outcome, n);
  if (json) {
    (void)out.write_line(json_text(boost::json::object{{"dry_run", summary->dry_run},
                                                       {"seen", summary->seen},
                                                       {"selected", summary->selected},
                                                       {"outcomes", counts},
                                                       {"settled", summary->settled},
                                                       {"unreadable", summary->unreadable}}));
  } else {
    std::string outcomes;
    for (const auto& [outcome, n] : summary->by_outcome) outcomes += fmt::format(", {} {}", n, outcome);
    (void)out.write_line(fmt::format("{}{} letters read, {} selected{}; {} redriven {}",
                                     summary->dry_run ? "dry run: " : "", summary->seen, summary->selected, outcomes,
                                     summary->settled,
                                     summary->dry_run ? "would be settled as recovered" : "settled as recovered"));
  }
  if (!out.flush()) {
    complain("redrive", out.failure("standard output"));
    return exit_sink;
  }
  return exit_for_unreadable(summary->unreadable);
}

}  // namespace llmdlq::cli
