// SPDX-License-Identifier: MIT
// `llmdlq purge`: removes a DLQ's expired dead letters and reports what went.
#include <charconv>
#include <iostream>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/purge.hpp>
#include <llmdlq/sqlite/store.hpp>
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
#  include <llmdlq/postgres/store.hpp>
#endif
#ifdef LLMDLQ_TOOL_WITH_REDIS
#  include <llmdlq/redis/stream_sink.hpp>
#endif

#include "cli.hpp"
#include "commands.hpp"
#include "store_spec.hpp"

namespace llmdlq::cli {
namespace {

constexpr std::string_view usage =
    "usage: llmdlq purge STORE [--dry-run] [--now RFC3339] [--operator NAME] [--json]\n"
    "  Removes the dead letters whose expires_at is at or before now (letters without one stay)\n"
    "  and writes an audit record: who, when, how many, the range of their expiry times.\n"
    "  STORE: sqlite:PATH[#TABLE] | jsonl:PATH | postgres:CONNINFO[#[SCHEMA.]TABLE] | redis:HOST:PORT/STREAM\n"
    "  --dry-run        count what would go; change nothing, audit nothing\n"
    "  --now RFC3339    the purge's time (default: the system clock)\n"
    "  --operator NAME  who purges, for the audit (default: the login name)\n"
    "  --json           print the report as JSON\n"
    "  A JSON Lines file that a sink holds open is not purged (exit 3): stop the writer first.\n"
    "  A real purge of a PostgreSQL DLQ migrates it first (it makes the audit table there).\n"
    "  Exit 2 for usage errors and a SQLite or JSON Lines file that is not there (it is never\n"
    "  created), 3 when the store fails.\n";

// Runs the store's purge; `redis:HOST:PORT/STREAM` and the rest as usage says.
expected<purge_report, std::pair<int, std::string>> purge_store(std::string_view spec, const purge_request& request) {
  using failure = std::pair<int, std::string>;
  const auto store_failed = [](sink_error e) { return unexpected(failure{exit_sink, std::move(e.message)}); };
  const auto missing = [](std::string_view what) { return unexpected(failure{exit_usage, "no DLQ at " + std::string(what)}); };
  if (spec.starts_with("sqlite:") || spec.starts_with("postgres:")) {
    auto parsed = parse_store_spec(spec);
    if (!parsed) return unexpected(failure{exit_usage, std::move(parsed.error())});
    // A file that is not there is never created.
    if (parsed->kind == store_spec::store_kind::sqlite && !std::filesystem::exists(parsed->location)) {
      return missing(parsed->location);
    }
    // A dry run writes nothing; a real PostgreSQL purge needs the audit table, which migrating makes.
    auto store = open_store(*parsed, /*read_only=*/request.dry_run);
    if (!store) return unexpected(failure{store.error().usage ? exit_usage : exit_sink, std::move(store.error().message)});
    expected<purge_report, sink_error> report = unexpected(sink_error{sink_errc::rejected, "no purge for this store"});
    if (auto* sqlite = dynamic_cast<sqlite_store*>(store->get())) report = sqlite->purge(request);
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
    if (auto* postgres = dynamic_cast<postgres_store*>(store->get())) report = postgres->purge(request);
#endif
    if (!report) return store_failed(std::move(report.error()));
    return *report;
  }
  if (spec.starts_with("jsonl:") && spec.size() > 6) {
    const std::filesystem::path path(spec.substr(6));
    if (!std::filesystem::exists(path)) return missing(path.string());
    auto report = purge_jsonl_file(path, request);
    if (!report) return store_failed(std::move(report.error()));
    return *report;
  }
#ifdef LLMDLQ_TOOL_WITH_REDIS
  if (spec.starts_with("redis:")) {
    const std::string_view rest = spec.substr(6);
    const auto colon = rest.find(':');
    const auto slash = rest.find('/', colon == std::string_view::npos ? 0 : colon);
    redis_stream_sink_options options;
    int port = 0;
    const auto port_text = colon == std::string_view::npos || slash == std::string_view::npos
                               ? std::string_view()
                               : rest.substr(colon + 1, slash - colon - 1);
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (colon == 0 || port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
        slash + 1 >= rest.size()) {
      return unexpected(failure{exit_usage, fmt::format("'{}' is not redis:HOST:PORT/STREAM", spec)});
    }
    options.connection.host = std::string(rest.substr(0, colon));
    options.connection.port = port;
    options.stream = std::string(rest.substr(slash + 1));
    auto sink = redis_stream_sink::open(std::move(options));
    if (!sink) return store_failed(std::move(sink.error()));
    auto report = sink->purge(request);
    if (!report) return store_failed(std::move(report.error()));
    return *report;
  }
#endif
  return unexpected(failure{exit_usage, fmt::format("no store '{}': give sqlite:PATH, jsonl:PATH, "
                                                    "postgres:CONNINFO or redis:HOST:PORT/STREAM",
                                                    spec)});
}

}  // namespace

int purge_command(arguments args) {
  bool json = false;
  std::string_view store;
  purge_request request{.now = system_now(), .operator_name = {}, .dry_run = false};
  while (!args.done()) {
    const std::string_view arg = args.take();
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return exit_ok;
    }
    if (arg == "--json") {
      json = true;
    } else if (arg == "--dry-run") {
      request.dry_run = true;
    } else if (arg == "--now") {
      const auto value = args.value_of(arg);
      if (!value) return exit_usage;
      const auto now = parse_rfc3339(*value);
      if (!now) return usage_error("purge", usage, fmt::format("--now wants an RFC 3339 time, not '{}'", *value));
      request.now = *now;
    } else if (arg == "--operator") {
      const auto value = args.value_of(arg);
      if (!value) return exit_usage;
      if (value->empty()) return usage_error("purge", usage, "--operator wants a name");
      request.operator_name = std::string(*value);
    } else if (store.empty() && !arg.starts_with("-")) {
      store = arg;
    } else {
      return usage_error("purge", usage, "unexpected argument " + std::string(arg));
    }
  }
  if (store.empty()) return usage_error("purge", usage, "give the DLQ to purge");
  if (request.operator_name.empty()) request.operator_name = login_name();
  auto report = purge_store(store, request);
  if (!report) {
    complain("purge", report.error().second);
    return report.error().first;
  }
  if (json) {
    auto out = to_json(*report);
    out["store"] = store;
    std::cout << boost::json::serialize(out) << '\n';
    return exit_ok;
  }
  const std::string range = report->count == 0 ? std::string()
                                                : fmt::format(", expired {} .. {}", format_rfc3339(*report->oldest_expires_at),
                                                              format_rfc3339(*report->newest_expires_at));
  std::cout << fmt::format("{} {} dead letter{} from {}{} (operator {}, at {})\n",
                           report->dry_run ? "would purge" : "purged", report->count, report->count == 1 ? "" : "s",
                           store, range, report->operator_name, format_rfc3339(report->at));
  return exit_ok;
}

}  // namespace llmdlq::cli
