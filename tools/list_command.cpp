// SPDX-License-Identifier: MIT
// `llmdlq list`: a page of a moderation queue's records, filtered.
#include <unistd.h>

#include <iostream>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/moderation_query.hpp>

#include "cli.hpp"
#include "line_writer.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "query_flags.hpp"
#include "record_view.hpp"
#include "store_spec.hpp"
#include "unreadable.hpp"

namespace llmdlq::cli {
namespace {

constexpr option paging[] = {
    {"--limit", option_kind::value, "N", "records per page (default 50)"},
    {"--after", option_kind::value, "CURSOR", "the next page: the cursor the previous page printed"},
    {"--json", option_kind::flag, "", "one JSON object per record; a last line {\"next\": CURSOR} when more match"},
};
constexpr operand operands[] = {{"STORE", "give the DLQ to list"}};

const command_syntax syntax{
    .command = "list",
    .operands = operands,
    .groups = {group("filters (a repeated filter matches any of its values)", query_filter_options),
               group("page", paging)},
    .about = "  Lists a page of the dead letters that match, oldest first: id, age, status, category,\n"
             "  triage class, failure code and who claimed it.\n",
    .stores = store_forms(),
    .closing = "The table form prints the next page's cursor to stderr. A record that does not read back\n"
               "(an unknown status, a time or an envelope that is not one) is listed as unreadable, with why,\n"
               "and named on stderr. Exit 0, 2 for usage errors and a SQLite DLQ that is missing, 3 when the\n"
               "store fails, 6 when some records on the page do not read back (the others are listed).\n",
};

// The query the options ask for; why not, as a usage error's message.
expected<moderation_query, std::string> read_query(const parsed_arguments& a, timestamp now) {
  moderation_query query;
  query.limit = 50;
  if (auto e = read_query_filters(a, now, query)) return unexpected(std::move(*e));
  if (auto v = a.value("--limit")) {
    const auto limit = parse_count(*v, 1, 100000);
    if (!limit) return unexpected(fmt::format("--limit wants a count from 1 to 100000, not '{}'", *v));
    query.limit = static_cast<std::size_t>(*limit);
  }
  if (auto v = a.value("--after")) {
    query.after = parse_moderation_cursor(*v);
    if (!query.after) return unexpected(fmt::format("'{}' is not a cursor that list printed", *v));
  }
  return query;
}

}  // namespace

int list_command(arguments args) {
  const timestamp now = system_now();
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const bool json = parsed->has("--json");
  auto query = read_query(*parsed, now);
  if (!query) return usage_error(syntax, query.error());
  const std::string_view target = parsed->operand(0);
  auto spec = parse_store_spec(target);
  if (!spec) return usage_error(syntax, spec.error());
  auto store = open_store(*spec, /*read_only=*/true);
  if (!store) {
    complain("list", store.error().message);
    return store.error().usage ? exit_usage : exit_sink;
  }
  auto page = (*store)->query(*query);
  if (!page) {
    complain("list", page.error().message);
    return exit_sink;
  }
  const std::string next = page->next ? to_string(*page->next) : std::string();
  std::vector<unreadable_record> unreadable;
  for (const auto& r : page->records) {
    if (!r.readable()) unreadable.push_back({r.dlq_id, r.defect_reason});
  }
  if (json) {
    for (const auto& r : page->records) std::cout << json_text(record_summary_json(r, now)) << '\n';
    if (page->more) std::cout << json_text(boost::json::object{{"next", next}}) << '\n';
    report_unreadable("list", unreadable, unreadable.size());
    return exit_for_unreadable(unreadable.size());
  }
  const bool colour = colour_for(STDOUT_FILENO);
  const std::string header = fmt::format("{:<36} {:>5}  {:<10} {:<14} {:<22} {:<32} {}", "ID", "AGE", "STATUS",
                                         "CATEGORY", "TRIAGE", "CODE", "CLAIMED BY");
  std::cout << (colour ? fmt::format("\x1b[1m{}\x1b[0m", header) : header) << '\n';
  for (const auto& r : page->records) {
    const auto created = parse_rfc3339(r.created_at);
    const std::string age = created ? format_age(now - *created) : "?";
    if (!r.readable()) {
      std::cout << fmt::format("{:<36} {:>5}  unreadable: {}\n", printable_id(r.dlq_id), age, r.defect_reason);
      continue;
    }
    std::cout << fmt::format("{:<36} {:>5}  {:<10} {:<14} {:<22} {:<32} {}\n", r.dlq_id, age, to_string(r.status),
                             r.category, r.triage, r.failure_code, r.claimed_by.empty() ? "-" : r.claimed_by);
  }
  report_unreadable("list", unreadable, unreadable.size());
  std::cerr << fmt::format("{} record{}", page->records.size(), page->records.size() == 1 ? "" : "s");
  if (!unreadable.empty()) std::cerr << fmt::format(", {} of them unreadable", unreadable.size());
  if (page->more) std::cerr << fmt::format("; next page: --after {}", next);
  std::cerr << '\n';
  return exit_for_unreadable(unreadable.size());
}

}  // namespace llmdlq::cli
