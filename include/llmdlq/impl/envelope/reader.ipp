// SPDX-License-Identifier: MIT
// The envelope read back from JSON, checked against the version 1 schema as
// it is read: the first problem is reported with its JSON Pointer.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/format/identifiers.hpp"
#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/dlq_id.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/json_parser.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

constexpr bool is_lower_hex(char c) noexcept { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

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
    if (std::cmp_less(n, minimum))
      return fail(path + "/" + std::string(key), fmt::format("must be at least {}", minimum));
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
  void time(const boost::json::object& o, std::string_view key, const std::string& path, std::optional<timestamp>& out,
            unsigned rules = 0) {
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

namespace detail {

using envelope_field = envelope_reader;  // its rules: envelope_field::required, ::non_empty

inline void read_identity(envelope_reader& r, const boost::json::object& o, envelope& e) {
  r.text(o, "envelope_version", "", e.envelope_version, envelope_field::required);
  if (!r.error() && e.envelope_version != envelope::current_version) {
    r.fail("/envelope_version", fmt::format("version '{}' is not {}", e.envelope_version, envelope::current_version));
  }
  r.known_members(o, "",
                  {"envelope_version",
                   "dlq_id",
                   "created_at",
                   "idempotency_key",
                   "idempotency_key_derived",
                   "record_id",
                   "correlation_id",
                   "trace_id",
                   "source_ref",
                   "prompt",
                   "model",
                   "versions",
                   "failure",
                   "triage",
                   "confidence",
                   "raw_response",
                   "original_input",
                   "redactions",
                   "attempts",
                   "origin",
                   "tool_call",
                   "redrive",
                   "expires_at",
                   "extensions"});
  r.checked_text(o, "dlq_id", "", e.dlq_id, envelope_field::required, is_dlq_id, "a lowercase UUID of version 7 or 8");
  std::optional<timestamp> created;
  r.time(o, "created_at", "", created, envelope_field::required);
  if (created) e.created_at = *created;
  r.text(o, "idempotency_key", "", e.idempotency_key, envelope_field::non_empty);
  r.boolean(o, "idempotency_key_derived", "", e.idempotency_key_derived);
  if (o.contains("idempotency_key_derived") && !e.idempotency_key_derived) {
    r.fail("/idempotency_key_derived", "must be true when present");
  }
  r.text(o, "record_id", "", e.record_id, envelope_field::non_empty);
  r.text(o, "correlation_id", "", e.correlation_id, envelope_field::non_empty);
  r.text(o, "trace_id", "", e.trace_id, envelope_field::non_empty);
}

// source_ref, prompt, model and versions: what the failure was written under.
inline void read_provenance(envelope_reader& r, const boost::json::object& o, envelope& e) {
  if (const auto* s = r.non_empty_object(o, "source_ref", "")) {
    r.known_members(*s, "/source_ref", {"uri", "sha256"});
    r.text(*s, "uri", "/source_ref", e.source_ref.uri, envelope_field::non_empty);
    r.text(*s, "sha256", "/source_ref", e.source_ref.sha256, envelope_field::non_empty);
  }
  if (const auto* p = r.non_empty_object(o, "prompt", "")) {
    r.known_members(*p, "/prompt", {"template_id", "version", "sha256"});
    r.text(*p, "template_id", "/prompt", e.prompt.template_id, envelope_field::non_empty);
    r.text(*p, "version", "/prompt", e.prompt.version, envelope_field::non_empty);
    r.checked_text(*p, "sha256", "/prompt", e.prompt.sha256, 0, is_sha256_hex, "a lowercase hex SHA-256");
  }
  if (const auto* m = r.non_empty_object(o, "model", "")) {
    r.known_members(*m, "/model", {"provider", "name", "version", "temperature", "max_tokens", "seed"});
    r.text(*m, "provider", "/model", e.model.provider, envelope_field::non_empty);
    r.text(*m, "name", "/model", e.model.name, envelope_field::non_empty);
    r.text(*m, "version", "/model", e.model.version, envelope_field::non_empty);
    r.optional_number(*m, "temperature", "/model", e.model.temperature);
    r.optional_integer(*m, "max_tokens", "/model", e.model.max_tokens);
    r.optional_integer(*m, "seed", "/model", e.model.seed);
  }
  if (const auto* v = r.non_empty_object(o, "versions", "")) {
    r.known_members(*v, "/versions", {"schema", "prompt", "model", "ocr", "pipeline"});
    r.text(*v, "schema", "/versions", e.versions.schema, envelope_field::non_empty);
    r.text(*v, "prompt", "/versions", e.versions.prompt, envelope_field::non_empty);
    r.text(*v, "model", "/versions", e.versions.model, envelope_field::non_empty);
    r.text(*v, "ocr", "/versions", e.versions.ocr, envelope_field::non_empty);
    r.text(*v, "pipeline", "/versions", e.versions.pipeline, envelope_field::non_empty);
  }
}

inline void read_failure(envelope_reader& r, const boost::json::object& f, failure_details& out) {
  r.known_members(f, "/failure", {"category", "code", "message", "errors", "syntax", "cancelled_at"});
  r.enumeration(f, "category", "/failure", out.category, &failure_category_from);
  r.checked_text(f, "code", "/failure", out.code, envelope_field::required, is_failure_code,
                 "lowercase letters, digits, '_', '.' and '-'");
  r.text(f, "message", "/failure", out.message, envelope_field::required);
  if (const auto* errors = r.array(f, "errors", "/failure", envelope_field::required)) {
    for (std::size_t i = 0; i < errors->size(); ++i) {
      const std::string path = "/failure/errors/" + std::to_string(i);
      if (const auto* error = r.object(&(*errors)[i], path)) {
        auto& e = out.errors.emplace_back();
        r.known_members(*error, path, {"instance_path", "schema_path", "keyword", "message", "defect"});
        r.checked_text(*error, "instance_path", path, e.instance_path, envelope_field::required, is_json_pointer,
                       "a JSON Pointer");
        r.text(*error, "schema_path", path, e.schema_path, envelope_field::required);
        r.text(*error, "keyword", path, e.keyword, envelope_field::required | envelope_field::non_empty);
        r.text(*error, "message", path, e.message, envelope_field::required);
        if (error->contains("defect")) r.enumeration(*error, "defect", path, e.defect, &schema_defect_from);
      }
    }
  }
  if (const auto* s = r.object(f.if_contains("syntax"), "/failure/syntax")) {
    auto& at = out.syntax.emplace();
    r.known_members(*s, "/failure/syntax", {"offset", "line", "column"});
    r.integer(*s, "offset", "/failure/syntax", at.offset, envelope_field::required);
    r.integer(*s, "line", "/failure/syntax", at.line, envelope_field::required, 1);
    r.integer(*s, "column", "/failure/syntax", at.column, envelope_field::required, 1);
  }
  if (const auto* c = r.object(f.if_contains("cancelled_at"), "/failure/cancelled_at")) {
    auto& at = out.cancelled_at.emplace();
    r.known_members(*c, "/failure/cancelled_at", {"offset", "tokens"});
    r.integer(*c, "offset", "/failure/cancelled_at", at.offset, envelope_field::required);
    r.optional_integer(*c, "tokens", "/failure/cancelled_at", at.tokens, 0);
  }
}

// The triage and the confidence score: what the failure means.
inline void read_verdict(envelope_reader& r, const boost::json::object& o, envelope& e) {
  if (const auto* t = r.required_object(o, "triage", "")) {
    r.known_members(*t, "/triage", {"class", "action", "auto_replayable"});
    r.enumeration(*t, "class", "/triage", e.triage.kind, &triage_class_from);
    r.enumeration(*t, "action", "/triage", e.triage.action, &recommended_action_from);
    r.boolean(*t, "auto_replayable", "/triage", e.triage.auto_replayable, envelope_field::required);
  }
  if (const auto* c = r.non_empty_object(o, "confidence", "")) {
    r.known_members(*c, "/confidence", {"score", "threshold"});
    r.optional_number(*c, "score", "/confidence", e.confidence.score);
    r.optional_number(*c, "threshold", "/confidence", e.confidence.threshold);
  }
}

// raw_response, original_input and what redaction took out of them.
inline void read_texts(envelope_reader& r, const boost::json::object& o, envelope& e) {
  if (const auto* raw = r.required_object(o, "raw_response", "")) r.captured(*raw, "/raw_response", e.raw_response);
  if (const auto* input = r.object(o.if_contains("original_input"), "/original_input")) {
    r.captured(*input, "/original_input", e.original_input.emplace());
  }
  if (const auto* redactions = r.array(o, "redactions", "")) {
    for (std::size_t i = 0; i < redactions->size(); ++i) {
      const std::string path = "/redactions/" + std::to_string(i);
      if (const auto* record = r.object(&(*redactions)[i], path))
        r.redaction(*record, path, e.redactions.emplace_back());
    }
  }
}

inline void read_attempt(envelope_reader& r, const boost::json::object& record, const std::string& path,
                         attempt_record& out) {
  r.known_members(record, path, {"strategy", "outcome", "tokens", "at", "model", "latency_ms", "fingerprint"});
  r.text(record, "strategy", path, out.strategy, envelope_field::required | envelope_field::non_empty);
  r.text(record, "outcome", path, out.outcome, envelope_field::required | envelope_field::non_empty);
  r.integer(record, "tokens", path, out.tokens, 0, 0);
  r.time(record, "at", path, out.at);
  r.text(record, "model", path, out.model, envelope_field::non_empty);
  r.optional_integer(record, "latency_ms", path, out.latency_ms, 0);
  r.text(record, "fingerprint", path, out.fingerprint, envelope_field::non_empty);
}

inline void read_attempts(envelope_reader& r, const boost::json::object& a, attempt_summary& out) {
  r.known_members(a, "/attempts", {"count", "max", "first_failure_at", "last_failure_at", "history"});
  r.integer(a, "count", "/attempts", out.count, envelope_field::required, 1);
  r.integer(a, "max", "/attempts", out.max, envelope_field::required);
  r.time(a, "first_failure_at", "/attempts", out.first_failure_at);
  r.time(a, "last_failure_at", "/attempts", out.last_failure_at);
  if (const auto* history = r.array(a, "history", "/attempts")) {
    for (std::size_t i = 0; i < history->size(); ++i) {
      const std::string path = "/attempts/history/" + std::to_string(i);
      if (const auto* record = r.object(&(*history)[i], path))
        read_attempt(r, *record, path, out.history.emplace_back());
    }
  }
}

inline void read_origin(envelope_reader& r, const boost::json::object& origin, origin_reference& out) {
  r.known_members(origin, "/origin", {"service", "worker", "topic", "partition", "offset"});
  r.text(origin, "service", "/origin", out.service, envelope_field::non_empty);
  r.text(origin, "worker", "/origin", out.worker, envelope_field::non_empty);
  r.text(origin, "topic", "/origin", out.topic, envelope_field::non_empty);
  r.optional_integer(origin, "partition", "/origin", out.partition, 0);
  r.optional_integer(origin, "offset", "/origin", out.offset, 0);
}

inline void read_redrive(envelope_reader& r, const boost::json::object& link, redrive_reference& out) {
  r.known_members(link, "/redrive", {"of", "count"});
  r.checked_text(link, "of", "/redrive", out.of, envelope_field::required, is_dlq_id,
                 "a lowercase UUID of version 7 or 8");
  r.integer(link, "count", "/redrive", out.count, envelope_field::required, 1);
}

inline void read_tool_call(envelope_reader& r, const boost::json::object& call, tool_call_reference& out) {
  r.known_members(call, "/tool_call", {"name", "id", "index"});
  r.text(call, "name", "/tool_call", out.name, envelope_field::required);
  r.text(call, "id", "/tool_call", out.id, envelope_field::non_empty);
  r.optional_integer(call, "index", "/tool_call", out.index, 0);
}

}  // namespace detail

LLMDLQ_INLINE expected<envelope, envelope_error> envelope_from_json(const boost::json::value& json) {
  using namespace detail;
  envelope_reader r;
  envelope e;
  const auto* o = r.object(&json, "");
  if (!o) return unexpected(r.error().value_or(envelope_error{"", "must be an object"}));
  read_identity(r, *o, e);
  read_provenance(r, *o, e);
  if (const auto* f = r.required_object(*o, "failure", "")) read_failure(r, *f, e.failure);
  read_verdict(r, *o, e);
  read_texts(r, *o, e);
  if (const auto* a = r.required_object(*o, "attempts", "")) read_attempts(r, *a, e.attempts);
  if (const auto* origin = r.non_empty_object(*o, "origin", "")) read_origin(r, *origin, e.origin);
  if (const auto* call = r.object(o->if_contains("tool_call"), "/tool_call")) {
    read_tool_call(r, *call, e.tool_call.emplace());
  }
  if (const auto* link = r.object(o->if_contains("redrive"), "/redrive")) read_redrive(r, *link, e.redrive.emplace());
  r.time(*o, "expires_at", "", e.expires_at);
  if (const auto* extensions = r.object(o->if_contains("extensions"), "/extensions")) e.extensions = *extensions;
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

LLMDLQ_END_NAMESPACE
