// SPDX-License-Identifier: MIT
// `llmdlq top`: a moderation queue's live counts, redrawn in place.
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <csignal>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

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
    {"--interval", option_kind::value, "SECONDS", "between blocks (default 2; 0.1 to 86400)"},
    {"--once", option_kind::flag, "", "print one block and exit (for scripts)"},
    {"--json", option_kind::flag, "", "each block as one JSON object"},
};
constexpr operand operands[] = {{"STORE", "give the DLQ to watch"}};

const command_syntax syntax{
    .command = "top",
    .operands = operands,
    .groups = {group("", options)},
    .about = "  Shows a DLQ's counts by status, category and triage class, the pending count and the age\n"
             "  of the oldest pending dead letter, every --interval seconds (default 2) until interrupted:\n"
             "  redrawn in place on a terminal, one block after another otherwise.\n",
    .stores = store_forms(),
    .closing = "Each block counts the records that do not read back (recounted at most every 30 seconds, as\n"
               "that reads every record; llmdlq stats names them). Exit 0, 2 for usage errors, 3 when the store\n"
               "fails, 6 when the last count found records that do not read back.\n",
};

volatile std::sig_atomic_t interrupted = 0;
extern "C" void on_interrupt(int) { interrupted = 1; }

std::string block(const std::string& name, const dlq_statistics& stats, std::uint64_t unreadable, timestamp now,
                  bool colour) {
  std::ostringstream out;
  const auto bold = [&](std::string_view text) {
    return colour ? fmt::format("\x1b[1m{}\x1b[0m", text) : std::string(text);
  };
  const auto pending = stats.by_status.contains("pending") ? stats.by_status.at("pending") : 0;
  out << bold(fmt::format("{}  at {}", name, format_rfc3339(now))) << '\n';
  out << fmt::format("{}, {} pending", detail::counted(stats.total, "dead letter"), pending);
  if (stats.oldest_pending_created_at) {
    out << fmt::format(", oldest pending {} old", format_age(now - *stats.oldest_pending_created_at));
  }
  if (unreadable > 0) out << fmt::format(", {} unreadable (llmdlq stats names them)", unreadable);
  out << '\n';
  for (const auto& [title, counts] : {std::pair{"status", &stats.by_status}, std::pair{"category", &stats.by_category},
                                      std::pair{"triage", &stats.by_triage}}) {
    out << bold(fmt::format("by {}", title)) << '\n';
    for (const auto& [key, count] : *counts) out << fmt::format("  {:<28} {:>8}\n", key, count);
  }
  return out.str();
}

boost::json::object block_json(const dlq_statistics& stats, std::uint64_t unreadable, timestamp now) {
  const auto group = [](const std::map<std::string, std::uint64_t>& counts) {
    boost::json::object o;
    for (const auto& [key, count] : counts) o.emplace(key, count);
    return o;
  };
  boost::json::object o{{"at", format_rfc3339(now)},
                        {"total", stats.total},
                        {"pending", stats.by_status.contains("pending") ? stats.by_status.at("pending") : 0},
                        {"status", group(stats.by_status)},
                        {"category", group(stats.by_category)},
                        {"triage", group(stats.by_triage)},
                        {"unreadable", unreadable}};
  if (stats.oldest_pending_created_at) {
    o.emplace("oldest_pending_created_at", format_rfc3339(*stats.oldest_pending_created_at));
    o.emplace("oldest_pending_age_seconds",
              std::chrono::duration_cast<std::chrono::seconds>(now - *stats.oldest_pending_created_at).count());
  }
  return o;
}

}  // namespace

int top_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const bool once = parsed->has("--once");
  const bool json = parsed->has("--json");
  std::chrono::milliseconds interval(2000);
  if (const auto value = parsed->value("--interval")) {
    double seconds = 0;
    const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), seconds);
    if (ec != std::errc() || end != value->data() + value->size() || !(seconds >= 0.1 && seconds <= 86400)) {
      return usage_error(syntax, fmt::format("--interval wants seconds from 0.1 to 86400, not '{}'", *value));
    }
    interval = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  }
  auto spec = parse_store_spec(parsed->operand(0));
  if (!spec) return usage_error(syntax, spec.error());
  auto store = open_store(*spec, /*read_only=*/true);
  if (!store) {
    complain("top", store.error().message);
    return store.error().usage ? exit_usage : exit_sink;
  }
  const bool terminal = ::isatty(STDOUT_FILENO) == 1 && !json;
  const bool colour = terminal && colour_for(STDOUT_FILENO);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  const std::string name = display_name(*spec);
  // Finding the records that do not read back reads them all: once a block, at most every half minute.
  std::uint64_t unreadable = 0;
  std::optional<std::chrono::steady_clock::time_point> census_at;
  for (bool first = true; !interrupted; first = false) {
    auto stats = (*store)->statistics();
    if (!stats) {
      complain("top", stats.error().message);
      return exit_sink;
    }
    if (!census_at || std::chrono::steady_clock::now() - *census_at >= std::chrono::seconds(30)) {
      auto census = (*store)->unreadable_records();
      if (!census) {
        complain("top", census.error().message);
        return exit_sink;
      }
      unreadable = census->count;
      census_at = std::chrono::steady_clock::now();
    }
    const timestamp now = system_now();
    if (json) {
      std::cout << json_text(block_json(*stats, unreadable, now)) << '\n';
    } else if (terminal) {
      std::cout << "\x1b[H\x1b[2J" << block(name, *stats, unreadable, now, colour) << "(interrupt to stop)\n";
    } else {
      std::cout << (first ? "" : "\n") << block(name, *stats, unreadable, now, colour);
    }
    std::cout.flush();
    if (once) break;
    // Sleeps in short steps, so an interrupt ends it promptly.
    for (auto slept = std::chrono::milliseconds(0); slept < interval && !interrupted;
         slept += std::chrono::milliseconds(100)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return exit_for_unreadable(unreadable);
}

}  // namespace llmdlq::cli
