// SPDX-License-Identifier: MIT
// `llmdlq list`: a page of a moderation queue's records, filtered.
#include <unistd.h>

#include <charconv>
#include <iostream>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/moderation_query.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "record_view.hpp"
#include "store_spec.hpp"

namespace llmdlq::cli {
namespace {

constexpr std::string_view usage =
    "usage: llmdlq list STORE [--status S]... [--category C]... [--triage T]... [--code X]...\n"
    "                   [--schema-version V] [--prompt-version V] [--model-version V]\n"
    "                   [--since TIME] [--until TIME] [--limit N] [--after CURSOR] [--json]\n"
    "  Lists a page of the dead letters that match, oldest first: id, age, status, category,\n"
    "  triage class, failure code and who claimed it. A repeated filter matches any of its values.\n"
    "  STORE: sqlite:PATH[#TABLE] | postgres:CONNINFO[#[SCHEMA.]TABLE] | kafka:BROKERS/TOPIC (read only)\n"
    "  --since/--until TIME  created at or after / before: RFC 3339, or an age (90s, 30m, 2h, 7d)\n"
    "  --limit N             records per page (default 50)\n"
    "  --after CURSOR        the next page: the cursor the previous page printed\n"
    "  --json                one JSON object per record; a last line {\"next\": CURSOR} when more match\n"
    "  The table form prints the next page's cursor to stderr. Exit 0, 2 for usage errors and a\n"
    "  SQLite DLQ that is missing, 3 when the store fails.\n";

}  // namespace

int list_command(arguments args) {
  const timestamp now = system_now();
  bool json = false;
  std::string_view target;
  moderation_query query;
  query.limit = 50;
  while (!args.done()) {
    const std::string_view arg = args.take();
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return exit_ok;
    }
    if (arg == "--json") {
      json = true;
      continue;
    }
    if (!arg.starts_with("-")) {
      if (!target.empty()) return usage_error("list", usage, "unexpected argument " + std::string(arg));
      target = arg;
      continue;
    }
    const auto value = args.value_of(arg);
    if (!value) return exit_usage;
    if (arg == "--status") {
      const auto status = parse_moderation_status(*value);
      if (!status) return usage_error("list", usage, fmt::format("no status '{}'", *value));
      query.statuses.push_back(*status);
    } else if (arg == "--category") {
      query.categories.emplace_back(*value);
    } else if (arg == "--triage") {
      query.triage_classes.emplace_back(*value);
    } else if (arg == "--code") {
      query.failure_codes.emplace_back(*value);
    } else if (arg == "--schema-version") {
      query.schema_version = std::string(*value);
    } else if (arg == "--prompt-version") {
      query.prompt_version = std::string(*value);
    } else if (arg == "--model-version") {
      query.model_version = std::string(*value);
    } else if (arg == "--since" || arg == "--until") {
      const auto t = parse_time_or_age(*value, now);
      if (!t) return usage_error("list", usage, fmt::format("{} wants an RFC 3339 time or an age like 2h, not '{}'", arg, *value));
      (arg == "--since" ? query.created_since : query.created_before) = *t;
    } else if (arg == "--limit") {
      std::size_t limit = 0;
      const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), limit);
      if (ec != std::errc() || end != value->data() + value->size() || limit == 0 || limit > 100000) {
        return usage_error("list", usage, fmt::format("--limit wants a count from 1 to 100000, not '{}'", *value));
      }
      query.limit = limit;
    } else if (arg == "--after") {
      query.after = parse_moderation_cursor(*value);
      if (!query.after) return usage_error("list", usage, fmt::format("'{}' is not a cursor that list printed", *value));
    } else {
      return usage_error("list", usage, "unknown option " + std::string(arg));
    }
  }
  if (target.empty()) return usage_error("list", usage, "give the DLQ to list");
  auto spec = parse_store_spec(target);
  if (!spec) return usage_error("list", usage, spec.error());
  auto store = open_store(*spec, /*read_only=*/true);
  if (!store) {
    complain("list", store.error().message);
    return store.error().usage ? exit_usage : exit_sink;
  }
  auto page = (*store)->query(query);
  if (!page) {
    complain("list", page.error().message);
    return exit_sink;
  }
  const std::string next = page->next ? to_string(*page->next) : std::string();
  if (json) {
    for (const auto& r : page->records) std::cout << boost::json::serialize(record_summary_json(r, now)) << '\n';
    if (page->more) std::cout << boost::json::serialize(boost::json::object{{"next", next}}) << '\n';
    return exit_ok;
  }
  const bool colour = colour_for(STDOUT_FILENO);
  const std::string header = fmt::format("{:<36} {:>5}  {:<10} {:<14} {:<22} {:<32} {}", "ID", "AGE", "STATUS",
                                         "CATEGORY", "TRIAGE", "CODE", "CLAIMED BY");
  std::cout << (colour ? fmt::format("\x1b[1m{}\x1b[0m", header) : header) << '\n';
  for (const auto& r : page->records) {
    const auto created = parse_rfc3339(r.created_at);
    std::cout << fmt::format("{:<36} {:>5}  {:<10} {:<14} {:<22} {:<32} {}\n", r.dlq_id,
                             created ? format_age(now - *created) : "?", to_string(r.status), r.category, r.triage,
                             r.failure_code, r.claimed_by.empty() ? "-" : r.claimed_by);
  }
  std::cerr << fmt::format("{} record{}", page->records.size(), page->records.size() == 1 ? "" : "s");
  if (page->more) std::cerr << fmt::format("; next page: --after {}", next);
  std::cerr << '\n';
  return exit_ok;
}

}  // namespace llmdlq::cli
