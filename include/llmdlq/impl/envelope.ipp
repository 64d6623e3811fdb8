// SPDX-License-Identifier: MIT
// Definitions for envelope.hpp: the JSON mapping, field by field, and the
// size limit.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/format_identifiers.hpp"
#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/json_parser.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE captured_text captured_text::of(std::string_view whole) {
  if (simdjson::validate_utf8(whole.data(), whole.size())) {
    return captured_text{std::string(whole), whole.size(), detail::sha256_hex(whole), false, false, std::nullopt};
  }
  return captured_text{detail::base64(whole), whole.size(), detail::sha256_hex(whole), false, true, std::nullopt};
}

namespace detail {

inline void put_text(boost::json::object& o, std::string_view key, const std::string& text) {
  if (!text.empty()) o.emplace(key, text);
}

template <class T>
void put_optional(boost::json::object& o, std::string_view key, const std::optional<T>& v) {
  if (v) o.emplace(key, *v);
}

// JSON has no NaN or infinity: such a number is left out.
inline void put_number(boost::json::object& o, std::string_view key, const std::optional<double>& v) {
  if (v && std::isfinite(*v)) o.emplace(key, *v);
}

inline void put_time(boost::json::object& o, std::string_view key, const std::optional<timestamp>& t) {
  if (t) o.emplace(key, format_rfc3339(*t));
}

inline boost::json::object captured_to_json(const captured_text& c) {
  boost::json::object o;
  if (c.text) o.emplace("text", *c.text);
  o.emplace("length", c.length);
  o.emplace("sha256", c.sha256);
  if (c.cut) o.emplace("cut", true);
  if (c.base64) o.emplace("encoding", "base64");
  if (c.sealed) {
    boost::json::object sealed{{"key_id", c.sealed->key_id},
                               {"algorithm", c.sealed->algorithm},
                               {"nonce", c.sealed->nonce},
                               {"ciphertext", c.sealed->ciphertext},
                               {"length", c.sealed->length}};
    if (c.sealed->cut) sealed.emplace("cut", true);
    o.emplace("sealed", std::move(sealed));
  }
  return o;
}

inline boost::json::object redaction_to_json(const redaction_summary& r) {
  boost::json::object o{{"field", r.field}, {"kind", r.kind}, {"operator", r.action}, {"count", r.count}};
  put_text(o, "path", r.path);
  put_text(o, "key_id", r.key_id);
  if (!r.spans.empty()) {
    boost::json::array spans;
    for (const auto& [offset, length] : r.spans) spans.push_back(boost::json::array{offset, length});
    o.emplace("spans", std::move(spans));
  }
  return o;
}

inline boost::json::object attempt_to_json(const attempt_record& a) {
  // Counts are never negative in the schema: a negative one is written as 0.
  boost::json::object record{
      {"strategy", a.strategy}, {"outcome", a.outcome}, {"tokens", std::max<std::int64_t>(a.tokens, 0)}};
  put_time(record, "at", a.at);
  if (!a.model.empty()) record.emplace("model", a.model);
  if (a.latency_ms) record.emplace("latency_ms", std::max<std::int64_t>(*a.latency_ms, 0));
  if (!a.fingerprint.empty()) record.emplace("fingerprint", a.fingerprint);
  return record;
}

constexpr bool is_lower_hex(char c) noexcept { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// The schema's dlq_id pattern: a lowercase UUID of version 7 or 8, RFC 9562 variant.
constexpr bool is_envelope_id(std::string_view s) noexcept {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !is_lower_hex(s[i])) return false;
  }
  return (s[14] == '7' || s[14] == '8') && (s[19] == '8' || s[19] == '9' || s[19] == 'a' || s[19] == 'b');
}

constexpr bool is_sha256_hex(std::string_view s) noexcept {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), is_lower_hex);
}

// The schema's failure code pattern: ^[a-z0-9_.-]+$
constexpr bool is_failure_code(std::string_view s) noexcept {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
  });
}

// The form format_rfc3339 writes, which the schema requires: 2026-09-28T15:42:05.123Z
constexpr bool is_envelope_time(std::string_view s) noexcept {
  constexpr std::string_view shape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (s.size() != shape.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i]) return false;
  }
  return true;
}

// `key` as a JSON Pointer token.
inline std::string pointer_token(std::string_view key) {
  std::string token;
  for (const char c : key) {
    if (c == '~') {
      token += "~0";
    } else if (c == '/') {
      token += "~1";
    } else {
      token += c;
    }
  }
  return token;
}

// Reads JSON into envelope fields, remembering the first problem and where.
class envelope_reader {
 public:
  static constexpr unsigned required = 1;   // the field must be present
  static constexpr unsigned non_empty = 2;  // a string must hold at least one character

  [[nodiscard]] const std::optional<envelope_error>& error() const noexcept { return error_; }

  const boost::json::object* object(const boost::json::value* v, const std::string& path) {
    if (!v) return nullptr;
    if (!v->is_object()) return fail(path, "must be an object"), nullptr;
    return &v->get_object();
  }
  // An optional object that, when present, must have a member (minProperties 1).
  const boost::json::object* non_empty_object(const boost::json::object& o, std::string_view key,
                                              const std::string& path) {
    const auto* member = object(o.if_contains(key), path + "/" + std::string(key));
    if (member && member->empty()) fail(path + "/" + std::string(key), "must not be empty");
    return member;
  }
  const boost::json::object* required_object(const boost::json::object& o, std::string_view key,
                                             const std::string& path) {
    const auto* v = o.if_contains(key);
    if (!v) return fail(path + "/" + std::string(key), "is required"), nullptr;
    return object(v, path + "/" + std::string(key));
  }
  const boost::json::array* array(const boost::json::object& o, std::string_view key, const std::string& path,
                                  unsigned rules = 0) {
    const auto* v = member(o, key, path, rules);
    if (!v) return nullptr;
    if (!v->is_array()) return fail(path + "/" + std::string(key), "must be an array"), nullptr;
    return &v->get_array();
  }

  // Rejects members the schema does not define (additionalProperties: false).
  void known_members(const boost::json::object& o, const std::string& path,
                     std::initializer_list<std::string_view> names) {
    for (const auto& member : o) {
      if (std::find(names.begin(), names.end(), member.key()) == names.end()) {
        return fail(path + "/" + pointer_token(member.key()), "is not a field of a version 1 envelope");
      }
    }
  }

  void text(const boost::json::object& o, std::string_view key, const std::string& path, std::string& out,
            unsigned rules = 0) {
    const auto* v = member(o, key, path, rules);
    if (!v) return;
    if (!v->is_string()) return fail(path + "/" + std::string(key), "must be a string");
    if ((rules & non_empty) && v->get_string().empty()) return fail(path + "/" + std::string(key), "must not be empty");
    out = std::string(v->get_string());
  }
  void optional_text(const boost::json::object& o, std::string_view key, const std::string& path,
                     std::optional<std::string>& out) {
    if (o.contains(key)) text(o, key, path, out.emplace());
  }
  // A string that must also pass `valid` (the schema's pattern or format).
  void checked_text(const boost::json::object& o, std::string_view key, const std::string& path, std::string& out,
                    unsigned rules, bool (*valid)(std::string_view), std::string_view what) {
    const bool present = o.contains(key);
    text(o, key, path, out, rules);
    if (present && !error_ && !valid(out)) fail(path + "/" + std::string(key), fmt::format("must be {}", what));
  }

  template <class Int>
  void integer(const boost::json::object& o, std::string_view key, const std::string& path, Int& out,
               unsigned rules = 0, std::int64_t minimum = std::numeric_limits<std::int64_t>::min()) {
    const auto* v = member(o, key, path, rules);
    if (!v) return;
    boost::json::error_code ec;
    const auto n = v->to_number<Int>(ec);
    if (ec || v->is_double()) return fail(path + "/" + std::string(key), "must be an integer in range");
    if (std::cmp_less(n, minimum)) return fail(path + "/" + std::string(key), fmt::format("must be at least {}", minimum));
    out = n;
  }
  template <class Int>
  void optional_integer(const boost::json::object& o, std::string_view key, const std::string& path,
                        std::optional<Int>& out, std::int64_t minimum = std::numeric_limits<std::int64_t>::min()) {
    if (o.contains(key)) integer(o, key, path, out.emplace(), 0, minimum);
  }
  void optional_number(const boost::json::object& o, std::string_view key, const std::string& path,
                       std::optional<double>& out) {
    const auto* v = o.if_contains(key);
    if (!v) return;
    if (!v->is_number()) return fail(path + "/" + std::string(key), "must be a number");
    const double n = v->to_number<double>();
    if (!std::isfinite(n)) return fail(path + "/" + std::string(key), "must be a finite number");
    out = n;
  }
  void boolean(const boost::json::object& o, std::string_view key, const std::string& path, bool& out,
               unsigned rules = 0) {
    const auto* v = member(o, key, path, rules);
    if (!v) return;
    if (!v->is_bool()) return fail(path + "/" + std::string(key), "must be a boolean");
    out = v->get_bool();
  }
  void time(const boost::json::object& o, std::string_view key, const std::string& path,
            std::optional<timestamp>& out, unsigned rules = 0) {
    if (!o.contains(key) && !(rules & required)) return;
    std::string t;
    text(o, key, path, t, rules);
    if (error_) return;
    if (is_envelope_time(t)) out = parse_rfc3339(t);
    if (!out) fail(path + "/" + std::string(key), "must be an RFC 3339 date-time in UTC with milliseconds");
  }

  template <class Enum>
  void enumeration(const boost::json::object& o, std::string_view key, const std::string& path, Enum& out,
                   std::optional<Enum> (*from)(std::string_view) noexcept) {
    std::string name;
    text(o, key, path, name, required);
    if (error_) return;
    if (const auto value = from(name)) {
      out = *value;
    } else {
      fail(path + "/" + std::string(key), fmt::format("unknown value '{}'", name));
    }
  }

  void captured(const boost::json::object& o, const std::string& path, captured_text& out) {
    known_members(o, path, {"text", "length", "sha256", "cut", "encoding", "sealed"});
    optional_text(o, "text", path, out.text);
    integer(o, "length", path, out.length, required);
    checked_text(o, "sha256", path, out.sha256, required, is_sha256_hex, "a lowercase hex SHA-256");
    boolean(o, "cut", path, out.cut);
    std::string encoding;
    const bool encoded = o.contains("encoding");
    text(o, "encoding", path, encoding);
    if (encoding == "base64") {
      out.base64 = true;
    } else if (encoded && !error_) {
      fail(path + "/encoding", "must be base64 when present");
    }
    if (const auto* sealed = object(o.if_contains("sealed"), path + "/sealed")) {
      const std::string at = path + "/sealed";
      auto& s = out.sealed.emplace();
      known_members(*sealed, at, {"key_id", "algorithm", "nonce", "ciphertext", "length", "cut"});
      text(*sealed, "key_id", at, s.key_id, required | non_empty);
      text(*sealed, "algorithm", at, s.algorithm, required | non_empty);
      text(*sealed, "nonce", at, s.nonce, required | non_empty);
      text(*sealed, "ciphertext", at, s.ciphertext, required | non_empty);
      integer(*sealed, "length", at, s.length, required);
      boolean(*sealed, "cut", at, s.cut);
    }
  }

  void redaction(const boost::json::object& o, const std::string& path, redaction_summary& out) {
    known_members(o, path, {"field", "kind", "operator", "count", "path", "key_id", "spans"});
    text(o, "field", path, out.field, required | non_empty);
    text(o, "kind", path, out.kind, required | non_empty);
    text(o, "operator", path, out.action, required | non_empty);
    integer(o, "count", path, out.count, required, 1);
    text(o, "path", path, out.path, non_empty);
    text(o, "key_id", path, out.key_id, non_empty);
    if (const auto* spans = array(o, "spans", path)) {
      for (std::size_t i = 0; i < spans->size() && !error_; ++i) {
        const auto* pair = (*spans)[i].if_array();
        boost::json::error_code offset_error, length_error;
        const auto first = pair && pair->size() == 2 ? (*pair)[0].to_number<std::uint64_t>(offset_error) : 0;
        const auto second = pair && pair->size() == 2 ? (*pair)[1].to_number<std::uint64_t>(length_error) : 0;
        if (!pair || pair->size() != 2 || offset_error || length_error || (*pair)[0].is_double() ||
            (*pair)[1].is_double()) {
          fail(path + "/spans/" + std::to_string(i), "must be [offset, length], two integers of at least 0");
          return;
        }
        out.spans.emplace_back(first, second);
      }
    }
  }

  void fail(std::string path, std::string message) {
    if (!error_) error_ = envelope_error{std::move(path), std::move(message)};
  }

 private:
  const boost::json::value* member(const boost::json::object& o, std::string_view key, const std::string& path,
                                   unsigned rules) {
    const auto* v = o.if_contains(key);
    if (!v && (rules & required)) fail(path + "/" + std::string(key), "is required");
    return v;
  }

  std::optional<envelope_error> error_;
};

}  // namespace detail

LLMDLQ_INLINE boost::json::value to_json(const envelope& e) {
  using detail::put_optional;
  using detail::put_text;
  boost::json::object o;
  o.emplace("envelope_version", e.envelope_version);
  o.emplace("dlq_id", e.dlq_id);
  o.emplace("created_at", format_rfc3339(e.created_at));
  put_text(o, "idempotency_key", e.idempotency_key);
  if (e.idempotency_key_derived) o.emplace("idempotency_key_derived", true);
  put_text(o, "record_id", e.record_id);
  put_text(o, "correlation_id", e.correlation_id);
  put_text(o, "trace_id", e.trace_id);

  boost::json::object source;
  put_text(source, "uri", e.source_ref.uri);
  put_text(source, "sha256", e.source_ref.sha256);
  if (!source.empty()) o.emplace("source_ref", std::move(source));

  boost::json::object prompt;
  put_text(prompt, "template_id", e.prompt.template_id);
  put_text(prompt, "version", e.prompt.version);
  put_text(prompt, "sha256", e.prompt.sha256);
  if (!prompt.empty()) o.emplace("prompt", std::move(prompt));

  boost::json::object model;
  put_text(model, "provider", e.model.provider);
  put_text(model, "name", e.model.name);
  put_text(model, "version", e.model.version);
  detail::put_number(model, "temperature", e.model.temperature);
  put_optional(model, "max_tokens", e.model.max_tokens);
  put_optional(model, "seed", e.model.seed);
  if (!model.empty()) o.emplace("model", std::move(model));

  boost::json::object versions;
  put_text(versions, "schema", e.versions.schema);
  put_text(versions, "prompt", e.versions.prompt);
  put_text(versions, "model", e.versions.model);
  put_text(versions, "ocr", e.versions.ocr);
  put_text(versions, "pipeline", e.versions.pipeline);
  if (!versions.empty()) o.emplace("versions", std::move(versions));

  boost::json::object failure;
  failure.emplace("category", to_string(e.failure.category));
  failure.emplace("code", e.failure.code);
  failure.emplace("message", e.failure.message);
  boost::json::array errors;
  for (const auto& error : e.failure.errors) errors.push_back(to_json(error));
  failure.emplace("errors", std::move(errors));
  if (e.failure.syntax) {
    failure.emplace("syntax", boost::json::object{{"offset", e.failure.syntax->offset},
                                                  {"line", e.failure.syntax->line},
                                                  {"column", e.failure.syntax->column}});
  }
  o.emplace("failure", std::move(failure));

  o.emplace("triage", boost::json::object{{"class", to_string(e.triage.kind)},
                                          {"action", to_string(e.triage.action)},
                                          {"auto_replayable", e.triage.auto_replayable}});

  boost::json::object confidence;
  detail::put_number(confidence, "score", e.confidence.score);
  detail::put_number(confidence, "threshold", e.confidence.threshold);
  if (!confidence.empty()) o.emplace("confidence", std::move(confidence));

  o.emplace("raw_response", detail::captured_to_json(e.raw_response));
  if (e.original_input) o.emplace("original_input", detail::captured_to_json(*e.original_input));
  if (!e.redactions.empty()) {
    boost::json::array redactions;
    for (const auto& r : e.redactions) redactions.push_back(detail::redaction_to_json(r));
    o.emplace("redactions", std::move(redactions));
  }

  boost::json::object attempts{{"count", e.attempts.count}, {"max", e.attempts.max}};
  detail::put_time(attempts, "first_failure_at", e.attempts.first_failure_at);
  detail::put_time(attempts, "last_failure_at", e.attempts.last_failure_at);
  if (!e.attempts.history.empty()) {
    boost::json::array history;
    for (const auto& a : e.attempts.history) history.push_back(detail::attempt_to_json(a));
    attempts.emplace("history", std::move(history));
  }
  o.emplace("attempts", std::move(attempts));

  boost::json::object origin;
  put_text(origin, "service", e.origin.service);
  put_text(origin, "worker", e.origin.worker);
  put_text(origin, "topic", e.origin.topic);
  put_optional(origin, "partition", e.origin.partition);
  put_optional(origin, "offset", e.origin.offset);
  if (!origin.empty()) o.emplace("origin", std::move(origin));

  detail::put_time(o, "expires_at", e.expires_at);
  if (!e.extensions.empty()) o.emplace("extensions", e.extensions);
  return o;
}

LLMDLQ_INLINE std::string serialize(const envelope& e) { return boost::json::serialize(to_json(e)); }

LLMDLQ_INLINE expected<envelope, envelope_error> envelope_from_json(const boost::json::value& json) {
  using reader = detail::envelope_reader;
  constexpr unsigned required = reader::required;
  constexpr unsigned non_empty = reader::non_empty;
  reader r;
  envelope e;
  const auto* o = r.object(&json, "");
  if (!o) return unexpected(r.error().value_or(envelope_error{"", "must be an object"}));
  r.text(*o, "envelope_version", "", e.envelope_version, required);
  if (!r.error() && e.envelope_version != envelope::current_version) {
    r.fail("/envelope_version", fmt::format("version '{}' is not {}", e.envelope_version,
                                            envelope::current_version));
  }
  r.known_members(*o, "",
                  {"envelope_version", "dlq_id", "created_at", "idempotency_key", "idempotency_key_derived",
                   "record_id", "correlation_id", "trace_id", "source_ref", "prompt", "model", "versions", "failure",
                   "triage", "confidence", "raw_response", "original_input", "redactions", "attempts", "origin", "expires_at",
                   "extensions"});
  r.checked_text(*o, "dlq_id", "", e.dlq_id, required, detail::is_envelope_id, "a lowercase UUID of version 7 or 8");
  std::optional<timestamp> created;
  r.time(*o, "created_at", "", created, required);
  if (created) e.created_at = *created;
  r.text(*o, "idempotency_key", "", e.idempotency_key, non_empty);
  r.boolean(*o, "idempotency_key_derived", "", e.idempotency_key_derived);
  if (o->contains("idempotency_key_derived") && !e.idempotency_key_derived) {
    r.fail("/idempotency_key_derived", "must be true when present");
  }
  r.text(*o, "record_id", "", e.record_id, non_empty);
  r.text(*o, "correlation_id", "", e.correlation_id, non_empty);
  r.text(*o, "trace_id", "", e.trace_id, non_empty);

  if (const auto* s = r.non_empty_object(*o, "source_ref", "")) {
    r.known_members(*s, "/source_ref", {"uri", "sha256"});
    r.text(*s, "uri", "/source_ref", e.source_ref.uri, non_empty);
    r.text(*s, "sha256", "/source_ref", e.source_ref.sha256, non_empty);
  }
  if (const auto* p = r.non_empty_object(*o, "prompt", "")) {
    r.known_members(*p, "/prompt", {"template_id", "version", "sha256"});
    r.text(*p, "template_id", "/prompt", e.prompt.template_id, non_empty);
    r.text(*p, "version", "/prompt", e.prompt.version, non_empty);
    r.checked_text(*p, "sha256", "/prompt", e.prompt.sha256, 0, detail::is_sha256_hex, "a lowercase hex SHA-256");
  }
  if (const auto* m = r.non_empty_object(*o, "model", "")) {
    r.known_members(*m, "/model", {"provider", "name", "version", "temperature", "max_tokens", "seed"});
    r.text(*m, "provider", "/model", e.model.provider, non_empty);
    r.text(*m, "name", "/model", e.model.name, non_empty);
    r.text(*m, "version", "/model", e.model.version, non_empty);
    r.optional_number(*m, "temperature", "/model", e.model.temperature);
    r.optional_integer(*m, "max_tokens", "/model", e.model.max_tokens);
    r.optional_integer(*m, "seed", "/model", e.model.seed);
  }
  if (const auto* v = r.non_empty_object(*o, "versions", "")) {
    r.known_members(*v, "/versions", {"schema", "prompt", "model", "ocr", "pipeline"});
    r.text(*v, "schema", "/versions", e.versions.schema, non_empty);
    r.text(*v, "prompt", "/versions", e.versions.prompt, non_empty);
    r.text(*v, "model", "/versions", e.versions.model, non_empty);
    r.text(*v, "ocr", "/versions", e.versions.ocr, non_empty);
    r.text(*v, "pipeline", "/versions", e.versions.pipeline, non_empty);
  }
  if (const auto* f = r.required_object(*o, "failure", "")) {
    r.known_members(*f, "/failure", {"category", "code", "message", "errors", "syntax"});
    r.enumeration(*f, "category", "/failure", e.failure.category, &failure_category_from);
    r.checked_text(*f, "code", "/failure", e.failure.code, required, detail::is_failure_code,
                   "lowercase letters, digits, '_', '.' and '-'");
    r.text(*f, "message", "/failure", e.failure.message, required);
    if (const auto* errors = r.array(*f, "errors", "/failure", required)) {
      for (std::size_t i = 0; i < errors->size(); ++i) {
        const std::string path = "/failure/errors/" + std::to_string(i);
        if (const auto* error = r.object(&(*errors)[i], path)) {
          auto& out = e.failure.errors.emplace_back();
          r.known_members(*error, path, {"instance_path", "schema_path", "keyword", "message"});
          r.checked_text(*error, "instance_path", path, out.instance_path, required, detail::is_json_pointer,
                         "a JSON Pointer");
          r.text(*error, "schema_path", path, out.schema_path, required);
          r.text(*error, "keyword", path, out.keyword, required | non_empty);
          r.text(*error, "message", path, out.message, required);
        }
      }
    }
    if (const auto* s = r.object(f->if_contains("syntax"), "/failure/syntax")) {
      auto& at = e.failure.syntax.emplace();
      r.known_members(*s, "/failure/syntax", {"offset", "line", "column"});
      r.integer(*s, "offset", "/failure/syntax", at.offset, required);
      r.integer(*s, "line", "/failure/syntax", at.line, required, 1);
      r.integer(*s, "column", "/failure/syntax", at.column, required, 1);
    }
  }
  if (const auto* t = r.required_object(*o, "triage", "")) {
    r.known_members(*t, "/triage", {"class", "action", "auto_replayable"});
    r.enumeration(*t, "class", "/triage", e.triage.kind, &triage_class_from);
    r.enumeration(*t, "action", "/triage", e.triage.action, &recommended_action_from);
    r.boolean(*t, "auto_replayable", "/triage", e.triage.auto_replayable, required);
  }
  if (const auto* c = r.non_empty_object(*o, "confidence", "")) {
    r.known_members(*c, "/confidence", {"score", "threshold"});
    r.optional_number(*c, "score", "/confidence", e.confidence.score);
    r.optional_number(*c, "threshold", "/confidence", e.confidence.threshold);
  }
  if (const auto* raw = r.required_object(*o, "raw_response", "")) r.captured(*raw, "/raw_response", e.raw_response);
  if (const auto* input = r.object(o->if_contains("original_input"), "/original_input")) {
    r.captured(*input, "/original_input", e.original_input.emplace());
  }
  if (const auto* redactions = r.array(*o, "redactions", "")) {
    for (std::size_t i = 0; i < redactions->size(); ++i) {
      const std::string path = "/redactions/" + std::to_string(i);
      if (const auto* record = r.object(&(*redactions)[i], path)) r.redaction(*record, path, e.redactions.emplace_back());
    }
  }
  if (const auto* a = r.required_object(*o, "attempts", "")) {
    r.known_members(*a, "/attempts", {"count", "max", "first_failure_at", "last_failure_at", "history"});
    r.integer(*a, "count", "/attempts", e.attempts.count, required, 1);
    r.integer(*a, "max", "/attempts", e.attempts.max, required);
    r.time(*a, "first_failure_at", "/attempts", e.attempts.first_failure_at);
    r.time(*a, "last_failure_at", "/attempts", e.attempts.last_failure_at);
    if (const auto* history = r.array(*a, "history", "/attempts")) {
      for (std::size_t i = 0; i < history->size(); ++i) {
        const std::string path = "/attempts/history/" + std::to_string(i);
        if (const auto* record = r.object(&(*history)[i], path)) {
          auto& out = e.attempts.history.emplace_back();
          r.known_members(*record, path,
                          {"strategy", "outcome", "tokens", "at", "model", "latency_ms", "fingerprint"});
          r.text(*record, "strategy", path, out.strategy, required | non_empty);
          r.text(*record, "outcome", path, out.outcome, required | non_empty);
          r.integer(*record, "tokens", path, out.tokens, 0, 0);
          r.time(*record, "at", path, out.at);
          r.text(*record, "model", path, out.model, non_empty);
          r.optional_integer(*record, "latency_ms", path, out.latency_ms, 0);
          r.text(*record, "fingerprint", path, out.fingerprint, non_empty);
        }
      }
    }
  }
  if (const auto* origin = r.non_empty_object(*o, "origin", "")) {
    r.known_members(*origin, "/origin", {"service", "worker", "topic", "partition", "offset"});
    r.text(*origin, "service", "/origin", e.origin.service, non_empty);
    r.text(*origin, "worker", "/origin", e.origin.worker, non_empty);
    r.text(*origin, "topic", "/origin", e.origin.topic, non_empty);
    r.optional_integer(*origin, "partition", "/origin", e.origin.partition, 0);
    r.optional_integer(*origin, "offset", "/origin", e.origin.offset, 0);
  }
  r.time(*o, "expires_at", "", e.expires_at);
  if (const auto* extensions = r.object(o->if_contains("extensions"), "/extensions")) {
    e.extensions = *extensions;
  }
  if (r.error()) return unexpected(*r.error());
  return e;
}

LLMDLQ_INLINE expected<envelope, envelope_error> parse_envelope(std::string_view json) {
  parse_options limits;
  limits.max_size = std::size_t(1) << 30;
  auto value = parse_value(json, limits);
  if (!value) {
    return unexpected(envelope_error{"", fmt::format("not JSON: {} at line {}, column {}", value.error().message,
                                                     value.error().line, value.error().column)});
  }
  return envelope_from_json(*value);
}

namespace detail {

// Bytes each byte takes inside a JSON string as Boost.JSON writes it: control
// bytes as \u00XX (or \n, \t, ...), quotes and backslashes with a backslash,
// everything else (UTF-8 included) as it is.
inline constexpr auto json_string_width = [] {
  std::array<std::uint8_t, 256> width{};
  width.fill(1);
  for (std::size_t c = 0; c < 0x20; ++c) width[c] = 6;
  for (const unsigned char c : {'\b', '\t', '\n', '\f', '\r', '"', '\\'}) width[c] = 2;
  return width;
}();

// The number of bytes at the start of `text` whose escaped form takes at most
// `budget` bytes, and that escaped size. Reads no further than it must.
inline std::pair<std::size_t, std::size_t> escaped_prefix(std::string_view text, std::size_t budget) noexcept {
  const auto* width = json_string_width.data();
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t used = 0;
  std::size_t n = 0;
  for (; n < text.size() && used + width[bytes[n]] <= budget; ++n) used += width[bytes[n]];
  return {n, used};
}

// The length of the longest prefix of valid UTF-8 `text` that takes at most
// `budget` bytes escaped and ends on a code point boundary.
inline std::size_t escaped_prefix_length(std::string_view text, std::size_t budget) noexcept {
  std::size_t n = escaped_prefix(text, budget).first;
  while (n > 0 && n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return n;
}

// What marks a string field that was cut.
enum class cut_mark : std::uint8_t {
  none,      // a plain prefix
  ellipsis,  // prefix…
  hash,      // prefix…sha256:<hex of the whole>: unique, and the same everywhere
};

// Cuts `text` when its JSON takes more than `limit` bytes (escaped, without
// quotes): it keeps the longest prefix that fits with the mark. `pointer`
// keeps a JSON Pointer valid (no "~" left without its digit).
inline void bound_text(std::string& text, std::size_t limit, cut_mark mark, bool pointer = false) {
  if (text.size() <= limit / 6 || escaped_prefix(text, limit).first == text.size()) return;
  std::string marker;
  if (mark == cut_mark::ellipsis) marker = "\u2026";
  if (mark == cut_mark::hash) marker = "\u2026sha256:" + sha256_hex(text);
  std::size_t keep = escaped_prefix_length(text, limit - marker.size());
  if (pointer && keep > 0 && text[keep - 1] == '~') --keep;
  text.resize(keep);
  text += marker;
}

inline constexpr std::string_view dropped_extensions_key = "llmdlq_dropped";
inline constexpr std::string_view reduced_envelope_key = "llmdlq_reduced";

inline std::size_t replace_extensions(envelope& e, std::string_view key, std::string note) {
  e.extensions.clear();
  e.extensions.emplace(key, std::move(note));
  return boost::json::serialize(e.extensions).size();
}

// Bounds every string field of `e` (see envelope_limits) and removes
// non-finite numbers. Returns the size of the extensions' JSON.
inline std::size_t bound_fields(envelope& e) {
  using limits = envelope_limits;
  bound_text(e.dlq_id, limits::label, cut_mark::hash);
  for (std::string* id : {&e.idempotency_key, &e.record_id, &e.correlation_id, &e.trace_id}) {
    bound_text(*id, limits::identifier, cut_mark::hash);
  }
  bound_text(e.source_ref.uri, limits::uri, cut_mark::hash);
  for (std::string* label :
       {&e.source_ref.sha256, &e.prompt.template_id, &e.prompt.version, &e.prompt.sha256, &e.model.provider,
        &e.model.name, &e.model.version, &e.versions.schema, &e.versions.prompt, &e.versions.model, &e.versions.ocr,
        &e.versions.pipeline, &e.raw_response.sha256, &e.origin.service, &e.origin.worker, &e.origin.topic}) {
    bound_text(*label, limits::label, cut_mark::hash);
  }
  if (e.original_input) bound_text(e.original_input->sha256, limits::label, cut_mark::hash);
  bound_text(e.failure.code, limits::label, cut_mark::none);
  bound_text(e.failure.message, limits::message, cut_mark::ellipsis);
  for (auto& error : e.failure.errors) {
    bound_text(error.instance_path, limits::error_text, cut_mark::hash, true);
    bound_text(error.schema_path, limits::error_text, cut_mark::hash);
    bound_text(error.keyword, limits::keyword, cut_mark::ellipsis);
    bound_text(error.message, limits::error_text, cut_mark::ellipsis);
  }
  for (auto& attempt : e.attempts.history) {
    bound_text(attempt.strategy, limits::keyword, cut_mark::ellipsis);
    bound_text(attempt.outcome, limits::keyword, cut_mark::ellipsis);
    bound_text(attempt.model, limits::label, cut_mark::hash);
    bound_text(attempt.fingerprint, limits::label, cut_mark::hash);
  }
  if (e.redactions.size() > limits::redactions) e.redactions.resize(limits::redactions);
  for (auto& r : e.redactions) {
    for (std::string* word : {&r.field, &r.kind, &r.action}) bound_text(*word, limits::keyword, cut_mark::ellipsis);
    bound_text(r.path, limits::error_text, cut_mark::hash, true);
    bound_text(r.key_id, limits::label, cut_mark::hash);
    if (r.spans.size() > redaction_summary::max_spans) r.spans.resize(redaction_summary::max_spans);
  }
  for (captured_text* c : {&e.raw_response, e.original_input ? &*e.original_input : nullptr}) {
    if (c && c->sealed) {
      bound_text(c->sealed->key_id, limits::label, cut_mark::hash);
      bound_text(c->sealed->algorithm, limits::keyword, cut_mark::ellipsis);
    }
  }
  for (std::optional<double>* number : {&e.model.temperature, &e.confidence.score, &e.confidence.threshold}) {
    if (*number && !std::isfinite(**number)) number->reset();
  }
  if (e.extensions.empty()) return 0;
  const std::size_t size = boost::json::serialize(e.extensions).size();
  if (size <= limits::extensions) return size;
  return replace_extensions(e, dropped_extensions_key,
                            fmt::format("the extensions took {} bytes of JSON, over the limit of {}", size,
                                        limits::extensions));
}

// An upper bound on the JSON size of `e`: every byte of text escaped to six
// (\u00XX), plus room for the fixed fields. Cheap, and usually enough to
// show that an envelope fits without serializing it.
inline std::size_t envelope_size_bound(const envelope& e, std::size_t extensions_size) {
  std::size_t text = e.dlq_id.size() + e.idempotency_key.size() + e.record_id.size() + e.correlation_id.size() +
                     e.trace_id.size() + e.source_ref.uri.size() + e.source_ref.sha256.size() +
                     e.prompt.template_id.size() + e.prompt.version.size() + e.prompt.sha256.size() +
                     e.model.provider.size() + e.model.name.size() + e.model.version.size() + e.versions.schema.size() +
                     e.versions.prompt.size() + e.versions.model.size() + e.versions.ocr.size() +
                     e.versions.pipeline.size() + e.failure.code.size() + e.failure.message.size() +
                     e.origin.service.size() + e.origin.worker.size() + e.origin.topic.size() +
                     e.raw_response.sha256.size();
  if (e.raw_response.text) text += e.raw_response.text->size();
  if (e.original_input) text += e.original_input->sha256.size() + (e.original_input->text ? e.original_input->text->size() : 0);
  for (const auto& error : e.failure.errors) {
    text += error.instance_path.size() + error.schema_path.size() + error.keyword.size() + error.message.size() + 96;
  }
  for (const auto& a : e.attempts.history) {
    text += a.strategy.size() + a.outcome.size() + a.model.size() + a.fingerprint.size() + 160;
  }
  for (const auto& r : e.redactions) {
    text += r.field.size() + r.kind.size() + r.action.size() + r.path.size() + r.key_id.size() + 96 + 48 * r.spans.size();
  }
  for (const captured_text* c : {&e.raw_response, e.original_input ? &*e.original_input : nullptr}) {
    if (c && c->sealed) {
      text += c->sealed->key_id.size() + c->sealed->algorithm.size() + c->sealed->nonce.size() +
              c->sealed->ciphertext.size() + 128;
    }
  }
  return 6 * text + 2048 + extensions_size;
}

inline constexpr std::size_t cut_flag_size = std::string_view(R"(,"cut":true)").size();

// A stored text taken out of its envelope while the rest is measured, then
// given back whole or cut to the room it is granted.
class shared_text {
 public:
  // `enough`: more room than the text can be granted; its size is measured up to there.
  shared_text(captured_text* captured, std::size_t enough) {
    if (!captured || !captured->text || captured->text->empty()) return;
    captured_ = captured;
    whole_ = std::move(*captured->text);
    captured->text.emplace();
    if (captured->base64) {
      needed_ = whole_.size();
    } else {
      const auto [length, size] = escaped_prefix(whole_, enough);
      needed_ = length < whole_.size() ? enough + 1 : size;
    }
    was_cut_ = captured->cut;
    captured->cut = true;  // measured as if cut; the flag's bytes come back if it is not
  }

  [[nodiscard]] std::size_t needed() const noexcept { return needed_; }
  // The bytes the measured envelope saves when this text stays whole.
  [[nodiscard]] std::size_t flag_refund() const noexcept { return captured_ && !was_cut_ ? cut_flag_size : 0; }

  // Puts back the whole text when its JSON fits in `room` (with the flag's
  // bytes it then saves), else the longest prefix whose JSON fits.
  void give(std::size_t room) {
    if (!captured_) return;
    if (needed_ <= room + flag_refund()) {
      keep_whole();
      return;
    }
    if (captured_->base64) {
      whole_.resize(room - room % 4);
    } else {
      whole_.resize(escaped_prefix_length(whole_, room));
    }
    *captured_->text = std::move(whole_);
  }

  void keep_whole() {
    if (!captured_) return;
    captured_->cut = was_cut_;
    *captured_->text = std::move(whole_);
  }

 private:
  captured_text* captured_ = nullptr;
  std::string whole_;
  std::size_t needed_ = 0;
  bool was_cut_ = false;
};

// Splits `room` between the two texts: one that needs at most half keeps all
// of it and the other gets the rest; else each gets half.
inline void share_room(shared_text& a, shared_text& b, std::size_t room) {
  if (a.needed() + b.needed() <= room + a.flag_refund() + b.flag_refund()) {
    a.keep_whole();
    b.keep_whole();
  } else if (a.needed() <= room / 2) {
    a.give(a.needed());
    b.give(room - a.needed() + a.flag_refund());
  } else if (b.needed() <= room / 2) {
    b.give(b.needed());
    a.give(room - b.needed() + b.flag_refund());
  } else {
    a.give(room / 2);
    b.give(room - room / 2);
  }
}

// Removes elements from the end of `list` until the envelope's size `size`
// is at most `target`; `json_size` gives an element's JSON size.
template <class T, class Measure>
void drop_trailing(std::vector<T>& list, std::size_t& size, std::size_t target, Measure json_size) {
  if (size <= target || list.empty()) return;
  std::vector<std::size_t> sizes;
  sizes.reserve(list.size());
  for (const auto& item : list) sizes.push_back(json_size(item) + (sizes.empty() ? 0 : 1));  // with its comma
  while (size > target && !list.empty()) {
    size -= std::min(size, sizes[list.size() - 1]);
    list.pop_back();
  }
}

// Keeps only the envelope's identity, hashes, failure summary, triage,
// confidence, attempt counts and origin: what fits in envelope_limits::min_bytes.
inline void reduce_envelope(envelope& e) {
  e.source_ref.uri.clear();
  e.prompt.template_id.clear();
  e.prompt.version.clear();
  e.model = {};
  e.versions = {};
  bound_text(e.failure.message, envelope_limits::reduced_message, cut_mark::ellipsis);
  e.failure.errors.clear();
  e.attempts.history.clear();
  e.raw_response.sealed.reset();
  if (e.original_input) e.original_input->sealed.reset();
  if (e.redactions.size() > envelope_limits::reduced_redactions) e.redactions.resize(envelope_limits::reduced_redactions);
  for (auto& r : e.redactions) {
    r.path.clear();
    r.spans.clear();
  }
  replace_extensions(e, reduced_envelope_key,
                     "the envelope exceeded its size limit: only its identity, hashes and failure summary were kept");
}

inline std::size_t fit_large_envelope(envelope& e, std::size_t max_bytes) {
  const std::size_t enough = max_bytes + cut_flag_size + 1;
  shared_text raw(&e.raw_response, enough);
  shared_text input(e.original_input ? &*e.original_input : nullptr, enough);
  std::size_t size = serialize(e).size();
  // The other fields give way until the texts get a quarter of the room, or all they need.
  const std::size_t target = max_bytes - std::min(raw.needed() + input.needed(), max_bytes / 4);
  if (size > target && !e.failure.errors.empty()) {
    drop_trailing(e.failure.errors, size, target,
                  [](const validation_error& error) { return boost::json::serialize(to_json(error)).size(); });
    size = serialize(e).size();
  }
  if (size > target && !e.attempts.history.empty()) {
    drop_trailing(e.attempts.history, size, target,
                  [](const attempt_record& a) { return boost::json::serialize(attempt_to_json(a)).size(); });
    size = serialize(e).size();
  }
  if (size > target && !e.extensions.empty()) {
    boost::json::object kept = std::move(e.extensions);
    replace_extensions(e, dropped_extensions_key, "the extensions did not fit in the envelope's size limit");
    if (const std::size_t smaller = serialize(e).size(); smaller < size) {
      size = smaller;
    } else {
      e.extensions = std::move(kept);
    }
  }
  if (size > target && (e.raw_response.sealed || (e.original_input && e.original_input->sealed))) {
    e.raw_response.sealed.reset();
    if (e.original_input) e.original_input->sealed.reset();
    size = serialize(e).size();
  }
  if (size > max_bytes) {
    reduce_envelope(e);
    size = serialize(e).size();
  }
  share_room(raw, input, max_bytes - std::min(size, max_bytes));
  return serialize(e).size();
}

}  // namespace detail

LLMDLQ_INLINE std::size_t fit_envelope(envelope& e, std::size_t max_bytes) {
  max_bytes = std::max(max_bytes, envelope_limits::min_bytes);
  const std::size_t extensions_size = detail::bound_fields(e);
  if (const std::size_t bound = detail::envelope_size_bound(e, extensions_size); bound <= max_bytes) return bound;
  return detail::fit_large_envelope(e, max_bytes);
}

LLMDLQ_END_NAMESPACE
