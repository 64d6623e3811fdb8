// SPDX-License-Identifier: MIT
// `llmdlq eval`: a DLQ's letters as the test set of a candidate prompt,
// model or schema; reads the DLQ and changes nothing.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/detail/counted.hpp>
#include <llmdlq/detail/store/record_check.hpp>
#include <llmdlq/llm/evaluator.hpp>
#include <llmdlq/llm/replayer.hpp>
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
#include <llmdlq/crypto/file_key_provider.hpp>
#include <llmdlq/crypto/sodium_field_cipher.hpp>
#endif

#include "cli.hpp"
#include "commands.hpp"
#include "line_writer.hpp"
#include "model_client.hpp"
#include "judging_flags.hpp"
#include "options.hpp"
#include "progress_line.hpp"
#include "schema_flags.hpp"
#include "selection_flags.hpp"
#include "store_spec.hpp"
#include "unreadable.hpp"
#include "console/assets.hpp"
#include "console/charts.hpp"
#include "console/html.hpp"

namespace llmdlq::cli {
namespace {

constexpr option candidate_options[] = {
    {"--model-url", option_kind::value, "URL", "an OpenAI-compatible API (http://127.0.0.1:8080/v1); required"},
    {"--model", option_kind::value, "NAME", "the candidate model; required"},
    {"--prompt", option_kind::value, "FILE",
     "the candidate prompt: the user message, with {{input}} where each letter's\n"
     "original input goes and {{failed_output}} where its failed output goes; required"},
    {"--schema", option_kind::value, "FILE", "the schema answers must pass; required"},
    {"--provider", option_kind::value, "NAME",
     "how the server takes the schema: openai, gemini, anthropic, ollama or full\n(default: as for `llmdlq replay`)"},
    {"--api-key-env", option_kind::value, "VAR",
     "the environment variable holding the API key (never on the command line)"},
    {"--timeout", option_kind::value, "SECONDS", "per call (default 60)"},
    {"--max-tokens", option_kind::value, "N", "per answer (default 2048)"},
};
constexpr option sample_options[] = {
    {"--sample", option_kind::value, "N",
     "ask at most N of the selected letters, chosen by --seed, in proportion to\n"
     "their (category, code) groups, each group seen once when N allows"},
    {"--seed", option_kind::value, "S", "the sample's seed (default 1): the same seed, the same letters"},
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
    {"--keys", option_kind::value, "DIR", "the key directory, to open letters' sealed original inputs"},
#endif
    {"--control", option_kind::value, "FILE",
     "JSON Lines of inputs that succeed today ({\"id\": ..., \"input\": \"...\"}): each\n"
     "answer that fails now is a regression"},
};
constexpr option run_options[] = {
    {"--budget-tokens", option_kind::value, "N", "stop asking once the calls spent N tokens (default: no limit)"},
    {"--rate", option_kind::value, "N", "calls per second (default 10; 0: no limit)"},
    {"--concurrency", option_kind::value, "N", "calls in flight, each with a client of its own (default 1)"},
    {"--results", option_kind::value, "FILE", "one JSON line per letter and control"},
    {"--html", option_kind::value, "FILE", "a page with the matrix, the counts and the cost"},
    {"--json", option_kind::flag, "", "the summary as JSON"},
    {"--min-fixed", option_kind::value, "N|P%", "exit 1 unless at least N letters (or P % of those judged) are fixed"},
    {"--max-regressed", option_kind::value, "N|P%",
     "exit 1 when more than N controls (or P % of those judged) regress"},
};
constexpr operand operands[] = {{"STORE", "give the DLQ to evaluate on"}};

const command_syntax syntax{
    .command = "eval",
    .operands = operands,
    .groups = {group("candidate", candidate_options), group("judging (as for `llmdlq process`)", judging_options_table),
               group("schema (as for `llmdlq validate`)", schema_options), group("selection", selection_options),
               group("sample and controls", sample_options), group("run and results", run_options)},
    .about = "  Asks a candidate (a prompt, a model, a schema) for the input of each selected letter, whatever\n"
             "  its status, and judges each answer as the pipeline judges a response: before -> after by\n"
             "  category, fixed letters and, with --control, regressed controls, each count with its 95 %\n"
             "  Wilson interval, and the tokens spent. A letter that stores no usable original input is not\n"
             "  evaluable (unless the prompt uses only {{failed_output}}). Reads the DLQ and changes nothing.\n",
    .stores = store_forms(),
    .closing = "Exit 0 when the thresholds hold (or none was given), 1 when one does not, 2 for usage errors,\n"
               "3 when the store failed or calls got no answer (the counts are incomplete: run it again), 6\n"
               "when it ran but skipped letters that do not read back.\n",
};

constexpr std::int64_t default_timeout_seconds = 60;

// A threshold: a count, or a percentage of those judged.
struct threshold {
  double value = 0;
  bool percent = false;
  std::string text;

  [[nodiscard]] double measure(std::uint64_t count, std::uint64_t of) const {
    if (!percent) return static_cast<double>(count);
    return of == 0 ? 0.0 : 100.0 * static_cast<double>(count) / static_cast<double>(of);
  }
};

struct settings {
  std::string store;
  store_spec dlq;
  std::string model_url;
  std::string api_key_env;
  std::chrono::milliseconds timeout{std::chrono::seconds(default_timeout_seconds)};
  std::string prompt_file;
  std::string schema_file;
  std::string control_file;
  std::string keys;
  std::string results_file;
  std::string html_file;
  bool json = false;
  letter_selection selection;
  std::optional<std::size_t> sample;
  std::uint64_t seed = 1;
  std::size_t concurrency = 1;
  std::optional<threshold> min_fixed;
  std::optional<threshold> max_regressed;
  evaluator_options options;
  compile_options compile;
};

std::optional<std::string> read_threshold(const parsed_arguments& a, std::string_view name,
                                          std::optional<threshold>& out) {
  const auto v = a.value(name);
  if (!v) return std::nullopt;
  threshold t{.percent = v->ends_with('%'), .text = std::string(*v)};
  const std::string number(t.percent ? v->substr(0, v->size() - 1) : *v);
  char* end = nullptr;
  t.value = std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0' || !std::isfinite(t.value) || t.value < 0 || (t.percent && t.value > 100)) {
    return fmt::format("{} wants a count or a percentage (80%), not '{}'", name, *v);
  }
  out = t;
  return std::nullopt;
}

std::optional<std::string> read_candidate(const parsed_arguments& a, settings& s) {
  s.model_url = std::string(a.value("--model-url").value_or(""));
  s.options.model = std::string(a.value("--model").value_or(""));
  s.prompt_file = std::string(a.value("--prompt").value_or(""));
  s.schema_file = std::string(a.value("--schema").value_or(""));
  if (s.model_url.empty() || s.options.model.empty() || s.prompt_file.empty() || s.schema_file.empty()) {
    return std::string("give the candidate: --model-url URL, --model NAME, --prompt FILE and --schema FILE");
  }
  s.options.provider = provider_of(s.model_url);
  if (const auto v = a.value("--provider")) {
    const auto profile = provider_profile_from(*v);
    if (!profile) return fmt::format("--provider takes openai, gemini, anthropic, ollama or full, not '{}'", *v);
    s.options.provider = *profile;
  }
  s.api_key_env = std::string(a.value("--api-key-env").value_or(""));
  std::int64_t seconds = default_timeout_seconds;
  if (auto e = read_count(a, "--timeout", seconds)) return e;
  s.timeout = std::chrono::seconds(std::max<std::int64_t>(seconds, 1));
  std::int64_t max_tokens = *s.options.max_tokens;
  if (auto e = read_count(a, "--max-tokens", max_tokens)) return e;
  s.options.max_tokens = std::max<std::int64_t>(max_tokens, 1);
  return std::nullopt;
}

// As `llmdlq process` judges: the same options, read the same way.
std::optional<std::string> read_judging(const parsed_arguments& a, settings& s) {
  if (auto e = read_judging_options(a, s.options.judge)) return e;
  return read_schema_options(a, s.compile);
}

std::optional<std::string> read_run(const parsed_arguments& a, settings& s) {
  if (auto e = read_selection(a, s.selection)) return e;
  if (a.has("--sample")) {
    std::size_t n = 0;
    if (auto e = read_count(a, "--sample", n)) return e;
    s.sample = n;
  }
  if (auto e = read_count(a, "--seed", s.seed)) return e;
  if (auto e = read_count(a, "--budget-tokens", s.options.token_budget)) return e;
  s.options.rate = 10;
  if (auto e = read_rate(a, s.options.rate)) return e;
  if (auto e = read_count(a, "--concurrency", s.concurrency)) return e;
  if (s.concurrency < 1 || s.concurrency > 64) return std::string("--concurrency wants 1 to 64 calls in flight");
  s.control_file = std::string(a.value("--control").value_or(""));
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
  s.keys = std::string(a.value("--keys").value_or(""));
#endif
  s.results_file = std::string(a.value("--results").value_or(""));
  s.html_file = std::string(a.value("--html").value_or(""));
  s.json = a.has("--json");
  if (auto e = read_threshold(a, "--min-fixed", s.min_fixed)) return e;
  return read_threshold(a, "--max-regressed", s.max_regressed);
}

std::optional<std::string> read_settings(const parsed_arguments& a, settings& s) {
  s.store = std::string(a.operand(0));
  auto dlq = parse_store_spec(s.store);
  if (!dlq) return dlq.error();
  s.dlq = std::move(*dlq);
  for (const auto read : {read_candidate, read_judging, read_run}) {
    if (auto e = read(a, s)) return e;
  }
  return std::nullopt;
}

// The letters the selection takes, read without changing anything, and those that do not read back.
struct selected_letters {
  std::size_t seen = 0;
  std::size_t selected = 0;
  std::vector<envelope> letters;
  std::uint64_t unreadable = 0;
  std::vector<unreadable_record> unreadable_letters;
};

expected<selected_letters, std::string> read_letters(moderation_store& store, const letter_selection& selection) {
  selected_letters out;
  moderation_query q = query_for(selection.filter);
  if (selection.requeued_only) q.statuses = {moderation_status::requeued};
  const auto full = [&] { return selection.limit > 0 && out.letters.size() >= selection.limit; };
  while (!full()) {
    auto page = store.query(q);
    if (!page) return unexpected(std::move(page.error().message));
    for (auto& record : page->records) {
      if (full()) break;
      ++out.seen;
      std::string why = record.readable() ? std::string() : record.defect_reason;
      std::optional<envelope> letter;
      if (why.empty()) {
        auto parsed = parse_envelope(record.envelope_json);
        if (parsed) {
          letter = std::move(*parsed);
        } else {
          why = detail::store::envelope_reason(parsed.error());
        }
      }
      if (!letter) {
        complain("eval", fmt::format("skipped {}: it does not read back: {}", printable_id(record.dlq_id), why));
        if (out.unreadable_letters.size() < max_listed_unreadable) {
          out.unreadable_letters.push_back({record.dlq_id, std::move(why)});
        }
        ++out.unreadable;
        continue;
      }
      if (selection.filter.matches(*letter)) out.letters.push_back(std::move(*letter));
    }
    if (!page->more || !page->next) break;
    q.after = std::move(page->next);
  }
  out.selected = out.letters.size();
  return out;
}

// The controls: {"id", "input"} per line; an id defaults to the line's number.
expected<std::vector<eval_case>, std::string> read_controls(const std::string& file) {
  std::vector<eval_case> controls;
  if (file.empty()) return controls;
  auto text = read_file_bounded(file, file_kind::json_lines);
  if (!text) return unexpected(text.error().message);
  std::size_t line_number = 0;
  std::string_view rest(*text);
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    boost::system::error_code ec;
    const auto value = boost::json::parse(line, ec);
    const auto* object = ec ? nullptr : value.if_object();
    const auto* input = object ? object->if_contains("input") : nullptr;
    if (input == nullptr || !input->is_string()) {
      return unexpected(fmt::format("{} line {}: expected an object with a string \"input\"", file, line_number));
    }
    eval_case c;
    c.control = true;
    c.input = input->get_string();
    const auto* id = object->if_contains("id");
    c.id = id && id->is_string()   ? std::string(id->get_string())
           : id && id->is_number() ? boost::json::serialize(*id)
                                   : fmt::format("line {}", line_number);
    controls.push_back(std::move(c));
  }
  return controls;
}

// The letters the sample takes, stratified by (category, code).
std::vector<envelope> sampled(std::vector<envelope> letters, const settings& s) {
  if (!s.sample) return letters;
  std::vector<std::string> strata;
  std::vector<std::string> ids;
  for (const auto& e : letters) {
    strata.push_back(fmt::format("{}/{}", to_string(e.failure.category), e.failure.code));
    ids.push_back(e.dlq_id);
  }
  std::vector<envelope> chosen;
  for (const auto i : stratified_sample(strata, ids, *s.sample, s.seed)) chosen.push_back(std::move(letters[i]));
  return chosen;
}

boost::json::object result_json(const eval_result& r) {
  boost::json::object o;
  if (r.control) {
    o.emplace("control", r.id);
    o.emplace("before", boost::json::object{{"status", "accepted"}});
  } else {
    o.emplace("dlq_id", r.id);
    o.emplace("before", boost::json::object{{"category", r.before_category}, {"code", r.before_code}});
  }
  boost::json::object after{{"status", to_string(r.outcome)}};
  if (r.outcome == eval_outcome::failed) {
    after.emplace("category", r.after_category);
    after.emplace("code", r.after_code);
  }
  if (r.outcome != eval_outcome::accepted && !r.detail.empty()) after.emplace("detail", r.detail);
  o.emplace("after", std::move(after));
  o.emplace("tokens", boost::json::object{{"prompt", r.usage.prompt_tokens},
                                          {"completion", r.usage.completion_tokens},
                                          {"total", r.usage.total()}});
  o.emplace("latency_ms", r.latency.count());
  return o;
}

// Whether each threshold given holds.
struct gate {
  std::string name;    // in the JSON summary
  std::string option;  // on the command line
  std::string text;
  bool holds = true;
};

std::vector<gate> gates_of(const settings& s, const eval_summary& r) {
  std::vector<gate> gates;
  if (s.min_fixed) {
    gates.push_back({"min_fixed", "--min-fixed", s.min_fixed->text,
                     s.min_fixed->measure(r.fixed, r.evaluated) >= s.min_fixed->value});
  }
  if (s.max_regressed) {
    gates.push_back({"max_regressed", "--max-regressed", s.max_regressed->text,
                     s.max_regressed->measure(r.regressed, r.controls_evaluated) <= s.max_regressed->value});
  }
  return gates;
}

// The matrix's columns: accepted first, then each category an answer failed with.
std::vector<std::string> after_columns(const eval_summary& r) {
  std::set<std::string> failed;
  for (const auto& [before, afters] : r.matrix) {
    for (const auto& [after, n] : afters) {
      if (after != "accepted") failed.insert(after);
    }
  }
  std::vector<std::string> columns{"accepted"};
  columns.insert(columns.end(), failed.begin(), failed.end());
  return columns;
}

std::string rate_text(std::uint64_t count, std::uint64_t of, proportion_interval ci) {
  if (of == 0) return "none judged";
  return fmt::format("{:.1f} %, 95 % CI {:.1f}–{:.1f} %", 100.0 * static_cast<double>(count) / static_cast<double>(of),
                     100 * ci.low, 100 * ci.high);
}

struct run_facts {
  const settings& s;
  const selected_letters& read;
  const eval_summary& summary;
  const std::vector<gate>& gates;
};

boost::json::object summary_json(const run_facts& f) {
  const eval_summary& r = f.summary;
  boost::json::object matrix;
  for (const auto& [before, afters] : r.matrix) {
    boost::json::object row;
    for (const auto& [after, n] : afters) row.emplace(after, n);
    matrix.emplace(before, std::move(row));
  }
  boost::json::object regressions;
  for (const auto& [category, n] : r.regressions) regressions.emplace(category, n);
  const auto interval = [](proportion_interval ci) { return boost::json::array{ci.low, ci.high}; };
  boost::json::object thresholds;
  for (const auto& g : f.gates) thresholds.emplace(g.name, boost::json::object{{"value", g.text}, {"holds", g.holds}});
  return {{"store", f.s.store},
          {"model", f.s.options.model},
          {"prompt", f.s.prompt_file},
          {"seen", f.read.seen},
          {"selected", f.read.selected},
          {"letters", r.letters},
          {"evaluated", r.evaluated},
          {"fixed", r.fixed},
          {"fixed_interval", interval(r.fixed_interval())},
          {"not_evaluable", r.not_evaluable},
          {"controls", r.controls},
          {"controls_evaluated", r.controls_evaluated},
          {"regressed", r.regressed},
          {"regressed_interval", interval(r.regressed_interval())},
          {"not_asked", r.not_asked},
          {"call_failed", r.call_failed},
          {"matrix", std::move(matrix)},
          {"regressions", std::move(regressions)},
          {"calls", r.calls},
          {"tokens",
           {{"prompt", r.usage.prompt_tokens}, {"completion", r.usage.completion_tokens}, {"total", r.usage.total()}}},
          {"latency_ms", {{"p50", r.latency_p50.count()}, {"p95", r.latency_p95.count()}}},
          {"thresholds", std::move(thresholds)},
          {"unreadable", f.read.unreadable},
          {"unreadable_letters", unreadable_json(f.read.unreadable_letters)}};
}

std::string summary_text(const run_facts& f) {
  const eval_summary& r = f.summary;
  std::string out = fmt::format("eval of {} on {}: {} read, {} selected", f.s.options.model, f.s.store,
                                detail::counted(f.read.seen, "letter"), f.read.selected);
  if (f.s.sample) out += fmt::format(", {} sampled", r.letters);
  out += fmt::format(", {} judged, {} not evaluable", r.evaluated, r.not_evaluable);
  if (r.controls > 0) out += fmt::format("; {} judged", detail::counted(r.controls_evaluated, "control"));
  out += '\n';
  const auto columns = after_columns(r);
  out += fmt::format("  {:<16}", "before \\ after");
  for (const auto& c : columns) out += fmt::format(" {:>10}", c);
  out += '\n';
  for (const auto& [before, afters] : r.matrix) {
    out += fmt::format("  {:<16}", before);
    for (const auto& c : columns) {
      const auto it = afters.find(c);
      out += fmt::format(" {:>10}", it == afters.end() ? 0 : it->second);
    }
    out += '\n';
  }
  out += fmt::format("fixed {} of {} ({})\n", r.fixed, r.evaluated,
                     rate_text(r.fixed, r.evaluated, r.fixed_interval()));
  if (r.controls > 0) {
    out += fmt::format("regressed {} of {} controls ({})\n", r.regressed, r.controls_evaluated,
                       rate_text(r.regressed, r.controls_evaluated, r.regressed_interval()));
  }
  out += fmt::format("tokens {} (prompt {}, completion {}) in {}; latency p50 {} ms, p95 {} ms\n", r.usage.total(),
                     r.usage.prompt_tokens, r.usage.completion_tokens, detail::counted(r.calls, "call"),
                     r.latency_p50.count(), r.latency_p95.count());
  if (r.not_asked + r.call_failed > 0) {
    out += fmt::format("not asked (budget spent) {}, calls without an answer {}\n", r.not_asked, r.call_failed);
  }
  for (const auto& g : f.gates) {
    out += fmt::format("{} {}: {}\n", g.option, g.text, g.holds ? "holds" : "does not hold");
  }
  return out;
}

std::string matrix_html(const eval_summary& r) {
  const auto columns = after_columns(r);
  std::string out = "<table class=\"counts\"><caption>letters: category before → after</caption><thead><tr>"
                    "<th>before \\ after</th>";
  for (const auto& c : columns) {
    out += fmt::format("<th>{}{}</th>", c == "accepted" ? "" : category_swatch_html(c), html_escape(c));
  }
  out += "</tr></thead><tbody>";
  for (const auto& [before, afters] : r.matrix) {
    out += fmt::format("<tr><th>{}{}</th>", category_swatch_html(before), html_escape(before));
    for (const auto& c : columns) {
      const auto it = afters.find(c);
      out += fmt::format("<td>{}</td>", it == afters.end() ? 0 : it->second);
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

std::string page_html(const run_facts& f, const std::vector<eval_result>& results) {
  const eval_summary& r = f.summary;
  const std::string title = fmt::format("Evaluation of {} on {}", f.s.options.model, f.s.store);
  std::string page = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title><style>{1}</style></head>"
      "<body><header><strong>llmdlq</strong> eval</header><main><h1>{0}</h1><p>Generated {2}; prompt {3}, "
      "schema {4}. {5} read, {6} selected, {7} asked for, {8} judged, {9} not evaluable.</p>",
      html_escape(title), console_stylesheet, html_escape(format_rfc3339(system_now())), html_escape(f.s.prompt_file),
      html_escape(f.s.schema_file), detail::counted(f.read.seen, "letter"), f.read.selected, r.letters, r.evaluated,
      r.not_evaluable);
  page += "<h2>Before → after by category</h2>" + matrix_html(r);
  page += "<h2>Fixed and regressed</h2><table class=\"counts\"><thead><tr><th></th><th>count</th><th>of</th>"
          "<th>rate, 95 % Wilson interval</th></tr></thead><tbody>";
  page += fmt::format("<tr><th>fixed letters</th><td>{}</td><td>{}</td><td>{}</td></tr>", r.fixed, r.evaluated,
                      html_escape(rate_text(r.fixed, r.evaluated, r.fixed_interval())));
  page += fmt::format("<tr><th>regressed controls</th><td>{}</td><td>{}</td><td>{}</td></tr></tbody></table>",
                      r.regressed, r.controls_evaluated,
                      html_escape(rate_text(r.regressed, r.controls_evaluated, r.regressed_interval())));
  for (const auto& g : f.gates) {
    page += fmt::format("<p><code>{} {}</code>: <strong>{}</strong></p>", html_escape(g.option), html_escape(g.text),
                        g.holds ? "holds" : "does not hold");
  }
  page += fmt::format("<h2>Cost</h2><p>{} tokens (prompt {}, completion {}) in {}; latency p50 {} ms, p95 {} ms.</p>",
                      r.usage.total(), r.usage.prompt_tokens, r.usage.completion_tokens,
                      detail::counted(r.calls, "call"), r.latency_p50.count(), r.latency_p95.count());
  std::string rows;
  for (const auto& result : results) {
    if (result.outcome == eval_outcome::accepted || (result.outcome == eval_outcome::failed && !result.control))
      continue;
    rows += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>", html_escape(result.id),
                        result.control ? "control" : "letter",
                        html_escape(result.outcome == eval_outcome::failed
                                        ? fmt::format("regressed: {} ({})", result.after_category, result.after_code)
                                        : fmt::format("{}: {}", to_string(result.outcome), result.detail)));
  }
  if (!rows.empty()) {
    page += "<h2>Regressed and not judged</h2><table class=\"counts\"><thead><tr><th>id</th><th></th><th>what</th>"
            "</tr></thead><tbody>" +
            rows + "</tbody></table>";
  }
  return page + "</main></body></html>\n";
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

// What the run wrote, or the exit status when a file could not be written.
std::optional<int> write_outputs(const run_facts& f, const std::vector<eval_result>& results) {
  if (!f.s.results_file.empty()) {
    std::string lines;
    for (const auto& r : results) lines += json_text(result_json(r)) + '\n';
    if (!write_file(f.s.results_file, lines)) {
      complain("eval", "cannot write " + f.s.results_file);
      return exit_sink;
    }
  }
  if (!f.s.html_file.empty() && !write_file(f.s.html_file, page_html(f, results))) {
    complain("eval", "cannot write " + f.s.html_file);
    return exit_sink;
  }
  std::cout << (f.s.json ? json_text(summary_json(f)) + '\n' : summary_text(f)) << std::flush;
  return std::nullopt;
}

int exit_status(const run_facts& f) {
  if (f.summary.call_failed > 0) return exit_sink;
  for (const auto& g : f.gates) {
    if (!g.holds) return exit_invalid;
  }
  return exit_for_unreadable(f.read.unreadable);
}

// The cases: the sampled letters, then the controls.
expected<std::vector<eval_case>, std::string> cases_of(const settings& s, std::vector<envelope> letters,
                                                       const prompt_template& prompt) {
  const field_cipher* cipher = nullptr;
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
  std::optional<sodium_field_cipher> opener;
  if (!s.keys.empty()) {
    opener.emplace(std::make_shared<file_key_provider>(s.keys));
    cipher = &*opener;
  }
#endif
  std::vector<eval_case> cases;
  for (const auto& letter : sampled(std::move(letters), s)) cases.push_back(eval_case_of(letter, prompt, cipher));
  auto controls = read_controls(s.control_file);
  if (!controls) return unexpected(std::move(controls.error()));
  for (auto& c : *controls) {
    if (!prompt.uses_input()) c.not_evaluable = "the prompt does not use the input";
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace

int eval_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  settings s;
  if (auto error = read_settings(*parsed, s)) return cli::usage_error(syntax, *error);
  auto schema_text = read_file_bounded(s.schema_file, file_kind::schema);
  auto prompt_text = schema_text ? read_file_bounded(s.prompt_file, file_kind::document) : schema_text;
  if (!schema_text || !prompt_text) {
    complain("eval", (!schema_text ? schema_text : prompt_text).error().message);
    return exit_usage;
  }
  auto prompt = prompt_template::parse(std::move(*prompt_text));
  if (!prompt) {
    complain("eval", fmt::format("{}: {}", s.prompt_file, prompt.error()));
    return exit_usage;
  }
  auto candidate = evaluator::create(*schema_text, *prompt, s.options, s.compile);
  if (!candidate) {
    complain("eval", fmt::format("{}: {}", s.schema_file, candidate.error().message));
    return exit_usage;
  }
  std::vector<std::unique_ptr<llm_client>> clients;
  std::vector<llm_client*> in_flight;
  for (std::size_t i = 0; i < s.concurrency; ++i) {
    auto client = open_model_client(s.model_url, s.api_key_env, s.timeout);
    if (!client) {
      complain("eval", client.error());
      return exit_usage;
    }
    in_flight.push_back(client->get());
    clients.push_back(std::move(*client));
  }
  // Read only: a SQLite file is neither created nor written, a PostgreSQL table not migrated.
  auto store = open_store(s.dlq, /*read_only=*/true);
  if (!store) {
    complain("eval", store.error().message);
    return store.error().usage ? exit_usage : exit_sink;
  }
  auto read = read_letters(**store, s.selection);
  if (!read) {
    complain("eval", read.error());
    return exit_sink;
  }
  auto cases = cases_of(s, std::move(read->letters), *prompt);
  if (!cases) {
    complain("eval", cases.error());
    return exit_usage;
  }
  progress_line progress("eval", !s.json, STDERR_FILENO, "inputs");
  progress_counts counts{.done = 0, .selected = cases->size(), .tokens = 0, .token_budget = std::nullopt};
  if (s.options.token_budget > 0) counts.token_budget = s.options.token_budget;
  progress.update(counts);
  const auto results = candidate->run(*cases, in_flight, [&](const eval_result& r) {
    ++counts.done;
    *counts.tokens += r.usage.total();
    progress.update(counts);
  });
  progress.finish();
  const eval_summary summary = summarize(results);
  const auto gates = gates_of(s, summary);
  const run_facts facts{s, *read, summary, gates};
  if (const auto failed = write_outputs(facts, results)) return *failed;
  return exit_status(facts);
}

}  // namespace llmdlq::cli
