// SPDX-License-Identifier: MIT
// The stages process_response runs, in the taxonomy's precedence: each reads
// the response as the stages before it left it and returns the failure it
// finds, or nothing. judging_stages lists them; the first failure found
// names the envelope's category.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "llmdlq/coerce.hpp"
#include "llmdlq/provider_schema.hpp"
#include "llmdlq/config.hpp"
#include "llmdlq/detail/schema/forward_evaluator.hpp"
#include "llmdlq/detail/schema/schema_access.hpp"
#include "llmdlq/detail/schema/uri.hpp"
#include "llmdlq/detail/json/text_scan.hpp"
#include "llmdlq/detail/json/utf8_check.hpp"
#include "llmdlq/process.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

// The values a `*`-extended JSON Pointer selects.
template <class F>
void for_each_at_pointer(simdjson::dom::element root, std::string_view pointer, std::string& path, F&& f) {
  if (pointer.empty()) return f(root, std::string_view(path));
  if (pointer.front() != '/') return;
  const std::size_t next = pointer.find('/', 1);
  const std::string_view token = pointer.substr(1, next == std::string_view::npos ? std::string_view::npos : next - 1);
  const std::string_view rest = next == std::string_view::npos ? std::string_view() : pointer.substr(next);
  const std::size_t mark = path.size();
  if (token == "*") {
    if (root.is_array()) {
      std::size_t i = 0;
      const simdjson::dom::array array = root.get_array().value_unsafe();
      for (const auto element : array) {
        append_pointer_token(path, i++);
        for_each_at_pointer(element, rest, path, f);
        path.resize(mark);
      }
    } else if (root.is_object()) {
      const simdjson::dom::object object = root.get_object().value_unsafe();
      for (const auto member : object) {
        append_pointer_token(path, member.key);
        for_each_at_pointer(member.value, rest, path, f);
        path.resize(mark);
      }
    }
    return;
  }
  std::string json_pointer("/");
  json_pointer.append(token);
  const auto child = root.at_pointer(json_pointer);
  if (child.error()) return;
  path.append("/").append(token);
  for_each_at_pointer(child.value_unsafe(), rest, path, f);
  path.resize(mark);
}

inline std::vector<validation_error> run_checks(const std::vector<content_check>& checks, simdjson::dom::element root,
                                                timestamp now) {
  std::vector<validation_error> errors;
  for (const auto& check : checks) {
    if (!check.check) continue;
    std::string path;
    for_each_at_pointer(root, check.pointer, path, [&](simdjson::dom::element value, std::string_view at) {
      if (auto message = check.check(value, now)) {
        errors.push_back({std::string(at), "x-dlq-rule/" + check.name, "x-dlq-rule", std::move(*message)});
      }
    });
  }
  return errors;
}

// format and content rules make a failure semantic; anything else is structural.
inline bool is_semantic(const validation_error& e) noexcept {
  return e.keyword == "format" || e.keyword == "x-dlq-rule";
}

inline std::string summarise(std::string_view what, const std::vector<validation_error>& errors) {
  if (errors.empty()) return fmt::format("{}s (max_errors is 0: none kept)", what);
  const auto& first = errors.front();
  return fmt::format("{} {}{}: first at {}: {}", errors.size(), what, errors.size() == 1 ? "" : "s",
                     first.instance_path.empty() ? "/" : first.instance_path, first.message);
}

inline json_parser& thread_parser(const parse_options& limits) {
  thread_local std::optional<json_parser> parser;
  if (!parser || parser->options().max_size != limits.max_size || parser->options().max_depth != limits.max_depth) {
    parser.emplace(limits);
  }
  return *parser;
}

// Only the escapes \u and \/ can spell a marker's characters (`\u003c`,
// `<\/tool_call>`): a JSON text without them decodes to what the guard read.
inline bool has_spelling_escape(std::string_view json) noexcept {
  for (auto at = json.find('\\'); at != std::string_view::npos && at + 1 < json.size(); at = json.find('\\', at + 2)) {
    if (json[at + 1] == 'u' || json[at + 1] == '/') return true;
  }
  return false;
}

// An injection marker in a decoded string or key: what a reader downstream sees.
inline std::optional<guard_finding> find_injection_in_values(simdjson::dom::element root,
                                                             const guard_options& options) {
  auto decoded = [](guard_finding found, std::string_view where) {
    found.message += fmt::format(" of a decoded {} (the response spells it with JSON escapes)", where);
    return found;
  };
  std::vector<simdjson::dom::element> todo{root};
  while (!todo.empty()) {
    const simdjson::dom::element value = todo.back();
    todo.pop_back();
    if (value.is_string()) {
      if (auto found = find_injection(value.get_string().value_unsafe(), options)) return decoded(*found, "string");
    } else if (value.is_array()) {
      const simdjson::dom::array array = value.get_array().value_unsafe();  // a copy: the result is a temporary
      for (const auto item : array) todo.push_back(item);
    } else if (value.is_object()) {
      const simdjson::dom::object object = value.get_object().value_unsafe();
      for (const auto member : object) {
        if (auto found = find_injection(member.key, options)) return decoded(*found, "key");
        todo.push_back(member.value);
      }
    }
  }
  return std::nullopt;
}

// Whitespace and markdown fence markers only (a fenced block with nothing in it).
inline bool is_empty_answer(std::string_view raw) noexcept {
  for (std::size_t i = skip_blanks(raw, 0); i < raw.size(); i = skip_blanks(raw, i + 1)) {
    if (raw.compare(i, 3, "```") != 0) return false;
    i = raw.find('\n', i);  // the fence and its language word
    if (i == std::string_view::npos) return true;
  }
  return true;
}

// One response being judged: what the stages read, and what each leaves for
// the next (the parsed document, the repaired text and its repairs).
struct judgement {
  judgement(std::string_view raw, const llmdlq::schema& schema, const request_context& context,
            const process_config& config,
            const std::function<std::optional<std::string>(const json_document&)>& on_accept)
      : raw(raw),
        schema(schema),
        context(context),
        options(config.judging),
        on_accept(on_accept),
        now(config.envelope.clock ? config.envelope.clock() : system_now()),
        parser(thread_parser(options.limits)),
        // The common case, a response that is valid JSON the schema accepts,
        // is found by validating while parsing; the document is then parsed
        // only if a later stage reads it. A host's conversion always reads it.
        as_sent(on_accept ? forward_verdict::undecided
                          : judge_text(schema_access::of(schema), raw, false, now, options.limits)) {
    if (as_sent != forward_verdict::valid) {
      doc_ = parser.parse(raw);
      if (!*doc_) raw_error = doc_->error();
    }
    if (!raw_error) raw_utf8_end_ = raw.size();  // JSON is UTF-8
  }

  std::string_view raw;
  const llmdlq::schema& schema;
  const request_context& context;
  const judging_options& options;
  const std::function<std::optional<std::string>(const json_document&)>& on_accept;
  timestamp now;
  json_parser& parser;
  forward_verdict as_sent;                ///< the forward pass's verdict on the raw text
  std::optional<syntax_error> raw_error;  ///< why the raw text is not strict JSON
  std::string repaired_text;
  std::vector<repair_action> repairs;
  bool repair_tried = false;

  /// Where the raw text stops being UTF-8 (its size: it is all UTF-8), read
  /// once for the guard, repair and the envelope.
  std::size_t raw_utf8_end() {
    if (!raw_utf8_end_) raw_utf8_end_ = first_invalid_utf8(raw);
    return *raw_utf8_end_;
  }
  /// The text the document was parsed from: the raw one until something repaired it.
  [[nodiscard]] std::string_view text() const noexcept {
    return repairs.empty() ? raw : std::string_view(repaired_text);
  }
  /// Whether local repair ran: the envelope's triage depends on it.
  [[nodiscard]] bool repaired_locally() const noexcept { return repair_tried || !repairs.empty(); }
  /// Whether the schema accepts text()'s document, which must be JSON: the
  /// forward pass's verdict while the text is the raw one, else one walk
  /// of its document, kept until the text changes.
  bool schema_accepts(const validate_options& rules) {
    if (repairs.empty() && as_sent != forward_verdict::undecided) return as_sent == forward_verdict::valid;
    if (!accepts_) accepts_ = schema.is_valid(*doc(), rules);
    return *accepts_;
  }
  /// The document of text(), parsed on first use; an error when it is not JSON.
  expected<json_document, syntax_error>& doc() {
    if (!doc_) doc_ = parser.parse(text());
    return *doc_;
  }
  /// Takes the repaired text; the document it had is gone.
  void take_repairs(std::string json, std::vector<repair_action> actions) {
    repaired_text = std::move(json);
    repairs.insert(repairs.end(), std::make_move_iterator(actions.begin()), std::make_move_iterator(actions.end()));
    doc_.reset();
    accepts_.reset();
  }

 private:
  std::optional<expected<json_document, syntax_error>> doc_;
  std::optional<bool> accepts_;
  std::optional<std::size_t> raw_utf8_end_;
};

using stage_result = std::optional<failure_report>;

inline stage_result fail(failure_category category, std::string message, std::optional<text_location> syntax = {},
                         std::vector<validation_error> errors = {}) {
  return failure_report{category, std::move(message), std::move(errors), syntax, false};
}

inline text_location location_of(const syntax_error& e) noexcept { return {e.offset, e.line, e.column}; }

// The one way a text that ends inside its JSON value is reported.
inline stage_result still_open(const syntax_error& at_end, const syntax_error& located_by) {
  return fail(failure_category::truncated, "the response ends with " + at_end.unclosed + " still open",
              location_of(located_by));
}

inline repair_options repair_limits(const parse_options& limits) {
  repair_options options;
  options.max_bytes = limits.max_size;
  options.max_depth = limits.max_depth;
  return options;
}

// poison: over the parser's limits, binary bytes, or an injection marker in
// the bytes as they came.
inline stage_result screen_bytes(judgement& j) {
  if (j.raw_error) {
    const syntax_error& error = *j.raw_error;
    if (error.code == json_errc::too_large || error.code == json_errc::too_deep) {
      return fail(failure_category::poison, error.message, location_of(error));
    }
    // Parsed JSON is valid UTF-8 without raw control bytes: only text that is not can be binary.
    if (auto binary = find_binary(j.raw, j.raw_utf8_end())) return fail(failure_category::poison, binary->message);
  }
  if (auto injection = find_injection(j.raw, j.options.guard))
    return fail(failure_category::poison, injection->message);
  return {};
}

inline stage_result refused_by_api(const judgement& j) {
  if (!j.context.refusal) return {};
  return fail(failure_category::refusal, "the API reported a refusal: " + *j.context.refusal);
}

// refusal, empty, truncated: what a text that is not JSON says of itself,
// and what the API said of it, before anything is repaired.
inline stage_result screen_prose(judgement& j) {
  if (!j.raw_error) return {};  // JSON is an answer: the API's word on it is heard in screen_document
  if (auto refused = refused_by_api(j)) return refused;
  if (auto refusal = find_refusal(j.raw, j.options.guard)) return fail(failure_category::refusal, refusal->message);
  if (is_empty_answer(j.raw)) return fail(failure_category::empty, "the response is empty");
  if (j.context.finish_reason == "length") {
    return fail(failure_category::truncated, "the model stopped at its token limit (finish_reason \"length\")");
  }
  return {};
}

// truncated, syntax: strict reading, where a text that is not JSON is cut
// off when a value in it is, and broken otherwise.
inline stage_result reject_strictly(const judgement& j) {
  const syntax_error& error = *j.raw_error;
  if (error.code == json_errc::unexpected_end) return still_open(error, error);
  if (auto cut = find_truncated_value(j.raw, repair_limits(j.options.limits))) {
    return fail(failure_category::truncated,
                fmt::format("the JSON value at offset {} is cut off with {} still open", cut->begin, cut->unclosed),
                location_of(error));
  }
  return fail(failure_category::syntax, "not JSON: " + error.message, location_of(error));
}

// Among several values in a text, the one the schema accepts is the answer.
inline expected<repair_result, repair_error> locate_and_repair(judgement& j) {
  struct schema_fit {
    json_parser& parser;
    const llmdlq::schema& schema;
    validate_options rules;
  } fit{j.parser, j.schema, {}};
  fit.rules.now = j.now;
  auto fits = [](void* context, std::string_view json) {
    auto& f = *static_cast<schema_fit*>(context);
    auto candidate = f.parser.parse(json);
    return candidate && f.schema.is_valid(*candidate, f.rules);
  };
  return detail::find_and_repair(j.raw, repair_limits(j.options.limits), fits, &fit, nullptr, j.raw_utf8_end());
}

// truncated, syntax: the JSON value in the text, located and repaired within
// the tiers the policy accepts; on success the document is the repaired one.
inline stage_result repair_locally(judgement& j) {
  const syntax_error& error = *j.raw_error;
  // A bare value the strict parser read to the end of the text, still open:
  // whatever repair made of it, it would be cut off.
  if (error.code == json_errc::unexpected_end) {
    const auto first = j.raw.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && (j.raw[first] == '{' || j.raw[first] == '[')) {
      return still_open(error, error);
    }
  }
  j.repair_tried = true;
  auto repaired = locate_and_repair(j);
  if (repaired && repaired->truncated) {
    return fail(failure_category::truncated, "the response is cut off inside its JSON value", location_of(error));
  }
  if (!repaired) {
    if (error.code == json_errc::unexpected_end || repaired.error().truncated) return still_open(error, error);
    return fail(failure_category::syntax, "not JSON: " + error.message + " (" + repaired.error().message + ")",
                location_of(error));
  }
  const auto refused = std::find_if(repaired->actions.begin(), repaired->actions.end(),
                                    [&](const auto& a) { return !j.options.accept_repairs.allows(a.tier); });
  if (refused != repaired->actions.end()) {
    return fail(failure_category::syntax,
                fmt::format("not JSON: it needs a {} repair ({}), which policy does not accept",
                            to_string(refused->tier), refused->code),
                location_of(error));
  }
  if (repaired->actions.empty()) {
    // Nothing to take out of the text: it stays as broken as it was.
    if (error.code == json_errc::unexpected_end) return still_open(error, error);
    return fail(failure_category::syntax, "not JSON: " + error.message, location_of(error));
  }
  j.take_repairs(std::move(repaired->json), std::move(repaired->actions));
  if (const auto& doc = j.doc(); !doc) {
    if (doc.error().code == json_errc::unexpected_end) return still_open(doc.error(), error);
    return fail(failure_category::syntax, "not JSON after local repair: " + doc.error().message, location_of(error));
  }
  return {};
}

// truncated, syntax: a text that is not strict JSON, read as the repair mode says.
inline stage_result extract_json(judgement& j) {
  if (!j.raw_error) return {};
  return j.options.repair == repair_mode::off ? reject_strictly(j) : repair_locally(j);
}

// poison, refusal, truncated: an injection marker that a repair or JSON
// escapes spell, then the API's word on the document.
inline stage_result screen_document(judgement& j) {
  if (j.options.guard.detect_injection) {
    std::optional<guard_finding> injection;
    if (!j.repairs.empty()) injection = find_injection(j.repaired_text, j.options.guard);  // a repair can decode one
    if (!injection && has_spelling_escape(j.text()))
      injection = find_injection_in_values(j.doc()->root(), j.options.guard);
    if (injection) return fail(failure_category::poison, injection->message);
  }
  if (auto refused = refused_by_api(j)) return refused;
  if (j.context.finish_reason == "length") {
    return fail(failure_category::truncated,
                "the model stopped at its token limit (finish_reason \"length\"): the document may be incomplete");
  }
  return {};
}

inline validate_options validation_rules(const judgement& j) {
  validate_options rules;
  rules.now = j.now;
  rules.max_errors = j.options.max_errors;
  rules.find_structural = true;  // the category comes from the whole verdict, not the capped list
  return rules;
}

// A null the provider's schema forced where the user's forbids it (an
// optional property the provider made required and nullable) stands for a
// property the model left out: removed, as a lossless repair.
inline stage_result map_nulls_back(judgement& j) {
  if (!j.options.forced_nulls || j.schema_accepts(validation_rules(j))) return {};
  auto mapped = map_forced_nulls(j.text(), *j.options.forced_nulls);
  if (mapped.actions.empty()) return {};
  j.take_repairs(std::move(mapped.json), std::move(mapped.actions));
  return {};
}

// schema, syntax: with coercion on, a document the schema rejects is
// coerced toward it (quoted numbers, lone values, enum spellings).
inline stage_result coerce_to_schema(judgement& j) {
  if (!j.options.coerce || j.schema_accepts(validation_rules(j))) return {};
  coerce_options coercion;
  coercion.now = j.now;
  auto coerced = coerce(j.text(), j.schema, coercion);
  if (!coerced) {
    return fail(failure_category::schema, "schema error at " + coerced.error().path + ": " + coerced.error().message);
  }
  if (coerced->actions.empty()) return {};
  j.take_repairs(std::move(coerced->json), std::move(coerced->actions));
  if (const auto& doc = j.doc(); !doc)
    return fail(failure_category::syntax, "not JSON after coercion: " + doc.error().message);
  return {};
}

// schema, semantic: the schema's verdict; format assertions alone make it semantic.
inline stage_result validate_against_schema(judgement& j) {
  const validate_options rules = validation_rules(j);
  if (j.schema_accepts(rules)) return {};
  auto errors = j.schema.validate(*j.doc(), rules);
  const bool structural = std::any_of(errors.begin(), errors.end(), [](const auto& e) { return !is_semantic(e); });
  std::string message = summarise(structural ? "schema error" : "content error", errors);
  return fail(structural ? failure_category::schema : failure_category::semantic, std::move(message), std::nullopt,
              std::move(errors));
}

// semantic: the host's content rules.
inline stage_result apply_content_rules(judgement& j) {
  if (j.options.checks.empty()) return {};
  auto errors = run_checks(j.options.checks, j.doc()->root(), j.now);
  if (errors.empty()) return {};
  std::string message = summarise("content error", errors);
  return fail(failure_category::semantic, std::move(message), std::nullopt, std::move(errors));
}

// low_confidence: the score against the threshold, when both are given.
inline stage_result check_confidence(judgement& j) {
  const auto& threshold = j.options.min_confidence;
  const auto& score = j.context.confidence;
  if (!threshold || !score) return {};
  if (!std::isfinite(*score))
    return fail(failure_category::low_confidence, "the confidence score is not a finite number");
  if (std::isnan(*threshold)) {
    return fail(failure_category::low_confidence,
                "the confidence threshold (min_confidence) is not a number: no score can pass it");
  }
  if (*score < *threshold) {
    return fail(failure_category::low_confidence,
                fmt::format("confidence {} is under the threshold {}", *score, *threshold));
  }
  return {};
}

// schema: the host's conversion of the accepted document (typed_pipeline).
inline stage_result convert_for_host(judgement& j) {
  if (!j.on_accept) return {};
  if (auto problem = j.on_accept(*j.doc()))
    return fail(failure_category::schema, "the document does not convert: " + *problem);
  return {};
}

/// The categories of `list` as a set: bit c for failure_category c.
constexpr std::uint16_t category_set(std::initializer_list<failure_category> list) noexcept {
  std::uint16_t set = 0;
  for (const failure_category c : list) set = static_cast<std::uint16_t>(set | (1u << static_cast<unsigned>(c)));
  return set;
}

struct judging_stage {
  std::string_view name;
  stage_result (*run)(judgement&);
  std::uint16_t finds;  ///< the categories it can report (category_set)
};

// The precedence: poison outranks everything, then refusal, empty,
// truncated, syntax, schema, semantic and low_confidence; a category comes
// back later in the list only where an earlier stage could not see it (a
// marker JSON escapes spell, a document that converts to nothing).
inline constexpr judging_stage judging_stages[] = {
    {"screen_bytes", screen_bytes, category_set({failure_category::poison})},
    {"screen_prose", screen_prose,
     category_set({failure_category::refusal, failure_category::empty, failure_category::truncated})},
    {"extract_json", extract_json, category_set({failure_category::truncated, failure_category::syntax})},
    {"screen_document", screen_document,
     category_set({failure_category::poison, failure_category::refusal, failure_category::truncated})},
    {"map_nulls_back", map_nulls_back, category_set({})},
    {"coerce_to_schema", coerce_to_schema, category_set({failure_category::schema, failure_category::syntax})},
    {"validate_against_schema", validate_against_schema,
     category_set({failure_category::schema, failure_category::semantic})},
    {"apply_content_rules", apply_content_rules, category_set({failure_category::semantic})},
    {"check_confidence", check_confidence, category_set({failure_category::low_confidence})},
    {"convert_for_host", convert_for_host, category_set({failure_category::schema})},
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
