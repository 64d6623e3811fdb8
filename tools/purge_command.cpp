// SPDX-License-Identifier: MIT
// `llmdlq purge`: removes a DLQ's expired dead letters and reports what went.
#include <filesystem>
#include <iostream>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/purge.hpp>
#include <llmdlq/sqlite/store.hpp>
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
#include <llmdlq/postgres/store.hpp>
#endif
#ifdef LLMDLQ_TOOL_WITH_REDIS
#include <llmdlq/redis/stream_sink.hpp>
#endif

#include "cli.hpp"
#include "line_writer.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "progress_line.hpp"
#include "store_spec.hpp"
#include "unreadable.hpp"

namespace llmdlq::cli {
namespace {

constexpr option options[] = {
    {"--dry-run", option_kind::flag, "", "count what would go; change nothing, audit nothing"},
    {"--now", option_kind::value, "RFC3339", "the purge's time (default: the system clock)"},
    {"--operator", option_kind::value, "NAME", "who purges, for the audit (default: the login name)"},
    {"--json", option_kind::flag, "", "print the report as JSON"},
};
constexpr operand operands[] = {{"STORE", "give the DLQ to purge"}};

constexpr store_kinds purgeable = {store_spec::store_kind::sqlite, store_spec::store_kind::jsonl,
                                   store_spec::store_kind::postgres, store_spec::store_kind::redis};

const command_syntax syntax{
    .command = "purge",
    .operands = operands,
    .groups = {group("", options)},
    .about = "  Removes the dead letters whose expires_at is at or before now (letters without one stay)\n"
             "  and writes an audit record: who, when, how many, the range of their expiry times.\n",
    .stores = store_forms(purgeable),
    .closing = "A JSON Lines file that a sink holds open is not purged (exit 3): stop the writer first.\n"
               "A real purge of a PostgreSQL DLQ migrates it first (it makes the audit table there).\n"
               "A SQLite record whose expires_at is not a time as the store writes it is kept and named.\n"
               "Exit 2 for usage errors and a SQLite or JSON Lines file that is not there (it is never\n"
               "created), 3 when the store fails, 6 when it purged but kept records whose expiry does not\n"
               "read back.\n",
};

using failure = std::pair<int, std::string>;

unexpected<failure> store_failed(sink_error e) { return unexpected(failure{exit_sink, std::move(e.message)}); }

// The purge's progress on a terminal: how many went, of how many that expired when that is known.
struct purge_progress {
  progress_line line;
  progress_counts counts;

  void show(std::uint64_t purged) {
    counts.done = purged;
    line.update(counts);
  }
};

// What `purge` would take from a SQLite or PostgreSQL store, counted by a
// dry run of its own, for the progress: its purge is one statement.
template <typename Store>
expected<purge_report, sink_error> purge_counted(Store& store, const purge_request& request, purge_progress& progress) {
  if (progress.line.shown() && !request.dry_run) {
    purge_request count = request;
    count.dry_run = true;
    if (const auto expiring = store.purge(count)) progress.counts.selected = expiring->count;
    progress.show(0);
  }
  return store.purge(request);
}

// A SQLite or PostgreSQL DLQ's purge.
expected<purge_report, failure> purge_moderation_store(const store_spec& spec, const purge_request& request,
                                                       purge_progress& progress) {
  // A file that is not there is never created.
  if (spec.kind == store_spec::store_kind::sqlite && !std::filesystem::exists(spec.location)) {
    return unexpected(failure{exit_usage, "no DLQ at " + spec.location});
  }
  // A dry run writes nothing; a real PostgreSQL purge needs the audit table, which migrating makes.
  auto store = open_store(spec, /*read_only=*/request.dry_run);
  if (!store)
    return unexpected(failure{store.error().usage ? exit_usage : exit_sink, std::move(store.error().message)});
  expected<purge_report, sink_error> report = unexpected(sink_error{sink_errc::rejected, "no purge for this store"});
  if (auto* sqlite = dynamic_cast<sqlite_store*>(store->get())) report = purge_counted(*sqlite, request, progress);
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
  if (auto* postgres = dynamic_cast<postgres_store*>(store->get())) {
    report = purge_counted(*postgres, request, progress);
  }
#endif
  if (!report) return store_failed(std::move(report.error()));
  return *report;
}

// Runs the purge of the store `text` names.
expected<purge_report, failure> purge_store(std::string_view text, const purge_request& request,
                                            purge_progress& progress) {
  auto spec = parse_store_spec(text, purgeable);
  if (!spec) return unexpected(failure{exit_usage, std::move(spec.error())});
  expected<purge_report, sink_error> report = unexpected(sink_error{sink_errc::rejected, "no purge for this store"});
  switch (spec->kind) {
    case store_spec::store_kind::jsonl:
      if (!std::filesystem::exists(spec->location))
        return unexpected(failure{exit_usage, "no DLQ at " + spec->location});
      report = purge_jsonl_file(spec->location, request);
      break;
    case store_spec::store_kind::redis: {
#ifdef LLMDLQ_TOOL_WITH_REDIS
      redis_stream_sink_options options;
      options.connection.host = spec->location;
      options.connection.port = spec->port;
      options.stream = spec->topic;
      auto sink = redis_stream_sink::open(std::move(options));
      if (!sink) return store_failed(std::move(sink.error()));
      report = sink->purge(request);
#else
      return unexpected(failure{exit_usage, "this llmdlq was built without Redis"});
#endif
      break;
    }
    default: return purge_moderation_store(*spec, request, progress);
  }
  if (!report) return store_failed(std::move(report.error()));
  return *report;
}

}  // namespace

int purge_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const bool json = parsed->has("--json");
  const std::string_view store = parsed->operand(0);
  purge_request request{.now = system_now(), .operator_name = {}, .dry_run = parsed->has("--dry-run"), .on_piece = {}};
  if (const auto value = parsed->value("--now")) {
    const auto now = parse_rfc3339(*value);
    if (!now) return usage_error(syntax, fmt::format("--now wants an RFC 3339 time, not '{}'", *value));
    request.now = *now;
  }
  if (const auto value = parsed->value("--operator")) {
    if (value->empty()) return usage_error(syntax, "--operator wants a name");
    request.operator_name = std::string(*value);
  }
  if (request.operator_name.empty()) request.operator_name = login_name();
  purge_progress progress{progress_line("purge", !json), {}};
  request.on_piece = [&progress](const purge_report& so_far) { progress.show(so_far.count); };
  auto report = purge_store(store, request, progress);
  if (report) {
    if (!progress.counts.selected) progress.counts.selected = report->count;  // all that expired, now known
    progress.show(report->count);
  }
  progress.line.finish();
  if (!report) {
    complain("purge", report.error().second);
    return report.error().first;
  }
  report_unreadable("purge", report->unreadable_records, report->unreadable);
  if (json) {
    auto out = to_json(*report);
    out["store"] = store;
    out["unreadable"] = report->unreadable;
    out["unreadable_records"] = unreadable_json(report->unreadable_records);
    std::cout << json_text(out) << '\n';
    return exit_for_unreadable(report->unreadable);
  }
  const bool ranged = report->oldest_expires_at && report->newest_expires_at;
  const std::string range = !ranged ? std::string()
                                    : fmt::format(", expired {} .. {}", format_rfc3339(*report->oldest_expires_at),
                                                  format_rfc3339(*report->newest_expires_at));
  std::cout << fmt::format(
      "{} {} dead letter{} from {}{} (operator {}, at {}){}\n", report->dry_run ? "would purge" : "purged",
      report->count, report->count == 1 ? "" : "s", store, range, report->operator_name, format_rfc3339(report->at),
      report->unreadable == 0 ? "" : fmt::format("; kept {} whose expiry does not read back", report->unreadable));
  return exit_for_unreadable(report->unreadable);
}

}  // namespace llmdlq::cli
