// SPDX-License-Identifier: MIT
// `llmdlq process`: judges LLM responses read as JSON Lines, dead-letters the
// failures into a sink, and prints one verdict line per input line.
#include <algorithm>
#include <charconv>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <boost/json.hpp>
#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/pipeline.hpp>
#include <llmdlq/sqlite_sink.hpp>

#include "cli.hpp"
#include "commands.hpp"

namespace llmdlq::cli {
namespace {

constexpr std::string_view usage =
    "usage: llmdlq process --schema FILE [--repair local|off] [--min-confidence X] [--now RFC3339]\n"
    "                      [--sink none|jsonl:PATH|sqlite:PATH] [--code-prefix PREFIX] [--format-assertion]\n"
    "                      [--coerce]\n"
    "  Reads JSON Lines on standard input, one LLM response per line:\n"
    "    {\"id\": ..., \"response\": \"<raw LLM text>\", \"confidence\": 0.9, \"finish_reason\": \"stop\",\n"
    "     \"idempotency_key\": \"...\", \"input\": \"<what the model saw>\"}   (all but response optional)\n"
    "  and prints one line per input, in order:\n"
    "    {\"id\": ..., \"status\": \"accepted\", \"value\": <JSON>, \"repairs\": [...]}\n"
    "    {\"id\": ..., \"status\": \"dead_lettered\", \"category\": ..., \"triage\": ..., \"dlq_id\": ..., \"errors\": [...]}\n"
    "  A line that is not such an object gets {\"line\": N, \"status\": \"invalid_input\", ...}; when the sink\n"
    "  fails, a failed line gets \"status\": \"retry\".\n"
    "  Exit 0 when every line was accepted or durably dead-lettered, 3 when the sink failed,\n"
    "  2 for usage errors or input lines that could not be read.\n";

// The DLQ named by --sink.
expected<std::unique_ptr<sink>, std::string> open_sink(std::string_view spec) {
  if (spec == "none") return std::unique_ptr<sink>();
  const auto colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const std::string path = colon == std::string_view::npos ? std::string() : std::string(spec.substr(colon + 1));
  if (path.empty()) return unexpected("--sink wants none, jsonl:PATH or sqlite:PATH");
  if (kind == "jsonl") {
    auto s = jsonl_file_sink::open(path);
    if (!s) return unexpected(s.error().message);
    return std::unique_ptr<sink>(std::make_unique<jsonl_file_sink>(std::move(*s)));
  }
  if (kind == "sqlite") {
    auto s = sqlite_sink::open(path);
    if (!s) return unexpected(s.error().message);
    return std::unique_ptr<sink>(std::make_unique<sqlite_sink>(std::move(*s)));
  }
  return unexpected("unknown sink '" + std::string(kind) + "': use none, jsonl:PATH or sqlite:PATH");
}

// A sink that stores nothing, for --sink none: every envelope is "stored".
class no_sink final : public sink {
 public:
  expected<receipt, sink_error> publish(const envelope& e) override { return receipt{e.dlq_id, false, "none"}; }
};

boost::json::array errors_json(const std::vector<validation_error>& errors) {
  boost::json::array list;
  for (const auto& e : errors) list.push_back(to_json(e));
  return list;
}

}  // namespace

int process_command(arguments args) {
  std::optional<std::string> schema_path;
  std::string sink_spec = "none";
  process_options options;
  compile_options compile;
  auto invalid = [](std::string_view flag, std::string_view wanted, std::string_view got) {
    complain("process", std::string(flag) + " wants " + std::string(wanted) + ", not '" + std::string(got) + "'");
    return exit_usage;
  };
  while (!args.done()) {
    const std::string_view arg = args.take();
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return exit_ok;
    }
    if (arg == "--format-assertion") {
      compile.format_assertion = true;
      continue;
    }
    if (arg == "--coerce") {  // schema-guided coercion, reported as repairs of tier "coercion"
      options.coerce = true;
      continue;
    }
    static constexpr std::string_view valued[] = {"--schema", "--repair", "--min-confidence", "--now", "--sink",
                                                  "--code-prefix"};
    if (std::find(std::begin(valued), std::end(valued), arg) == std::end(valued)) {
      complain("process", (arg.starts_with("-") ? "unknown option " : "unexpected argument ") + std::string(arg));
      std::cerr << usage;
      return exit_usage;
    }
    const auto value = args.value_of(arg);
    if (!value) return exit_usage;
    if (arg == "--schema") {
      schema_path = std::string(*value);
    } else if (arg == "--repair") {
      if (*value != "local" && *value != "off") return invalid(arg, "local or off", *value);
      options.repair = *value == "local" ? repair_mode::local : repair_mode::off;
    } else if (arg == "--min-confidence") {
      double threshold = 0;
      const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), threshold);
      if (ec != std::errc() || end != value->data() + value->size()) return invalid(arg, "a number", *value);
      options.min_confidence = threshold;
    } else if (arg == "--now") {
      const auto now = parse_rfc3339(*value);
      if (!now) return invalid(arg, "an RFC 3339 date-time", *value);
      options.clock = [t = *now] { return t; };
    } else if (arg == "--sink") {
      sink_spec = std::string(*value);
    } else {
      options.failure_code_prefix = std::string(*value);
    }
  }
  if (!schema_path) {
    complain("process", "--schema is required");
    std::cerr << usage;
    return exit_usage;
  }
  std::string read_error;
  const auto schema_text = read_file(*schema_path, read_error);
  if (!schema_text) {
    complain("process", "cannot read schema " + *schema_path + ": " + read_error);
    return exit_usage;
  }
  const auto schema = llmdlq::schema::compile(*schema_text, compile);
  if (!schema) {
    complain("process", "invalid schema " + *schema_path +
                            (schema.error().location.empty() ? "" : " at " + schema.error().location) + ": " +
                            schema.error().message);
    return exit_usage;
  }
  auto opened = open_sink(sink_spec);
  if (!opened) {
    complain("process", opened.error());
    return exit_usage;
  }
  no_sink nowhere;
  sink& dead_letters = *opened ? **opened : static_cast<sink&>(nowhere);
  const pipeline worker{*schema, dead_letters, options};

  bool sink_failed = false;
  bool bad_input = false;
  std::size_t line_number = 0;
  for (std::string line; std::getline(std::cin, line);) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto input = parse_value(line);
    const auto* object = input ? input->if_object() : nullptr;
    const auto* response = object ? object->if_contains("response") : nullptr;
    if (!response || !response->is_string()) {
      bad_input = true;
      std::cout << boost::json::serialize(boost::json::object{
                       {"line", line_number},
                       {"status", "invalid_input"},
                       {"error", !input ? "not JSON: " + input.error().message
                                        : "expected an object with a string \"response\""}})
                << '\n';
      continue;
    }
    const boost::json::value id = object->contains("id") ? object->at("id") : boost::json::value(line_number);
    request_context context;
    auto text = [&](std::string_view key) -> std::string {
      const auto* v = object->if_contains(key);
      return v && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    const std::string finish_reason = text("finish_reason");
    const std::string original_input = text("input");
    context.idempotency_key = text("idempotency_key");
    if (context.idempotency_key.empty()) context.idempotency_key = id.is_string() ? std::string(id.get_string()) : boost::json::serialize(id);
    context.record_id = context.idempotency_key;
    context.finish_reason = finish_reason;
    context.original_input = original_input;
    if (const auto* c = object->if_contains("confidence"); c && c->is_number()) context.confidence = c->to_number<double>();
    const std::string raw(response->get_string());

    const disposition d = worker.handle(raw, context);
    boost::json::object verdict{{"id", id}};
    if (d.accepted) {
      boost::json::array repairs;
      for (const auto& r : d.accepted->repairs) repairs.push_back({{"code", r.code}, {"tier", to_string(r.tier)}});
      verdict.emplace("status", "accepted");
      verdict.emplace("value", d.accepted->value());
      verdict.emplace("repairs", std::move(repairs));
    } else {
      const envelope& e = *d.dead_letter;
      verdict.emplace("status", d.should_commit() ? "dead_lettered" : "retry");
      verdict.emplace("category", to_string(e.failure.category));
      verdict.emplace("triage", to_string(e.triage.kind));
      verdict.emplace("dlq_id", e.dlq_id);
      verdict.emplace("code", e.failure.code);
      verdict.emplace("message", e.failure.message);
      verdict.emplace("errors", errors_json(e.failure.errors));
      if (d.error) {
        sink_failed = true;
        verdict.emplace("error", d.error->message);
      }
    }
    std::cout << boost::json::serialize(verdict) << '\n';
  }
  if (sink_failed) return exit_sink;
  return bad_input ? exit_usage : exit_ok;
}

}  // namespace llmdlq::cli
