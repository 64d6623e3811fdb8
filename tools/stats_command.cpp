// SPDX-License-Identifier: MIT
// `llmdlq stats`: counts of a DLQ's records by category, triage and status.
#include <iostream>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/sqlite/store.hpp>

#include "cli.hpp"
#include "commands.hpp"

namespace llmdlq::cli {
namespace {

constexpr std::string_view usage =
    "usage: llmdlq stats [--json] sqlite:PATH\n"
    "  Counts the dead letters in a SQLite DLQ by category, triage class, status and failure code.\n"
    "  Reads the DLQ without changing it (also a file it may not write). Exit 2 for usage errors and\n"
    "  a DLQ that is missing or cannot be opened as one, 3 when reading it fails.\n";

}  // namespace

int stats_command(arguments args) {
  bool json = false;
  std::string_view target;
  while (!args.done()) {
    const std::string_view arg = args.take();
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return exit_ok;
    }
    if (arg == "--json") {
      json = true;
    } else if (target.empty() && !arg.starts_with("-")) {
      target = arg;
    } else {
      complain("stats", "unexpected argument " + std::string(arg));
      std::cerr << usage;
      return exit_usage;
    }
  }
  if (!target.starts_with("sqlite:") || target.size() == 7) {
    complain("stats", "give the DLQ as sqlite:PATH");
    std::cerr << usage;
    return exit_usage;
  }
  const std::filesystem::path path(target.substr(7));
  if (!std::filesystem::exists(path)) {
    complain("stats", "no DLQ at " + path.string());
    return exit_usage;
  }
  auto dlq = sqlite_store::open(path, {.read_only = true});
  if (!dlq) {
    complain("stats", dlq.error().message);
    return exit_usage;
  }
  auto stats = dlq->statistics();
  if (!stats) {
    complain("stats", stats.error().message);
    return exit_sink;
  }
  const std::pair<std::string_view, const std::map<std::string, std::uint64_t>*> groups[] = {
      {"category", &stats->by_category}, {"triage", &stats->by_triage}, {"status", &stats->by_status},
      {"failure_code", &stats->by_code}};
  if (json) {
    boost::json::object out{{"total", stats->total}};
    for (const auto& [name, counts] : groups) {
      boost::json::object group;
      for (const auto& [key, count] : *counts) group.emplace(key, count);
      out.emplace(name, std::move(group));
    }
    std::cout << boost::json::serialize(out) << '\n';
    return exit_ok;
  }
  std::cout << fmt::format("{}: {} dead letters\n", path.string(), stats->total);
  for (const auto& [name, counts] : groups) {
    std::cout << fmt::format("\nby {}:\n", name);
    for (const auto& [key, count] : *counts) std::cout << fmt::format("  {:<28} {:>8}\n", key, count);
  }
  return exit_ok;
}

}  // namespace llmdlq::cli
