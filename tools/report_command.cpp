// SPDX-License-Identifier: MIT
// `llmdlq report`: a DLQ's counts and charts as one self-contained HTML file.
#include <charconv>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <llmdlq/detail/counted.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "store_spec.hpp"
#include "unreadable.hpp"
#include "console/assets.hpp"
#include "console/charts.hpp"
#include "console/html.hpp"
#include "console/store_access.hpp"

namespace llmdlq::cli {
namespace {

constexpr option options[] = {
    {"--html", option_kind::value, "FILE", "where the page goes; required"},
    {"--since", option_kind::value, "RFC3339|Nd", "where the charts start (default 7d: the last 7 days)"},
};
constexpr operand operands[] = {{"STORE", "give the DLQ to report on"}};

const command_syntax syntax{
    .command = "report",
    .operands = operands,
    .groups = {group("", options)},
    .about = "  Writes one HTML page for a review: the dead letters per day by category and the DLQ rate as\n"
             "  charts, and the counts by status, category, triage class and failure code. The page needs\n"
             "  nothing else: no script, no fetch. --since bounds the charts; the counts are of the whole\n"
             "  DLQ. Reads the DLQ without changing it.\n",
    .stores = store_forms(writable_moderation_stores),
    .closing = "The page names the records that do not read back. Exit 0, 2 for usage errors and a DLQ that\n"
               "cannot be opened, 3 when reading it or writing FILE fails, 6 when some records do not read back\n"
               "(the page is written; stderr names them too).\n",
};

std::optional<timestamp> parse_since(std::string_view text, timestamp now) {
  if (text.ends_with('d')) {
    int days = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, days);
    if (ec != std::errc() || end != text.data() + text.size() - 1 || days < 1 || days > 36600) return std::nullopt;
    return std::chrono::floor<std::chrono::days>(now) - std::chrono::days(days - 1);
  }
  return parse_rfc3339(text);
}

}  // namespace

int report_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const std::string_view target = parsed->operand(0);
  const auto html = parsed->value("--html");
  const auto now = system_now();
  const auto since = parse_since(parsed->value("--since").value_or("7d"), now);
  if (!html || !since) {
    return usage_error(syntax, !html ? "--html FILE is required" : "--since wants RFC 3339 or a number of days (7d)");
  }
  const std::string html_path(*html);
  auto dlq = dlq_reader::open(target, true);
  if (!dlq) {
    complain("report", dlq.error());
    return exit_usage;
  }
  const auto overview = dlq->overview(*since, now);
  if (!overview) {
    complain("report", overview.error().message);
    return exit_sink;
  }
  const std::string title = fmt::format("DLQ report {} – {}", format_rfc3339(*since).substr(0, 10),
                                        format_rfc3339(now).substr(0, 10));
  std::string page = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title><style>{1}</style></head>"
      "<body><header><strong>llmdlq</strong> {2}</header><main><h1>{0}</h1><p>Generated {3} from {2}.</p>",
      html_escape(title), console_stylesheet, html_escape(display_name(*parse_store_spec(target))), html_escape(format_rfc3339(now)));
  page += "<h2>Dead letters per day by category</h2>" + timeline_chart_svg(overview->timeline);
  page += "<h2>DLQ rate</h2>" + dlq_rate_chart_svg(overview->timeline);
  page += "<h2>Counts (all time)</h2>" + counts_tables_html(*overview, now);
  page += "</main></body></html>\n";
  std::ofstream out(html_path, std::ios::binary | std::ios::trunc);
  out << page;
  out.close();
  if (!out) {
    complain("report", "cannot write " + html_path);
    return exit_sink;
  }
  const auto& unreadable = overview->unreadable;
  std::cout << fmt::format("wrote {} ({} in all{})\n", html_path,
                           detail::counted(overview->statistics.total, "dead letter"),
                           unreadable.count == 0 ? "" : fmt::format(", {} unreadable", unreadable.count));
  report_unreadable("report", unreadable.records, unreadable.count);
  return exit_for_unreadable(unreadable.count);
}

}  // namespace llmdlq::cli
