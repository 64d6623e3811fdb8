// SPDX-License-Identifier: MIT
// `llmdlq process`: judges LLM responses read as JSON Lines, dead-letters the
// failures into a sink, and prints one verdict line per input line.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/detail/counted.hpp>
#include <llmdlq/dlq_id.hpp>
#include <llmdlq/judged_stream.hpp>
#include <llmdlq/judged_tool_stream.hpp>
#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/pipeline.hpp>
#include <llmdlq/provider_schema.hpp>
#include <llmdlq/sqlite/store.hpp>
#include <llmdlq/tool_call.hpp>

#include "cli.hpp"
#include "store_spec.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "line_reader.hpp"
#include "judging_flags.hpp"
#include "line_writer.hpp"
#include "redaction_flags.hpp"
#include "schema_flags.hpp"

namespace llmdlq::cli {
namespace {

constexpr std::size_t default_max_line_bytes = 16u << 20;
// What a line over --max-line-bytes keeps of itself as its dead letter's raw response.
constexpr std::size_t oversized_prefix_bytes = 64u << 10;

constexpr option run_options[] = {
    {"--schema", option_kind::value, "FILE", "the JSON Schema the responses must pass; required without --tools"},
    {"--tools", option_kind::value, "FILE",
     "judge tool calls instead: FILE holds the tool definitions (OpenAI's, Anthropic's,\n"
     "Gemini's or Ollama's `tools`, or an object of name to schema), and each input line\n"
     "is a whole reply body of --reply's API (or, with --stream, each CAPTURE a streamed one)"},
    {"--reply", option_kind::value, "openai|anthropic|ollama",
     "the API whose reply bodies --tools reads (default openai)"},
    {"--provider", option_kind::value, "NAME",
     "the answers were asked for with the schema (or tools) lowered for this provider\n"
     "(see `llmdlq provider-schema`): a null the lowering forced reads as absent"},
    {"--now", option_kind::value, "RFC3339", "the time the envelopes are made at (default: the system clock)"},
    {"--sink", option_kind::value, "none|jsonl:PATH|sqlite:PATH|postgres:CONNINFO",
     "where dead letters go (default none)"},
    {"--fallback", option_kind::value, "jsonl:PATH|sqlite:PATH",
     "where a dead letter the DLQ refuses for good (too large, read-only) goes instead;\n"
     "its verdict then says \"in_fallback\": true. Without one such a line is a retry."},
    {"--max-line-bytes", option_kind::value, "N", "the longest input line (default 16M; suffix K, M or G)"},
    {"--stream", option_kind::value, "sse|ndjson|anthropic",
     "judge recorded streams instead: each CAPTURE (or standard input) is one streamed\n"
     "chat completion, OpenAI's server-sent events (sse), Ollama's /api/chat lines\n"
     "(ndjson) or Anthropic's events, read no further than where its answer died"},
};
constexpr option version_options[] = {
    {"--schema-version", option_kind::value, "V", "today's schema version, recorded in every envelope"},
    {"--prompt-version", option_kind::value, "V", "today's prompt version, recorded in every envelope"},
    {"--model", option_kind::value, "NAME",
     "the model that answered, recorded in every envelope: `llmdlq replay` asks\n"
     "that model again, and judges a letter written under other versions again first"},
};

constexpr operand capture_operands[] = {{"CAPTURE", "", true}};

const command_syntax syntax{
    .command = "process",
    .operands = capture_operands,
    .groups = {group("", run_options), group("judging", judging_options_table),
               group("schema (as for `llmdlq validate`)", schema_options), group("versions", version_options),
               group("redaction (always on: e-mail, phones, IBANs, cards, IPs, keys and tokens, PEM keys,\n"
                     "passwords in URLs, and the schema's x-llmdlq-pii values, before a letter is stored or printed)",
                     redaction_options_table)},
    .about =
        "  Reads JSON Lines on standard input, one LLM response per line:\n"
        "    {\"id\": ..., \"response\": \"<raw LLM text>\", \"confidence\": 0.9, \"finish_reason\": \"stop\",\n"
        "     \"idempotency_key\": \"...\", \"input\": \"<what the model saw>\"}   (all but response optional)\n"
        "  The envelope's record_id is the id (a number as its JSON text). Without an idempotency_key the\n"
        "  library derives one from hashes of the response, the input and the schema: identical failures\n"
        "  share one dead letter, and re-running a batch stores nothing twice.\n"
        "  Prints one line per input line, in order (\"line\" is its line number):\n"
        "    {\"line\": N, \"id\": ..., \"status\": \"accepted\", \"value\": <JSON>, \"repairs\": [...]}\n"
        "    {\"line\": N, \"id\": ..., \"status\": \"dead_lettered\", \"stored\": true, \"duplicate\": false,\n"
        "     \"dlq_id\": ..., \"idempotency_key_derived\": true, \"category\": ..., \"triage\": ..., \"errors\": [...]}\n"
        "  \"stored\" is false under --sink none; a duplicate names the dlq_id already stored. A line that is\n"
        "  not such an object gets \"status\": \"invalid_input\"; a line longer than --max-line-bytes\n"
        "  becomes a poison dead letter holding its length, SHA-256 and first bytes, its key derived\n"
        "  from that hash. When the sink fails, a line gets \"status\": \"retry\".\n"
        "  A summary of the run goes to stderr. A sqlite: or postgres: sink also records the run's traffic\n"
        "  (responses judged and dead-lettered, per minute) for the DLQ rate over time.\n"
        "  With --stream, each CAPTURE file (- or none: standard input) is one recorded stream, judged as it\n"
        "  is read and no further than the byte its answer died at; one line per capture:\n"
        "    {\"capture\": NAME, \"status\": ..., \"stream\": {\"read\": BYTES, \"size\": BYTES, \"events\": N,\n"
        "     \"answer_bytes\": N, \"ended\": false, \"dead_at\": OFFSET}, ...}   (size: of a regular file)\n"
        "  and a dead answer's envelope says where it was cut (failure.cancelled_at).\n"
        "  With --tools, each call of a reply (or a capture) gets a line of its own, with \"call\": its index,\n"
        "  \"tool\" and \"call_id\" beside the verdict; a call's dead letter names them in its tool_call, and\n"
        "  holds its arguments as the raw response. A call to a tool not in FILE is a schema failure.\n"
        "  A reply without a call gets \"status\": \"no_tool_call\", with its finish_reason and refusal.\n",
    .stores = "",
    .closing = "Exit 0 when every line was accepted or dead-lettered, 3 when the sink could not be opened or\n"
               "written (retry those lines) or standard output could not be written (stderr says after how many\n"
               "verdicts; it stops there), 2 for usage errors, invalid input lines or unreadable input.\n",
};

constexpr store_kinds sink_stores = {store_spec::store_kind::jsonl, store_spec::store_kind::sqlite,
                                     store_spec::store_kind::postgres};

// Nothing for none; an error message for a spec that names no sink.
expected<std::optional<store_spec>, std::string> parse_sink(std::string_view spec) {
  if (spec == "none") return std::optional<store_spec>();
  auto parsed = parse_store_spec(spec, sink_stores);
  if (!parsed)
    return unexpected("--sink wants none, " + store_forms(sink_stores) + ", not '" + std::string(spec) + "'");
  return std::optional(std::move(*parsed));
}

expected<std::unique_ptr<sink>, sink_error> open_sink(const store_spec& target) {
  if (target.kind == store_spec::store_kind::jsonl) {
    auto s = jsonl_file_sink::open(target.location);
    if (!s) return unexpected(std::move(s.error()));
    return std::unique_ptr<sink>(std::make_unique<jsonl_file_sink>(std::move(*s)));
  }
  auto store = open_store(target, /*read_only=*/false);
  if (!store) return unexpected(sink_error{sink_errc::unavailable, std::move(store.error().message)});
  return std::unique_ptr<sink>(std::move(*store));
}

// What happened to the lines, for the summary on stderr.
struct run_totals {
  std::uint64_t lines = 0;
  std::uint64_t accepted = 0;
  std::uint64_t dead_lettered = 0;
  std::uint64_t stored = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t derived_keys = 0;
  std::uint64_t invalid = 0;
  std::uint64_t retry = 0;

  // `unit`: what was judged, a line or a capture.
  [[nodiscard]] std::string summary(std::string_view unit = "line") const {
    return fmt::format("{}, {} accepted, {} dead-lettered, {} stored, {}, {}, {} invalid, {} to retry",
                       detail::counted(lines, unit), accepted, dead_lettered, stored,
                       detail::counted(duplicates, "duplicate"), detail::counted(derived_keys, "derived key"), invalid,
                       retry);
  }
};

// The run's pipeline: it stores the failures in the DLQ when there is one, else hands them back.
pipeline make_worker(const llmdlq::schema& schema, std::unique_ptr<sink> dead_letters, std::unique_ptr<sink> fallback,
                     const process_config& config) {
  if (!dead_letters) return pipeline(schema, config);
  std::optional<sink_handle> spool;
  if (fallback) spool.emplace(std::move(fallback));
  // A sqlite: or postgres: DLQ also gets the run's traffic, for the DLQ rate over time.
  return {schema, std::move(dead_letters), config, std::move(spool), traffic_recording::on};
}

// The traffic counted since the last flush goes to the store; a store that cannot record is reported, never fatal.
void flush_traffic(const pipeline& worker) {
  if (auto flushed = worker.flush_traffic(); !flushed) {
    complain("process", "cannot record the traffic: " + flushed.error().message);
  }
}

boost::json::array errors_json(const std::vector<validation_error>& errors) {
  boost::json::array list;
  for (const auto& e : errors) list.push_back(to_json(e));
  return list;
}

// The repairs of an accepted line, one entry per code in the order each first
// occurred, with how often it was applied: {"code", "tier", "count"}. The
// envelope of a failure keeps every action with its span.
boost::json::array repairs_json(const std::vector<repair_action>& actions) {
  boost::json::array grouped;
  for (const auto& r : actions) {
    const auto same = std::find_if(grouped.begin(), grouped.end(), [&](const boost::json::value& g) {
      return g.at("code").as_string() == r.code && g.at("tier").as_string() == to_string(r.tier);
    });
    if (same != grouped.end()) {
      ++same->as_object()["count"].as_int64();
    } else {
      grouped.push_back({{"code", r.code}, {"tier", to_string(r.tier)}, {"count", 1}});
    }
  }
  return grouped;
}

// Adds a failed line's dead letter to its verdict: where it is stored, or why not.
void describe_dead_letter(boost::json::object& verdict, const disposition& d, run_totals& totals) {
  const envelope& e = *d.dead_letter;
  const bool stored = d.stored.has_value();
  verdict.emplace("status", d.should_commit() ? "dead_lettered" : "retry");
  verdict.emplace("stored", stored);
  if (stored) verdict.emplace("duplicate", d.stored->duplicate);
  if (d.in_fallback) verdict.emplace("in_fallback", true);
  verdict.emplace("dlq_id", stored ? d.stored->dlq_id : e.dlq_id);
  verdict.emplace("idempotency_key_derived", e.idempotency_key_derived);
  verdict.emplace("category", to_string(e.failure.category));
  verdict.emplace("triage", to_string(e.triage.kind));
  verdict.emplace("code", e.failure.code);
  verdict.emplace("message", e.failure.message);
  verdict.emplace("errors", errors_json(e.failure.errors));
  if (d.error) {
    verdict.emplace("error", d.error->message);
    verdict.emplace("sink_error", to_string(d.error->code));
    // Retrying will not help: the DLQ refuses this envelope for good.
    if (d.rejected()) verdict.emplace("rejected", true);
  }
  if (d.fallback_error) verdict.emplace("fallback_error", d.fallback_error->message);
  if (d.should_commit()) {
    ++totals.dead_lettered;
  } else {
    ++totals.retry;
  }
  totals.stored += stored && !d.stored->duplicate;
  totals.duplicates += stored && d.stored->duplicate;
  totals.derived_keys += e.idempotency_key_derived;
}

// Adds what became of a judged response to its verdict: its value, or its dead letter.
void describe_disposition(boost::json::object& verdict, const disposition& d, run_totals& totals) {
  if (!d.accepted) return describe_dead_letter(verdict, d, totals);
  ++totals.accepted;
  verdict.emplace("status", "accepted");
  verdict.emplace("value", d.accepted->value());
  verdict.emplace("repairs", repairs_json(d.accepted->repairs));
}

// An identity field's text: a string as is, a number as its JSON text,
// nothing for null or absent; no value for any other JSON type.
std::optional<std::string> identity_text(const boost::json::value* v) {
  if (!v || v->is_null()) return std::string();
  if (v->is_string()) return std::string(v->get_string());
  if (v->is_number()) return boost::json::serialize(*v);
  return std::nullopt;
}

// A line's fields, checked.
struct response_line {
  boost::json::value input;
  std::string response;
  request_context context;
};

// What is wrong with an input line, and its id when that could be read.
struct invalid_line {
  std::string message;
  boost::json::value id;  // null when unreadable
};

// Reads one input line, or says what is wrong with it.
expected<response_line, invalid_line> read_response_line(std::string_view text, std::size_t max_bytes) {
  parse_options limits;
  limits.max_size = max_bytes;
  auto parsed = parse_value(text, limits);
  if (!parsed) return unexpected(invalid_line{"not JSON: " + parsed.error().message, nullptr});
  response_line line;
  line.input = std::move(*parsed);
  const auto* object = line.input.if_object();
  const auto* given_id = object ? object->if_contains("id") : nullptr;
  const auto refuse = [&](std::string message) {
    const bool readable = given_id && (given_id->is_string() || given_id->is_number());
    return unexpected(invalid_line{std::move(message), readable ? *given_id : boost::json::value()});
  };
  const auto* response = object ? object->if_contains("response") : nullptr;
  if (!response || !response->is_string()) {
    return refuse("expected an object with a string \"response\"");
  }
  line.response = response->get_string();
  for (auto [name, field] :
       {std::pair{"finish_reason", &line.context.finish_reason}, std::pair{"input", &line.context.original_input}}) {
    const auto* v = object->if_contains(name);
    if (v && !v->is_null() && !v->is_string()) return refuse(fmt::format("\"{}\" must be a string", name));
    if (v && v->is_string()) *field = v->get_string();
  }
  request_context& context = line.context;
  for (auto [name, field] :
       {std::pair{"id", &context.record_id}, std::pair{"idempotency_key", &context.idempotency_key}}) {
    auto value = identity_text(object->if_contains(name));
    if (!value) return refuse(fmt::format("\"{}\" must be a string or a number", name));
    *field = std::move(*value);
  }
  if (const auto* c = object->if_contains("confidence"); c && !c->is_null()) {
    // Anything but a number is passed on as no number at all, which fails the threshold.
    context.confidence = c->is_number() ? c->to_number<double>() : std::numeric_limits<double>::quiet_NaN();
  }
  return line;
}

// A line too long to read: a poison dead letter whose key is derived as the
// library derives one, with the whole line standing for the response.
envelope oversized_line_envelope(const input_line& line, std::size_t max_line_bytes, const llmdlq::schema& schema,
                                 const process_config& config) {
  request_context context;
  if (!line.sha256.empty()) {
    context.idempotency_key = derive_idempotency_key(schema.fingerprint(), line.sha256, captured_text::of("").sha256);
  }
  envelope e = make_envelope(
      {.category = failure_category::poison,
       .message = fmt::format("the input line is {} bytes, over the limit of {} (--max-line-bytes)", line.length,
                              max_line_bytes)},
      line.text, context, config);
  e.idempotency_key_derived = true;
  e.raw_response.length = line.length;
  e.raw_response.sha256 = line.sha256;
  e.raw_response.cut = true;
  fit_envelope(e, config.envelope.max_envelope_bytes);
  return e;
}

// What the command line asks of a run.
struct process_settings {
  std::string schema_path;
  std::optional<store_spec> sink;
  std::optional<store_spec> fallback;
  std::size_t max_line_bytes = default_max_line_bytes;
  process_config config;
  compile_options compile;
  version_set versions;                      // recorded in every envelope: a replay compares them with today's
  std::string model_name;                    // the model that answered, for a replay to ask again
  std::optional<chat_stream_format> stream;  // --stream: recorded streams, not JSON Lines
  std::string tools_path;                    // --tools: tool calls, not answers
  chat_api reply = chat_api::openai;         // --reply: the API of the bodies --tools reads
  std::optional<provider_profile> provider;  // --provider: the forced nulls of its lowering read as absent
};

std::string wants(std::string_view option, std::string_view wanted, std::string_view got) {
  return fmt::format("{} wants {}, not '{}'", option, wanted, got);
}

// The run's options and where its letters go; why not, as a usage error's message.
std::optional<std::string> read_run_options(const parsed_arguments& a, process_settings& s) {
  if (auto error = read_judging_options(a, s.config)) return error;
  if (const auto v = a.value("--now")) {
    const auto now = parse_rfc3339(*v);
    if (!now) return wants("--now", "an RFC 3339 date-time", *v);
    s.config.envelope.clock = [t = *now] { return t; };
  }
  if (const auto v = a.value("--max-line-bytes")) {
    const auto limit = parse_byte_count(*v);
    if (!limit) return wants("--max-line-bytes", "a positive number of bytes (suffix K, M or G)", *v);
    s.max_line_bytes = *limit;
  }
  if (const auto v = a.value("--stream")) {
    if (*v != "sse" && *v != "ndjson" && *v != "anthropic") return wants("--stream", "sse, ndjson or anthropic", *v);
    s.stream = *v == "sse"      ? chat_stream_format::openai_sse
               : *v == "ndjson" ? chat_stream_format::ollama_ndjson
                                : chat_stream_format::anthropic_sse;
  } else if (!a.operands().empty()) {
    return fmt::format("a CAPTURE operand ('{}') needs --stream", a.operand(0));
  }
  auto sink = parse_sink(a.value("--sink").value_or("none"));
  if (!sink) return sink.error();
  s.sink = std::move(*sink);
  auto fallback = parse_sink(a.value("--fallback").value_or("none"));
  if (!fallback) return "--fallback: " + fallback.error();
  s.fallback = std::move(*fallback);
  return std::nullopt;
}

// The settings the command line asks for, or the exit code after saying why not.
expected<process_settings, int> read_settings(const parsed_arguments& a) {
  process_settings s;
  if (auto error = read_schema_options(a, s.compile)) return unexpected(usage_error(syntax, *error));
  redaction_settings redaction;
  if (auto error = read_redaction_options(a, redaction)) return unexpected(usage_error(syntax, *error));
  if (auto error = read_run_options(a, s)) return unexpected(usage_error(syntax, *error));
  if (const auto v = a.value("--schema-version")) s.versions.schema = std::string(*v);
  if (const auto v = a.value("--prompt-version")) s.versions.prompt = std::string(*v);
  if (const auto v = a.value("--model")) s.model_name = std::string(*v);
  if (!apply_redaction("process", std::move(redaction), s.config.privacy)) {
    return unexpected(static_cast<int>(exit_usage));
  }
  if (const auto v = a.value("--provider")) {
    s.provider = provider_profile_from(*v);
    if (!s.provider)
      return unexpected(usage_error(syntax, wants("--provider", "openai, gemini, anthropic, ollama or full", *v)));
  }
  if (const auto v = a.value("--reply")) {
    const auto api = chat_api_from(*v);
    if (!api) return unexpected(usage_error(syntax, wants("--reply", "openai, anthropic or ollama", *v)));
    if (!a.has("--tools")) return unexpected(usage_error(syntax, "--reply reads tool calls: it needs --tools"));
    if (a.has("--stream")) {
      return unexpected(usage_error(syntax, "--reply names the API of whole replies; --stream names a stream's"));
    }
    s.reply = *api;
  }
  if (const auto v = a.value("--tools")) {
    if (a.has("--schema"))
      return unexpected(usage_error(syntax, "--tools judges calls against their tools: not with --schema"));
    s.tools_path = std::string(*v);
    return s;
  }
  const auto schema = a.value("--schema");
  if (!schema) return unexpected(usage_error(syntax, "--schema is required"));
  s.schema_path = std::string(*schema);
  return s;
}

// The sink `target` names, or none; nothing after saying why it did not open.
std::optional<std::unique_ptr<sink>> open_optional_sink(const std::optional<store_spec>& target,
                                                        std::string_view what) {
  if (!target) return std::unique_ptr<sink>();
  auto opened = open_sink(*target);
  if (!opened) {
    complain("process", fmt::format("cannot open {}: {}", what, opened.error().message));
    return std::nullopt;
  }
  return std::move(*opened);
}

int judge_lines(const pipeline& worker, const llmdlq::schema& schema, const process_settings& s);
int judge_captures(const pipeline& worker, const llmdlq::schema& schema, const process_settings& s,
                   const std::vector<std::string_view>& captures);
int judge_tool_calls(const pipeline& worker, const tool_registry& tools, const process_settings& s,
                     const std::vector<std::string_view>& captures);

// The tool definitions --tools names; nothing after saying why they cannot be read.
std::optional<tool_registry> read_tools(const process_settings& s) {
  const auto text = read_file_bounded(s.tools_path, file_kind::schema);
  if (!text) {
    complain("process", text.error().message);
    return std::nullopt;
  }
  auto tools = tool_registry::from_json(*text, s.compile);
  if (!tools) {
    complain("process", "invalid tool definitions " + s.tools_path +
                            (tools.error().pointer.empty() ? "" : " at " + tools.error().pointer) + ": " +
                            tools.error().message);
    return std::nullopt;
  }
  if (!s.provider) return std::move(*tools);
  auto lowered = lower_tools(*tools, *s.provider);
  if (!lowered) {
    complain("process", fmt::format("{} cannot take the tools: {}: {}", to_string(*s.provider), lowered.error().pointer,
                                    lowered.error().message));
    return std::nullopt;
  }
  return std::move(lowered->registry);
}

}  // namespace

int process_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  auto settings = read_settings(*parsed);
  if (!settings) return settings.error();
  const process_settings& s = *settings;
  if (!s.tools_path.empty()) {
    const auto tools = read_tools(s);
    if (!tools) return exit_usage;
    auto dead_letters = open_optional_sink(s.sink, "the DLQ");
    if (!dead_letters) return exit_sink;
    auto fallback = open_optional_sink(s.fallback, "the fallback sink");
    if (!fallback) return exit_sink;
    // Each call is judged against its tool's schema: the pipeline only stores the letters.
    const pipeline worker = make_worker(*llmdlq::schema::compile("true"), std::move(*dead_letters),
                                        std::move(*fallback), s.config);
    return judge_tool_calls(worker, *tools, s, parsed->operands());
  }
  const auto schema_text = read_file_bounded(s.schema_path, file_kind::schema);
  if (!schema_text) {
    complain("process", schema_text.error().message);
    return exit_usage;
  }
  const auto schema = llmdlq::schema::compile(*schema_text, s.compile);
  if (!schema) {
    complain("process", "invalid schema " + s.schema_path +
                            (schema.error().location.empty() ? "" : " at " + schema.error().location) + ": " +
                            schema.error().message);
    return exit_usage;
  }
  print_schema_warnings("process", *schema);
  auto dead_letters = open_optional_sink(s.sink, "the DLQ");
  if (!dead_letters) return exit_sink;
  auto fallback = open_optional_sink(s.fallback, "the fallback sink");
  if (!fallback) return exit_sink;
  process_config config = s.config;
  if (s.provider) {
    const auto lowered = lower_schema(*schema_text, *s.provider);
    if (!lowered) {
      complain("process",
               fmt::format("{} cannot take the schema: {}", to_string(*s.provider), lowered.error().message));
      return exit_usage;
    }
    config.judging.forced_nulls = lowered->nulls;
  }
  const pipeline worker = make_worker(*schema, std::move(*dead_letters), std::move(*fallback), config);
  if (s.stream) return judge_captures(worker, *schema, s, parsed->operands());
  return judge_lines(worker, *schema, s);
}

namespace {

// The end of a run: the verdicts flushed, the traffic recorded, the summary
// said; the exit code. `unit` is what was judged, a line or a capture.
int end_run(line_writer& verdicts, const pipeline& worker, const run_totals& totals, std::string_view unit,
            bool read_failed) {
  verdicts.flush();
  flush_traffic(worker);
  complain("process", totals.summary(unit));
  if (verdicts.failed()) {
    // What was judged is in the sink (a rerun stores nothing twice); what was said of it is lost from there on.
    complain("process", fmt::format("{}; the verdicts after the first {} are missing: run those {}s again",
                                    verdicts.failure("standard output"), verdicts.lines_written(), unit));
    return exit_sink;
  }
  if (totals.retry > 0) return exit_sink;
  return read_failed || totals.invalid > 0 ? exit_usage : exit_ok;
}

// Reads standard input's lines (a line over --max-line-bytes as its length,
// hash and first bytes), handing each that is not blank to `judge(line_number,
// line, totals, verdicts)`, until the input ends or the verdicts cannot be
// written; the exit code.
template <class Judge>
int judge_each_line(const pipeline& worker, const process_settings& s, Judge&& judge) {
  run_totals totals;
  bool read_failed = false;
  line_reader lines(STDIN_FILENO, s.max_line_bytes, oversized_prefix_bytes);
  // A terminal sees each verdict as its line is judged.
  line_writer verdicts(STDOUT_FILENO, ::isatty(STDOUT_FILENO) ? 1 : 64 * 1024);
  for (std::uint64_t line_number = 1; !verdicts.failed(); ++line_number) {
    auto next = lines.next();
    if (!next) {
      complain("process", "cannot read standard input: " + next.error());
      read_failed = true;
      break;
    }
    if (!*next) break;
    const input_line& line = **next;
    if (line.text.empty() && !line.over_limit) continue;
    ++totals.lines;
    judge(line_number, line, totals, verdicts);
  }
  return end_run(verdicts, worker, totals, "line", read_failed);
}

// Judges standard input's lines, printing a verdict for each; the exit code.
int judge_lines(const pipeline& worker, const llmdlq::schema& schema, const process_settings& s) {
  const std::size_t max_line_bytes = s.max_line_bytes;
  return judge_each_line(
      worker, s, [&](std::uint64_t line_number, const input_line& line, run_totals& totals, line_writer& verdicts) {
        boost::json::object verdict{{"line", line_number}};
        if (line.over_limit) {
          const disposition d = worker.dead_letter(oversized_line_envelope(line, max_line_bytes, schema, s.config));
          verdict.emplace("length", line.length);
          describe_dead_letter(verdict, d, totals);
          verdicts.write_line(json_text(verdict));
          return;
        }
        auto input = read_response_line(line.text, max_line_bytes);
        if (!input) {
          ++totals.invalid;
          if (!input.error().id.is_null()) verdict.emplace("id", std::move(input.error().id));
          verdict.emplace("status", "invalid_input");
          verdict.emplace("error", std::move(input.error().message));
          verdicts.write_line(json_text(verdict));
          return;
        }
        if (const auto* id = input->input.as_object().if_contains("id")) verdict.emplace("id", *id);
        input->context.versions = s.versions;
        if (!s.model_name.empty()) input->context.model.name = s.model_name;
        const disposition d = worker.handle(input->response, input->context);
        describe_disposition(verdict, d, totals);
        verdicts.write_line(json_text(verdict));
      });
}

// One recorded stream, read as it would arrive: a piece at a time, no
// further than the byte its answer died at. The verdict's "stream" part,
// and the hash of the bytes read, which keys its dead letter.
struct capture_reading {
  std::uint64_t read = 0;             // transport bytes read
  std::optional<std::uint64_t> size;  // a regular file's whole size
  std::optional<std::string> error;   // the capture could not be read
  std::string sha256;                 // of the bytes read
};

// (`Stream`: a judged_stream, or a judged_tool_stream.)
template <class Stream>
capture_reading read_capture(int fd, Stream& stream) {
  capture_reading r;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) r.size = static_cast<std::uint64_t>(st.st_size);
  // About what one read of a live response brings: a verdict reached inside
  // a piece stops the reading after that piece. Each piece is filled before
  // it is judged, so that the bytes read, and so the dead letter's key, are
  // the same however a pipe hands them over.
  char piece[4096];
  sha256_stream hash;
  bool ended = false;
  while (!ended && !stream.verdict().dead && !stream.decoder().error()) {
    std::size_t filled = 0;
    while (filled < sizeof piece) {
      const ssize_t n = ::read(fd, piece + filled, sizeof piece - filled);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) r.error = std::string(std::strerror(errno));
      if (n <= 0) {
        ended = true;
        break;
      }
      filled += static_cast<std::size_t>(n);
    }
    if (r.error || filled == 0) break;
    const std::string_view bytes(piece, filled);
    r.read += filled;
    hash.update(bytes);
    stream.feed(bytes);
  }
  r.sha256 = hash.hex();
  return r;
}

boost::json::object stream_json(const capture_reading& r, const judged_stream& stream) {
  boost::json::object o{{"read", r.read}};
  if (r.size) o.emplace("size", *r.size);
  o.emplace("events", stream.decoder().content_events());
  o.emplace("answer_bytes", stream.received().size());
  o.emplace("ended", stream.done());
  if (stream.verdict().dead) o.emplace("dead_at", stream.verdict().offset);
  return o;
}

// Judges one capture into its verdict line.
// A capture opened (`-`: standard input); -1 after saying why not in `verdict`, counted invalid.
int open_capture(std::string_view name, boost::json::object& verdict, run_totals& totals) {
  const int fd = name == "-" ? STDIN_FILENO : ::open(std::string(name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ++totals.invalid;
    verdict.emplace("status", "invalid_input");
    verdict.emplace("error", fmt::format("cannot open {}: {}", name, std::strerror(errno)));
  }
  return fd;
}

// A request context with the run's versions and model.
request_context run_context(const process_settings& s) {
  request_context context;
  context.versions = s.versions;
  if (!s.model_name.empty()) context.model.name = s.model_name;
  return context;
}

boost::json::object judge_capture(const pipeline& worker, const llmdlq::schema& schema, const process_settings& s,
                                  std::string_view name, run_totals& totals) {
  boost::json::object verdict{{"capture", name}};
  const bool from_stdin = name == "-";
  const int fd = open_capture(name, verdict, totals);
  if (fd < 0) return verdict;
  request_context context = run_context(s);
  context.record_id = std::string(name);
  judged_stream stream(schema, *s.stream, std::move(context), worker.config());
  const capture_reading reading = read_capture(fd, stream);
  if (!from_stdin) ::close(fd);
  verdict.emplace("stream", stream_json(reading, stream));
  const bool sse = s.stream == chat_stream_format::openai_sse;
  // Bytes without a single event of the format (an error page, a whole
  // completion, another format's stream) are not an answer that was empty.
  const bool no_event = stream.decoder().events() == 0;
  if (reading.error || stream.decoder().error() || no_event) {
    ++totals.invalid;
    verdict.emplace("status", "invalid_input");
    const char* format = sse ? "OpenAI's server-sent events" : "Ollama's lines of JSON";
    std::string why = reading.error ? "cannot read: " + *reading.error
                      : stream.decoder().error()
                          ? fmt::format("not {}: {}", format, *stream.decoder().error())
                          : fmt::format("not {}: no {} in its {}", format, sse ? "data: event" : "line of JSON",
                                        detail::counted(reading.read, "byte"));
    verdict.emplace("error", std::move(why));
    return verdict;
  }
  // The capture's bytes key its dead letter, as a line's response keys
  // its: distinct captures never share one, even cut at the same answer.
  if (!reading.sha256.empty() && stream.context().idempotency_key.empty()) {
    stream.context().idempotency_key = derive_idempotency_key(schema.fingerprint(), reading.sha256,
                                                              captured_text::of("").sha256);
  }
  auto judged = stream.finish();
  if (!judged) judged.error().idempotency_key_derived = true;
  const disposition d = worker.settle(std::move(judged));
  describe_disposition(verdict, d, totals);
  return verdict;
}

// Hands each recorded stream named (standard input when none) to
// `judge(name, totals, verdicts)`, until the verdicts cannot be written; the exit code.
template <class Judge>
int judge_each_capture(const pipeline& worker, const std::vector<std::string_view>& captures, Judge&& judge) {
  static const std::vector<std::string_view> standard_input{"-"};
  run_totals totals;
  line_writer verdicts(STDOUT_FILENO, ::isatty(STDOUT_FILENO) ? 1 : 64 * 1024);
  for (const std::string_view name : captures.empty() ? standard_input : captures) {
    if (verdicts.failed()) break;
    ++totals.lines;
    judge(name, totals, verdicts);
  }
  return end_run(verdicts, worker, totals, "capture", false);
}

// Judges each recorded stream named, printing a verdict for each; the exit code.
int judge_captures(const pipeline& worker, const llmdlq::schema& schema, const process_settings& s,
                   const std::vector<std::string_view>& captures) {
  return judge_each_capture(worker, captures, [&](std::string_view name, run_totals& totals, line_writer& verdicts) {
    verdicts.write_line(json_text(judge_capture(worker, schema, s, name, totals)));
  });
}

// Verdict lines for each call of a reply: the reply's own fields, then the call's and its judgement.
// A reply without a call says why it ended (`finish_reason`) and its refusal, when it gave them.
void describe_calls(std::vector<judged_tool_call> judged, const boost::json::object& reply_fields,
                    const pipeline& worker, run_totals& totals, line_writer& verdicts, std::string_view finish_reason,
                    const std::optional<std::string>& refusal) {
  if (judged.empty()) {
    boost::json::object verdict = reply_fields;
    verdict.emplace("status", "no_tool_call");
    if (!finish_reason.empty()) verdict.emplace("finish_reason", finish_reason);
    if (refusal) verdict.emplace("refusal", *refusal);
    verdicts.write_line(json_text(verdict));
    return;
  }
  for (auto& j : judged) {
    boost::json::object verdict = reply_fields;
    verdict.emplace("call", j.call.index);
    verdict.emplace("tool", j.call.name);
    if (!j.call.id.empty()) verdict.emplace("call_id", j.call.id);
    describe_disposition(verdict, worker.settle(std::move(j.result)), totals);
    verdicts.write_line(json_text(verdict));
  }
}

// Judges the calls of each reply body on standard input.
int judge_reply_lines(const pipeline& worker, const tool_registry& tools, const process_settings& s) {
  return judge_each_line(
      worker, s, [&](std::uint64_t line_number, const input_line& line, run_totals& totals, line_writer& verdicts) {
        boost::json::object fields{{"line", line_number}};
        auto reply = line.over_limit ? unexpected(reply_error{fmt::format("the line is {} bytes, over the limit of {}",
                                                                          line.length, s.max_line_bytes)})
                                     : read_tool_calls(line.text, s.reply);
        if (!reply) {
          ++totals.invalid;
          fields.emplace("status", "invalid_input");
          fields.emplace("error", std::move(reply.error().message));
          verdicts.write_line(json_text(fields));
          return;
        }
        request_context context = run_context(s);
        if (!reply->id.empty()) {
          context.record_id = reply->id;
          fields.emplace("id", reply->id);
        }
        describe_calls(process_tool_calls(*reply, tools, context, worker.config()), fields, worker, totals, verdicts,
                       reply->finish_reason, reply->refusal);
      });
}

// Judges the calls of each recorded stream.
int judge_tool_captures(const pipeline& worker, const tool_registry& tools, const process_settings& s,
                        const std::vector<std::string_view>& captures) {
  return judge_each_capture(worker, captures, [&](std::string_view name, run_totals& totals, line_writer& verdicts) {
    boost::json::object fields{{"capture", name}};
    const int fd = open_capture(name, fields, totals);
    if (fd < 0) {
      verdicts.write_line(json_text(fields));
      return;
    }
    request_context context = run_context(s);
    context.record_id = std::string(name);
    judged_tool_stream stream(tools, *s.stream, std::move(context), worker.config());
    const capture_reading reading = read_capture(fd, stream);
    if (name != "-") ::close(fd);
    boost::json::object read{
        {"read", reading.read}, {"events", stream.decoder().content_events()}, {"ended", stream.done()}};
    if (stream.verdict().dead && stream.verdict().call) read.emplace("dead_call", *stream.verdict().call);
    fields.emplace("stream", std::move(read));
    if (reading.error || stream.decoder().error() || stream.decoder().events() == 0) {
      ++totals.invalid;
      fields.emplace("status", "invalid_input");
      fields.emplace("error", reading.error              ? "cannot read: " + *reading.error
                              : stream.decoder().error() ? "not a stream of the format: " + *stream.decoder().error()
                                                         : std::string("not a stream of the format: no event"));
      verdicts.write_line(json_text(fields));
      return;
    }
    describe_calls(stream.finish(), fields, worker, totals, verdicts, stream.decoder().finish_reason(),
                   stream.decoder().refusal());
  });
}

int judge_tool_calls(const pipeline& worker, const tool_registry& tools, const process_settings& s,
                     const std::vector<std::string_view>& captures) {
  if (s.stream) return judge_tool_captures(worker, tools, s, captures);
  return judge_reply_lines(worker, tools, s);
}

}  // namespace
}  // namespace llmdlq::cli
