// SPDX-License-Identifier: MIT
// `llmdlq show`: one dead letter as an operator reads it.
#include <unistd.h>

#include <iostream>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/detail/counted.hpp>
#include <llmdlq/detail/store/record_check.hpp>
#include <llmdlq/envelope.hpp>
#include <llmdlq/moderation_query.hpp>

#include "cli.hpp"
#include "line_writer.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "record_view.hpp"
#include "store_spec.hpp"
#include "unreadable.hpp"

namespace llmdlq::cli {
namespace {

constexpr option options[] = {
    {"--json", option_kind::flag, "", "one object: the record, its envelope, the error spans and the operator log"},
};
constexpr operand operands[] = {{"STORE", "give the DLQ and the dlq_id to show"},
                                {"DLQ_ID", "give the DLQ and the dlq_id to show"}};

const command_syntax syntax{
    .command = "show",
    .operands = operands,
    .groups = {group("", options)},
    .about = "  Shows one dead letter: its summary, the raw response with the places its failure points at\n"
             "  marked (>>[n] ... << when not on a terminal), the errors by JSON Pointer, the attempt\n"
             "  history, the operator log and what was redacted. Sealed originals stay sealed.\n",
    .stores = store_forms(),
    .closing = "Exit 0, 2 for usage errors, 3 when the store fails, 5 when there is no such record, 6 when\n"
               "the record does not read back (an unknown status, a time or an envelope that is not one: what\n"
               "reads is shown, and stderr says what does not).\n",
};

boost::json::value parsed_or_text(const std::string& text) {
  boost::system::error_code ec;
  auto value = boost::json::parse(text, ec);
  if (ec) return boost::json::value(text);
  return value;
}

std::string heading(std::string_view title, bool colour) {
  return colour ? fmt::format("\n\x1b[1m{}\x1b[0m\n", title) : fmt::format("\n{}\n", title);
}

void print_field(std::string_view name, std::string_view value) {
  if (!value.empty()) std::cout << fmt::format("  {:<15} {}\n", name, value);
}

// The stored raw response with the failing spans marked, or what stands for it.
void print_raw_response(const envelope& e, bool colour) {
  std::cout << heading("raw response", colour);
  const auto& raw = e.raw_response;
  if (!raw.text) {
    std::cout << fmt::format("  (not stored; {}, sha256 {})\n", detail::counted(raw.length, "byte"), raw.sha256);
  } else if (raw.base64) {
    std::cout << fmt::format("  (not UTF-8: {} in base64)\n  {}\n", detail::counted(raw.length, "byte"), *raw.text);
  } else {
    const auto spans = error_spans(e);
    std::cout << mark_spans(*raw.text, spans, colour) << '\n';
    if (raw.cut) {
      std::cout << fmt::format("  (cut: {} of {} stored)\n", raw.text->size(), detail::counted(raw.length, "byte"));
    }
    for (std::size_t i = 0; i < spans.size(); ++i) {
      std::cout << fmt::format("  [{}] bytes {}..{}: {}\n", i + 1, spans[i].begin, spans[i].end, spans[i].label);
    }
  }
  if (raw.sealed) {
    std::cout << fmt::format("  the original is sealed with key {} ({}); it stays sealed here\n", raw.sealed->key_id,
                             detail::counted(raw.sealed->length, "byte"));
  }
}

void print_errors(const envelope& e, bool colour) {
  if (e.failure.errors.empty() && !e.failure.syntax && !e.failure.cancelled_at) return;
  std::cout << heading("errors", colour);
  if (const auto& at = e.failure.syntax) {
    std::cout << fmt::format("  syntax at line {}, column {} (byte {})\n", at->line, at->column, at->offset);
  }
  if (const auto& cut = e.failure.cancelled_at) {
    std::cout << fmt::format("  streamed answer closed: dead at byte {}{}\n", cut->offset,
                             cut->tokens ? ", after " + detail::counted(*cut->tokens, "token") : std::string());
  }
  for (const auto& error : e.failure.errors) {
    std::cout << fmt::format("  {:<24} {:<12} {}\n", error.instance_path.empty() ? "/" : error.instance_path,
                             error.keyword, error.message);
  }
}

void print_attempts(const envelope& e, bool colour) {
  std::cout << heading("attempts: " + attempts_text(e.attempts), colour);
  if (e.attempts.history.empty()) std::cout << "  (no recovery attempt yet)\n";
  for (const auto& a : e.attempts.history) {
    const auto not_counted = not_counted_because(a);
    std::cout << fmt::format("  {:<24} {:<16} {:<12} tokens {}{}{}\n", a.at ? format_rfc3339(*a.at) : "-",
                             a.strategy, a.outcome, a.tokens, a.model.empty() ? "" : ", model " + a.model,
                             not_counted.empty() ? "" : fmt::format(" (not counted: {})", not_counted));
  }
}

void print_redactions(const envelope& e, bool colour) {
  if (e.redactions.empty()) return;
  std::cout << heading("redacted", colour);
  for (const auto& red : e.redactions) {
    std::cout << fmt::format("  {:<16} {:<14} {:<6} x{}{}\n", red.field, red.kind, red.action, red.count,
                             red.path.empty() ? "" : " at " + red.path);
  }
}

void print_envelope(const envelope& e, bool colour) {
  print_field("message", e.failure.message);
  print_field("idempotency key", e.idempotency_key);
  print_field("model", model_text(e.model));
  print_field("schema version", e.versions.schema);
  print_field("prompt version", e.versions.prompt);
  print_field("model version", e.versions.model);
  if (const auto& call = e.tool_call) {
    // The tool's name and the call's id are the model's and the provider's words: shown escaped.
    print_field("tool call", fmt::format("{}{}{}", detail::store::printable(call->name, 128),
                                         call->id.empty() ? "" : ", id " + detail::store::printable(call->id, 128),
                                         call->index ? fmt::format(", call {} of the reply", *call->index) : ""));
  }
  if (e.expires_at) print_field("expires", format_rfc3339(*e.expires_at));
  print_raw_response(e, colour);
  print_errors(e, colour);
  print_attempts(e, colour);
  print_redactions(e, colour);
}

void print_operator_log(const moderation_record& r, bool colour) {
  std::cout << heading("operator log", colour);
  const auto log = parsed_or_text(r.operator_log);
  if (!log.is_array() || log.as_array().empty()) std::cout << "  (no action yet)\n";
  if (!log.is_array()) return;
  for (const auto& entry : log.as_array()) {
    if (!entry.is_object()) continue;
    const auto& o = entry.as_object();
    const auto text = [&](std::string_view key) -> std::string {
      const auto* v = o.if_contains(key);
      return v && v->is_string() ? std::string(v->as_string()) : std::string();
    };
    std::cout << fmt::format("  {:<24} {:<12} {:<8} {} -> {}{}\n", text("at"), text("operator"), text("action"),
                             text("from"), text("to"), text("note").empty() ? "" : ": " + text("note"));
  }
}

void print_record(const moderation_record& r, const std::optional<envelope>& e, bool colour) {
  std::cout << fmt::format("dead letter {}\n", printable_id(r.dlq_id));
  if (!r.readable()) print_field("unreadable", r.defect_reason);
  if (r.defect != record_defect::status) print_field("status", to_string(r.status));
  print_field("claimed by", r.claimed_by);
  print_field("created", r.created_at);
  print_field("updated", r.updated_at);
  print_field("category", r.category);
  print_field("triage", r.triage);
  print_field("failure code", r.failure_code);
  if (e) {
    print_envelope(*e, colour);
  } else {
    std::cout << "  (the stored envelope does not read back; as stored:)\n  "
              << detail::store::printable(r.envelope_json, 4096) << '\n';
  }
  print_operator_log(r, colour);
  if (r.resolution) std::cout << heading("resolution", colour) << *r.resolution << '\n';
}

}  // namespace

int show_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const bool json = parsed->has("--json");
  const std::string_view dlq_id = parsed->operand(1);
  auto spec = parse_store_spec(parsed->operand(0));
  if (!spec) return usage_error(syntax, spec.error());
  auto store = open_store(*spec, /*read_only=*/true);
  if (!store) {
    complain("show", store.error().message);
    return store.error().usage ? exit_usage : exit_sink;
  }
  auto found = (*store)->get(dlq_id);
  if (!found) {
    complain("show", found.error().message);
    return exit_sink;
  }
  if (!*found) {
    complain("show", fmt::format("no dead letter {} in {}", dlq_id, display_name(*spec)));
    return exit_not_found;
  }
  const moderation_record& r = **found;
  std::optional<envelope> e;
  if (r.defect != record_defect::envelope) {
    if (auto parsed = parse_envelope(r.envelope_json)) e = std::move(*parsed);
  }
  // What reads is shown all the same; the exit code and stderr say what does not.
  if (!r.readable()) {
    complain("show", fmt::format("{} does not read back: {}", printable_id(r.dlq_id), r.defect_reason));
  }
  const int code = r.readable() ? exit_ok : exit_unreadable;
  if (json) {
    auto out = record_summary_json(r, system_now());
    out.emplace("operator_log", parsed_or_text(r.operator_log));
    if (r.resolution) out.emplace("resolution", parsed_or_text(*r.resolution));
    out.emplace("envelope", parsed_or_text(r.envelope_json));
    boost::json::array spans;
    if (e) {
      for (const auto& s : error_spans(*e)) {
        spans.push_back(boost::json::object{{"begin", s.begin}, {"end", s.end}, {"label", s.label}, {"pointer", s.pointer}});
      }
    }
    out.emplace("error_spans", std::move(spans));
    std::cout << json_text(out) << '\n';
    return code;
  }
  print_record(r, e, colour_for(STDOUT_FILENO));
  return code;
}

}  // namespace llmdlq::cli
