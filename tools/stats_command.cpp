// SPDX-License-Identifier: MIT
// `llmdlq stats`: counts of a DLQ's records by category, triage and status.
#include <iostream>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/detail/counted.hpp>
#include <llmdlq/moderation_query.hpp>

#include "cli.hpp"
#include "line_writer.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "store_spec.hpp"
#include "unreadable.hpp"

namespace llmdlq::cli {
namespace {

constexpr option options[] = {
    {"--json", option_kind::flag, "", "print the counts as JSON"},
};
constexpr operand operands[] = {{"STORE", "give the DLQ to count"}};

const command_syntax syntax{
    .command = "stats",
    .operands = operands,
    .groups = {group("", options)},
    .about = "  Counts the dead letters in a DLQ by category, triage class, status and failure code, and\n"
             "  gives the creation time of the oldest pending one.\n"
             "  Reads the DLQ without changing it (also a SQLite file it may not write; a PostgreSQL table\n"
             "  is not migrated).\n",
    .stores = store_forms(),
    .closing = "Records that do not read back (an unknown status, a time or an envelope that is not one) are\n"
               "counted as unreadable and named, with why. Exit 0, 2 for usage errors and a SQLite DLQ that is\n"
               "missing or cannot be opened as one, 3 when the store fails, 6 when some records do not read back.\n",
};

}  // namespace

int stats_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const bool json = parsed->has("--json");
  auto spec = parse_store_spec(parsed->operand(0));
  if (!spec) return usage_error(syntax, spec.error());
  auto dlq = open_store(*spec, /*read_only=*/true);
  if (!dlq) {
    complain("stats", dlq.error().message);
    return dlq.error().usage ? exit_usage : exit_sink;
  }
  auto stats = (*dlq)->statistics();
  if (!stats) {
    complain("stats", stats.error().message);
    return exit_sink;
  }
  auto unreadable = (*dlq)->unreadable_records();
  if (!unreadable) {
    complain("stats", unreadable.error().message);
    return exit_sink;
  }
  const std::pair<std::string_view, const std::map<std::string, std::uint64_t>*> groups[] = {
      {"category", &stats->by_category}, {"triage", &stats->by_triage}, {"status", &stats->by_status},
      {"failure_code", &stats->by_code}};
  if (json) {
    boost::json::object out{{"total", stats->total}};
    if (stats->oldest_pending_created_at) {
      out.emplace("oldest_pending_created_at", format_rfc3339(*stats->oldest_pending_created_at));
    }
    for (const auto& [name, counts] : groups) {
      boost::json::object group;
      for (const auto& [key, count] : *counts) group.emplace(key, count);
      out.emplace(name, std::move(group));
    }
    out.emplace("unreadable", unreadable->count);
    out.emplace("unreadable_records", unreadable_json(unreadable->records));
    std::cout << json_text(out) << '\n';
    report_unreadable("stats", unreadable->records, unreadable->count);
    return exit_for_unreadable(unreadable->count);
  }
  std::cout << fmt::format("{}: {}\n", display_name(*spec), detail::counted(stats->total, "dead letter"));
  if (stats->oldest_pending_created_at) {
    std::cout << fmt::format("oldest pending: created {}\n", format_rfc3339(*stats->oldest_pending_created_at));
  }
  for (const auto& [name, counts] : groups) {
    std::cout << fmt::format("\nby {}:\n", name);
    for (const auto& [key, count] : *counts) std::cout << fmt::format("  {:<28} {:>8}\n", key, count);
  }
  if (unreadable->count > 0) {
    std::cout << fmt::format("\nunreadable: {} (counted above by what their columns say)\n", unreadable->count);
    for (const auto& r : unreadable->records) {
      std::cout << fmt::format("  {:<36} {}\n", printable_id(r.dlq_id), r.reason);
    }
    report_unreadable("stats", unreadable->records, unreadable->count);
  }
  return exit_for_unreadable(unreadable->count);
}

}  // namespace llmdlq::cli
