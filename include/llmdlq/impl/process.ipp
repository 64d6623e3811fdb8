// SPDX-License-Identifier: MIT
// Definitions for process.hpp: the guard, parse, repair, schema, rules and
// confidence steps in the taxonomy's precedence order, and envelope building.
#pragma once

#include <algorithm>
#include <cmath>

#include <boost/json/parse.hpp>
#include <fmt/format.h>

#include "llmdlq/coerce.hpp"
#include "llmdlq/config.hpp"
#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/detail/uri.hpp"
#include "llmdlq/detail/utf8.hpp"
#include "llmdlq/dlq_id.hpp"
#include "llmdlq/process.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE boost::json::value accepted::value() const {
  parse_options limits;
  limits.max_size = json.size();
  limits.max_depth = 1u << 16;  // it was parsed once already, under the caller's limits
  auto parsed = parse_value(json, limits);
  return parsed ? *std::move(parsed) : boost::json::value();
}

namespace detail {

// Host-supplied strings go into JSON: any invalid UTF-8 becomes U+FFFD.
inline std::string clean(std::string text) {
  make_valid_utf8(text);
  return text;
}

inline void clean_json(boost::json::value& v) {
  if (auto* s = v.if_string()) {
    std::string text(*s);
    if (make_valid_utf8(text)) *s = text;
  } else if (auto* a = v.if_array()) {
    for (auto& item : *a) clean_json(item);
  } else if (auto* o = v.if_object()) {
    boost::json::object fixed;
    for (auto& [key, item] : *o) {
      std::string name(key);
      make_valid_utf8(name);
      clean_json(item);
      fixed.emplace(name, std::move(item));
    }
    *o = std::move(fixed);
  }
}

// A host's SHA-256 in the envelope's form (64 lowercase hex digits), or nothing.
inline std::string sha256_or_nothing(std::string text) {
  for (char& c : text) c = c >= 'A' && c <= 'F' ? static_cast<char>(c + 32) : c;
  const bool hex = text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
  return hex ? text : std::string();
}

// A failure code in the envelope's alphabet ([a-z0-9_.-]): upper case
// lowered, anything else an underscore; the default code when nothing is left.
inline std::string code_or_default(std::string code, failure_category category) {
  for (char& c : code) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c + 32);
    } else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-')) {
      c = '_';
    }
  }
  return code.empty() ? default_failure_code(category, "") : code;
}

// A count the envelope can hold (never negative), or nothing.
template <class T>
std::optional<T> non_negative(std::optional<T> v) noexcept {
  return v && *v >= 0 ? v : std::nullopt;
}

// A number JSON can carry, or nothing.
inline std::optional<double> finite(std::optional<double> v) noexcept {
  return v && std::isfinite(*v) ? v : std::nullopt;
}

inline envelope build_envelope(timestamp now, failure_category category, std::string message, std::string_view raw,
                               const request_context& context, const process_options& options,
                               std::string_view schema_fingerprint, std::span<const pii_path> pii_paths,
                               std::vector<validation_error> errors, std::optional<text_location> syntax,
                               bool repaired_locally) {
  envelope e;
  e.created_at = now;
  e.raw_response = captured_text::of(raw);
  if (!context.original_input.empty()) e.original_input = captured_text::of(context.original_input);
  e.attempts.count = std::max<std::uint32_t>(context.attempt, 1);
  // One failure, one id: derived from the key and the attempt, never drawn.
  if (context.idempotency_key.empty()) {
    e.idempotency_key = derive_idempotency_key(
        schema_fingerprint, e.raw_response.sha256,
        e.original_input ? std::string_view(e.original_input->sha256) : std::string_view(detail::sha256_hex("")));
    e.idempotency_key_derived = true;
  } else {
    e.idempotency_key = clean(context.idempotency_key);
  }
  e.dlq_id = derive_dlq_id(context.idempotency_key.empty() ? std::string_view(e.idempotency_key)
                                                           : std::string_view(context.idempotency_key),
                           e.attempts.count, context.received_at);
  e.record_id = clean(context.record_id);
  e.correlation_id = clean(context.correlation_id);
  e.trace_id = clean(context.trace_id);
  e.source_ref = {clean(context.source_ref.uri), clean(context.source_ref.sha256)};
  e.prompt = {clean(context.prompt.template_id), clean(context.prompt.version),
              sha256_or_nothing(context.prompt.sha256)};
  if (!context.rendered_prompt.empty()) e.prompt.sha256 = detail::sha256_hex(context.rendered_prompt);
  e.model = context.model;
  e.model.temperature = finite(e.model.temperature);
  for (std::string* field : {&e.model.provider, &e.model.name, &e.model.version}) make_valid_utf8(*field);
  e.versions = context.versions;
  for (std::string* field : {&e.versions.schema, &e.versions.prompt, &e.versions.model, &e.versions.ocr,
                             &e.versions.pipeline}) {
    make_valid_utf8(*field);
  }
  e.failure.category = category;
  e.failure.code = code_or_default(options.failure_code ? options.failure_code(category)
                                                        : default_failure_code(category, options.failure_code_prefix),
                                   category);
  e.failure.message = clean(std::move(message));
  if (errors.size() > options.max_errors) {
    // The last error may be the structural one found past the cap (see
    // validate_options::find_structural): it stays, in the last kept place.
    if (options.max_errors > 0) errors[options.max_errors - 1] = std::move(errors.back());
    errors.resize(options.max_errors);
  }
  e.failure.errors = std::move(errors);
  e.failure.syntax = syntax;
  e.triage = triage_for(category, repaired_locally);
  e.confidence = {finite(context.confidence), finite(options.min_confidence)};
  e.attempts.max = options.max_attempts;
  if (e.attempts.count == 1) e.attempts.first_failure_at = now;
  e.attempts.last_failure_at = now;
  e.origin = context.origin;
  e.origin.partition = non_negative(e.origin.partition);  // librdkafka's "unknown" is -1, its invalid offset -1001
  e.origin.offset = non_negative(e.origin.offset);
  for (std::string* field : {&e.origin.service, &e.origin.worker, &e.origin.topic}) make_valid_utf8(*field);
  e.expires_at = options.retention.expires_at(e);  // after the triage and attempts it depends on
  e.extensions = context.extensions;
  if (!e.extensions.empty()) {
    boost::json::value extensions(std::move(e.extensions));
    clean_json(extensions);
    e.extensions = std::move(extensions.as_object());
  }
  options.redaction.redact(e, pii_paths);
  if (options.cipher) {
    detail::seal_originals(e, raw, context.original_input, *options.cipher, options.max_envelope_bytes);
  } else {
    fit_envelope(e, options.max_envelope_bytes);
  }
  return e;
}

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

inline std::vector<validation_error> run_checks(const std::vector<content_check>& checks,
                                                simdjson::dom::element root, timestamp now) {
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
  if (!parser || parser->options().max_size != limits.max_size ||
      parser->options().max_depth != limits.max_depth) {
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

inline bool is_blank_text(std::string_view raw) noexcept {
  return std::all_of(raw.begin(), raw.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

// Whitespace and markdown fence markers only (a fenced block with nothing in it).
inline bool is_empty_answer(std::string_view raw) noexcept {
  std::size_t i = 0;
  while (i < raw.size()) {
    if (raw[i] == '`' && raw.compare(i, 3, "```") == 0) {
      i = raw.find('\n', i);  // the fence and its language word
      if (i == std::string_view::npos) return true;
    } else if (raw[i] != ' ' && raw[i] != '\t' && raw[i] != '\n' && raw[i] != '\r') {
      return false;
    }
    ++i;
  }
  return true;
}

// build() is the envelope of a failure; counted in options.metrics, with
// the time it took, when the host gave one.
template <class Build>
envelope counted_envelope(const process_options& options, Build&& build) {
  if (!options.metrics) return build();
  const auto start = std::chrono::steady_clock::now();
  envelope e = build();
  options.metrics->count_dead_letter(e, std::chrono::steady_clock::now() - start);
  return e;
}

LLMDLQ_INLINE expected<accepted, envelope> process_response(
    std::string_view raw, const schema& schema, const request_context& context, const process_options& options,
    const std::function<std::optional<std::string>(const json_document&)>& on_accept) {
  const timestamp now = options.clock ? options.clock() : system_now();
  auto reject = [&](failure_category category, std::string message, std::vector<validation_error> errors = {},
                    std::optional<text_location> syntax = std::nullopt, bool repaired = false) {
    return unexpected(counted_envelope(options, [&] {
      return build_envelope(now, category, std::move(message), raw, context, options, schema.fingerprint(),
                            schema.pii_paths(), std::move(errors), syntax, repaired);
    }));
  };
  auto syntax_at = [](const syntax_error& e) { return text_location{e.offset, e.line, e.column}; };

  json_parser& parser = thread_parser(options.limits);
  auto doc = parser.parse(raw);
  std::vector<repair_action> repairs;
  std::string repaired_text;

  if (!doc) {
    // Not strict JSON: find the most severe reason, in the taxonomy's order.
    const syntax_error error = doc.error();
    if (error.code == json_errc::too_large || error.code == json_errc::too_deep) {
      return reject(failure_category::poison, error.message, {}, syntax_at(error));
    }
    if (auto binary = find_binary(raw)) return reject(failure_category::poison, binary->message);
    if (auto injection = find_injection(raw, options.guard)) return reject(failure_category::poison, injection->message);
    if (context.refusal) return reject(failure_category::refusal, "the API reported a refusal: " + *context.refusal);
    if (auto refusal = find_refusal(raw, options.guard)) return reject(failure_category::refusal, refusal->message);
    if (is_empty_answer(raw)) return reject(failure_category::empty, "the response is empty");
    if (context.finish_reason == "length") {
      return reject(failure_category::truncated, "the model stopped at its token limit (finish_reason \"length\")");
    }
    if (options.repair == repair_mode::off) {
      if (error.code == json_errc::unexpected_end) {
        return reject(failure_category::truncated, "the response ends with " + error.unclosed + " still open",
                      {}, syntax_at(error));
      }
      repair_options find_limits;
      find_limits.max_bytes = options.limits.max_size;
      find_limits.max_depth = options.limits.max_depth;
      if (auto cut = find_truncated_value(raw, find_limits)) {
        return reject(failure_category::truncated,
                      fmt::format("the JSON value at offset {} is cut off with {} still open", cut->begin,
                                  cut->unclosed),
                      {}, syntax_at(error));
      }
      return reject(failure_category::syntax, "not JSON: " + error.message, {}, syntax_at(error));
    }
    // A bare value the strict parser read to the end of the text, still
    // open: whatever repair made of it, it would be cut off.
    if (error.code == json_errc::unexpected_end) {
      const auto first = raw.find_first_not_of(" \t\r\n");
      if (first != std::string_view::npos && (raw[first] == '{' || raw[first] == '[')) {
        return reject(failure_category::truncated, "the response ends with " + error.unclosed + " still open",
                      {}, syntax_at(error));
      }
    }
    repair_options repair_limits;
    repair_limits.max_bytes = options.limits.max_size;
    repair_limits.max_depth = options.limits.max_depth;
    // Among several values in the text, the one the schema accepts is the answer.
    struct schema_fit {
      json_parser& parser;
      const llmdlq::schema& schema;
      validate_options rules;
    } fit{parser, schema, {}};
    fit.rules.now = now;
    auto fits = [](void* context, std::string_view json) {
      auto& f = *static_cast<schema_fit*>(context);
      auto candidate = f.parser.parse(json);
      return candidate && f.schema.is_valid(*candidate, f.rules);
    };
    auto repaired = detail::find_and_repair(raw, repair_limits, fits, &fit);
    if (repaired && repaired->truncated) {
      return reject(failure_category::truncated, "the response is cut off inside its JSON value", {},
                    syntax_at(error), true);
    }
    if (!repaired) {
      if (error.code == json_errc::unexpected_end || repaired.error().truncated) {
        return reject(failure_category::truncated, "the response ends with " + error.unclosed + " still open",
                      {}, syntax_at(error), true);
      }
      return reject(failure_category::syntax, "not JSON: " + error.message + " (" + repaired.error().message + ")",
                    {}, syntax_at(error), true);
    }
    const auto refused = std::find_if(repaired->actions.begin(), repaired->actions.end(), [&](const auto& a) {
      return !options.accept_repairs.allows(a.tier);
    });
    if (refused != repaired->actions.end()) {
      return reject(failure_category::syntax,
                    fmt::format("not JSON: it needs a {} repair ({}), which policy does not accept",
                                to_string(refused->tier), refused->code),
                    {}, syntax_at(error), true);
    }
    if (repaired->actions.empty()) {
      // Nothing to take out of the text: it stays as broken as it was.
      if (error.code == json_errc::unexpected_end) {
        return reject(failure_category::truncated, "the response ends with " + error.unclosed + " still open",
                      {}, syntax_at(error), true);
      }
      return reject(failure_category::syntax, "not JSON: " + error.message, {}, syntax_at(error), true);
    }
    repaired_text = std::move(repaired->json);
    repairs = std::move(repaired->actions);
    doc = parser.parse(repaired_text);
    if (!doc) {
      const syntax_error again = doc.error();
      if (again.code == json_errc::unexpected_end) {
        return reject(failure_category::truncated, "the response ends with " + again.unclosed + " still open",
                      {}, syntax_at(error), true);
      }
      return reject(failure_category::syntax, "not JSON after local repair: " + again.message, {},
                    syntax_at(error), true);
    }
  } else if (auto injection = find_injection(raw, options.guard)) {
    // Parsed JSON is valid UTF-8 without raw control bytes; only injection is left to check.
    return reject(failure_category::poison, injection->message);
  }
  bool repaired = !repairs.empty();
  if (options.guard.detect_injection) {
    std::optional<guard_finding> injection;
    if (repaired) injection = find_injection(repaired_text, options.guard);  // a repair can decode a marker
    if (!injection && has_spelling_escape(repaired ? std::string_view(repaired_text) : raw)) {
      injection = find_injection_in_values(doc->root(), options.guard);
    }
    if (injection) return reject(failure_category::poison, injection->message, {}, std::nullopt, repaired);
  }

  if (context.refusal) return reject(failure_category::refusal, "the API reported a refusal: " + *context.refusal);
  if (context.finish_reason == "length") {
    return reject(failure_category::truncated,
                  "the model stopped at its token limit (finish_reason \"length\"): the document may be incomplete",
                  {}, std::nullopt, repaired);
  }

  validate_options rules;
  rules.now = now;
  rules.max_errors = options.max_errors;
  rules.find_structural = true;  // the category comes from the whole verdict, not the capped list
  if (options.coerce && !schema.is_valid(*doc, rules)) {
    coerce_options coercion;
    coercion.now = now;
    auto coerced = coerce(repaired ? std::string_view(repaired_text) : raw, schema, coercion);
    if (!coerced) {
      return reject(failure_category::schema, "schema error at " + coerced.error().path + ": " + coerced.error().message,
                    {}, std::nullopt, repaired);
    }
    if (!coerced->actions.empty()) {
      repaired_text = std::move(coerced->json);
      repairs.insert(repairs.end(), std::make_move_iterator(coerced->actions.begin()),
                     std::make_move_iterator(coerced->actions.end()));
      repaired = true;
      doc = parser.parse(repaired_text);
      if (!doc) return reject(failure_category::syntax, "not JSON after coercion: " + doc.error().message);
    }
  }
  if (!schema.is_valid(*doc, rules)) {
    auto errors = schema.validate(*doc, rules);
    const bool structural = std::any_of(errors.begin(), errors.end(), [](const auto& e) { return !is_semantic(e); });
    // The message first: the errors move into the envelope.
    std::string message = summarise(structural ? "schema error" : "content error", errors);
    return reject(structural ? failure_category::schema : failure_category::semantic, std::move(message),
                  std::move(errors), std::nullopt, repaired);
  }
  if (!options.checks.empty()) {
    auto errors = run_checks(options.checks, doc->root(), now);
    if (!errors.empty()) {
      std::string message = summarise("content error", errors);
      return reject(failure_category::semantic, std::move(message), std::move(errors), std::nullopt, repaired);
    }
  }
  if (options.min_confidence && context.confidence && !std::isfinite(*context.confidence)) {
    return reject(failure_category::low_confidence, "the confidence score is not a finite number", {}, std::nullopt,
                  repaired);
  }
  if (options.min_confidence && std::isnan(*options.min_confidence) && context.confidence) {
    return reject(failure_category::low_confidence,
                  "the confidence threshold (min_confidence) is not a number: no score can pass it", {},
                  std::nullopt, repaired);
  }
  if (options.min_confidence && context.confidence && *context.confidence < *options.min_confidence) {
    return reject(failure_category::low_confidence,
                  fmt::format("confidence {} is under the threshold {}", *context.confidence, *options.min_confidence),
                  {}, std::nullopt, repaired);
  }
  if (on_accept) {
    if (auto problem = on_accept(*doc)) {
      return reject(failure_category::schema, "the document does not convert: " + *problem, {}, std::nullopt,
                    repaired);
    }
  }
  if (options.metrics) options.metrics->count_accepted(repairs);
  return accepted{repaired ? std::move(repaired_text) : std::string(raw), std::move(repairs)};
}

}  // namespace detail

LLMDLQ_INLINE envelope make_envelope(failure_report failure, std::string_view raw, const request_context& context,
                                     const process_options& options) {
  // No schema here: the versions the host declared stand for it in a derived key.
  return detail::counted_envelope(options, [&] {
    return detail::build_envelope(options.clock ? options.clock() : system_now(), failure.category,
                                  std::move(failure.message), raw, context, options, context.versions.schema, {},
                                  std::move(failure.errors), failure.syntax, failure.repaired_locally);
  });
}

LLMDLQ_INLINE expected<void, options_error> check_options(const process_options& options) {
  if (options.min_confidence && !std::isfinite(*options.min_confidence)) {
    return unexpected(options_error{"min_confidence", fmt::format("must be a finite number, not {}",
                                                                  *options.min_confidence)});
  }
  return {};
}

LLMDLQ_INLINE expected<accepted, envelope> process_llm_response(std::string_view raw, const schema& schema,
                                                               const request_context& context,
                                                               const process_options& options) {
  return detail::process_response(raw, schema, context, options, {});
}

LLMDLQ_END_NAMESPACE
