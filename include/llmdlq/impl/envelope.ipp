// SPDX-License-Identifier: MIT
// Definitions for envelope.hpp: the JSON mapping, field by field, and the
// size limit.
#pragma once

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/json_parser.hpp"

namespace llmdlq {

LLMDLQ_INLINE captured_text captured_text::of(std::string_view whole) {
  if (simdjson::validate_utf8(whole.data(), whole.size())) {
    return captured_text{std::string(whole), whole.size(), detail::sha256_hex(whole), false, false};
  }
  return captured_text{detail::base64(whole), whole.size(), detail::sha256_hex(whole), false, true};
}

namespace detail {

inline void put_text(boost::json::object& o, std::string_view key, const std::string& text) {
  if (!text.empty()) o.emplace(key, text);
}

template <class T>
void put_optional(boost::json::object& o, std::string_view key, const std::optional<T>& v) {
  if (v) o.emplace(key, *v);
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
  return o;
}

// Reads JSON into envelope fields, remembering the first problem and where.
class envelope_reader {
 public:
  [[nodiscard]] const std::optional<envelope_error>& error() const noexcept { return error_; }

  const boost::json::object* object(const boost::json::value* v, const std::string& path) {
    if (!v) return nullptr;
    if (!v->is_object()) return fail(path, "must be an object"), nullptr;
    return &v->get_object();
  }
  const boost::json::object* required_object(const boost::json::object& o, std::string_view key,
                                             const std::string& path) {
    const auto* v = o.if_contains(key);
    if (!v) return fail(path + "/" + std::string(key), "is required"), nullptr;
    return object(v, path + "/" + std::string(key));
  }

  void text(const boost::json::object& o, std::string_view key, const std::string& path, std::string& out,
            bool required = false) {
    const auto* v = o.if_contains(key);
    if (!v) {
      if (required) fail(path + "/" + std::string(key), "is required");
      return;
    }
    if (!v->is_string()) return fail(path + "/" + std::string(key), "must be a string");
    out = std::string(v->get_string());
  }
  void optional_text(const boost::json::object& o, std::string_view key, const std::string& path,
                     std::optional<std::string>& out) {
    if (o.contains(key)) text(o, key, path, out.emplace());
  }

  template <class Int>
  void integer(const boost::json::object& o, std::string_view key, const std::string& path, Int& out,
               bool required = false) {
    const auto* v = o.if_contains(key);
    if (!v) {
      if (required) fail(path + "/" + std::string(key), "is required");
      return;
    }
    boost::json::error_code ec;
    const auto n = v->to_number<Int>(ec);
    if (ec || v->is_double()) return fail(path + "/" + std::string(key), "must be an integer in range");
    out = n;
  }
  template <class Int>
  void optional_integer(const boost::json::object& o, std::string_view key, const std::string& path,
                        std::optional<Int>& out) {
    if (o.contains(key)) integer(o, key, path, out.emplace());
  }
  void optional_number(const boost::json::object& o, std::string_view key, const std::string& path,
                       std::optional<double>& out) {
    const auto* v = o.if_contains(key);
    if (!v) return;
    if (!v->is_number()) return fail(path + "/" + std::string(key), "must be a number");
    out = v->to_number<double>();
  }
  void boolean(const boost::json::object& o, std::string_view key, const std::string& path, bool& out) {
    const auto* v = o.if_contains(key);
    if (!v) return;
    if (!v->is_bool()) return fail(path + "/" + std::string(key), "must be a boolean");
    out = v->get_bool();
  }
  void time(const boost::json::object& o, std::string_view key, const std::string& path,
            std::optional<timestamp>& out, bool required = false) {
    std::string t;
    text(o, key, path, t, required);
    if (t.empty()) return;
    out = parse_rfc3339(t);
    if (!out) fail(path + "/" + std::string(key), "must be an RFC 3339 date-time");
  }

  template <class Enum>
  void enumeration(const boost::json::object& o, std::string_view key, const std::string& path, Enum& out,
                   std::optional<Enum> (*from)(std::string_view) noexcept) {
    std::string name;
    text(o, key, path, name, true);
    if (name.empty()) return;
    if (const auto value = from(name)) {
      out = *value;
    } else {
      fail(path + "/" + std::string(key), fmt::format("unknown value '{}'", name));
    }
  }

  void captured(const boost::json::object& o, const std::string& path, captured_text& out) {
    optional_text(o, "text", path, out.text);
    integer(o, "length", path, out.length, true);
    text(o, "sha256", path, out.sha256, true);
    boolean(o, "cut", path, out.cut);
    std::string encoding;
    text(o, "encoding", path, encoding);
    if (encoding == "base64") {
      out.base64 = true;
    } else if (!encoding.empty()) {
      fail(path + "/encoding", "must be base64 when present");
    }
  }

  void fail(std::string path, std::string message) {
    if (!error_) error_ = envelope_error{std::move(path), std::move(message)};
  }

 private:
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
  put_optional(model, "temperature", e.model.temperature);
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
  put_optional(confidence, "score", e.confidence.score);
  put_optional(confidence, "threshold", e.confidence.threshold);
  if (!confidence.empty()) o.emplace("confidence", std::move(confidence));

  o.emplace("raw_response", detail::captured_to_json(e.raw_response));
  if (e.original_input) o.emplace("original_input", detail::captured_to_json(*e.original_input));

  boost::json::object attempts{{"count", e.attempts.count}, {"max", e.attempts.max}};
  detail::put_time(attempts, "first_failure_at", e.attempts.first_failure_at);
  detail::put_time(attempts, "last_failure_at", e.attempts.last_failure_at);
  if (!e.attempts.history.empty()) {
    boost::json::array history;
    for (const auto& a : e.attempts.history) {
      boost::json::object record{{"strategy", a.strategy}, {"outcome", a.outcome}, {"tokens", a.tokens}};
      detail::put_time(record, "at", a.at);
      history.push_back(std::move(record));
    }
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
  detail::envelope_reader r;
  envelope e;
  const auto* o = r.object(&json, "");
  if (!o) return unexpected(r.error().value_or(envelope_error{"", "must be an object"}));
  r.text(*o, "envelope_version", "", e.envelope_version, true);
  if (!r.error() && e.envelope_version != envelope::current_version) {
    r.fail("/envelope_version", fmt::format("version '{}' is not {}", e.envelope_version,
                                            envelope::current_version));
  }
  r.text(*o, "dlq_id", "", e.dlq_id, true);
  std::optional<timestamp> created;
  r.time(*o, "created_at", "", created, true);
  if (created) e.created_at = *created;
  r.text(*o, "idempotency_key", "", e.idempotency_key);
  r.boolean(*o, "idempotency_key_derived", "", e.idempotency_key_derived);
  r.text(*o, "record_id", "", e.record_id);
  r.text(*o, "correlation_id", "", e.correlation_id);
  r.text(*o, "trace_id", "", e.trace_id);

  if (const auto* s = r.object(o->if_contains("source_ref"), "/source_ref")) {
    r.text(*s, "uri", "/source_ref", e.source_ref.uri);
    r.text(*s, "sha256", "/source_ref", e.source_ref.sha256);
  }
  if (const auto* p = r.object(o->if_contains("prompt"), "/prompt")) {
    r.text(*p, "template_id", "/prompt", e.prompt.template_id);
    r.text(*p, "version", "/prompt", e.prompt.version);
    r.text(*p, "sha256", "/prompt", e.prompt.sha256);
  }
  if (const auto* m = r.object(o->if_contains("model"), "/model")) {
    r.text(*m, "provider", "/model", e.model.provider);
    r.text(*m, "name", "/model", e.model.name);
    r.text(*m, "version", "/model", e.model.version);
    r.optional_number(*m, "temperature", "/model", e.model.temperature);
    r.optional_integer(*m, "max_tokens", "/model", e.model.max_tokens);
    r.optional_integer(*m, "seed", "/model", e.model.seed);
  }
  if (const auto* v = r.object(o->if_contains("versions"), "/versions")) {
    r.text(*v, "schema", "/versions", e.versions.schema);
    r.text(*v, "prompt", "/versions", e.versions.prompt);
    r.text(*v, "model", "/versions", e.versions.model);
    r.text(*v, "ocr", "/versions", e.versions.ocr);
    r.text(*v, "pipeline", "/versions", e.versions.pipeline);
  }
  if (const auto* f = r.required_object(*o, "failure", "")) {
    r.enumeration(*f, "category", "/failure", e.failure.category, &failure_category_from);
    r.text(*f, "code", "/failure", e.failure.code, true);
    r.text(*f, "message", "/failure", e.failure.message, true);
    if (const auto* errors = f->if_contains("errors")) {
      if (!errors->is_array()) {
        r.fail("/failure/errors", "must be an array");
      } else {
        for (std::size_t i = 0; i < errors->get_array().size(); ++i) {
          const std::string path = "/failure/errors/" + std::to_string(i);
          if (const auto* error = r.object(&errors->get_array()[i], path)) {
            auto& out = e.failure.errors.emplace_back();
            r.text(*error, "instance_path", path, out.instance_path, true);
            r.text(*error, "schema_path", path, out.schema_path, true);
            r.text(*error, "keyword", path, out.keyword, true);
            r.text(*error, "message", path, out.message, true);
          }
        }
      }
    }
    if (const auto* s = r.object(f->if_contains("syntax"), "/failure/syntax")) {
      auto& at = e.failure.syntax.emplace();
      r.integer(*s, "offset", "/failure/syntax", at.offset, true);
      r.integer(*s, "line", "/failure/syntax", at.line, true);
      r.integer(*s, "column", "/failure/syntax", at.column, true);
    }
  }
  if (const auto* t = r.required_object(*o, "triage", "")) {
    r.enumeration(*t, "class", "/triage", e.triage.kind, &triage_class_from);
    r.enumeration(*t, "action", "/triage", e.triage.action, &recommended_action_from);
    r.boolean(*t, "auto_replayable", "/triage", e.triage.auto_replayable);
  }
  if (const auto* c = r.object(o->if_contains("confidence"), "/confidence")) {
    r.optional_number(*c, "score", "/confidence", e.confidence.score);
    r.optional_number(*c, "threshold", "/confidence", e.confidence.threshold);
  }
  if (const auto* raw = r.required_object(*o, "raw_response", "")) r.captured(*raw, "/raw_response", e.raw_response);
  if (const auto* input = r.object(o->if_contains("original_input"), "/original_input")) {
    r.captured(*input, "/original_input", e.original_input.emplace());
  }
  if (const auto* a = r.required_object(*o, "attempts", "")) {
    r.integer(*a, "count", "/attempts", e.attempts.count, true);
    r.integer(*a, "max", "/attempts", e.attempts.max, true);
    r.time(*a, "first_failure_at", "/attempts", e.attempts.first_failure_at);
    r.time(*a, "last_failure_at", "/attempts", e.attempts.last_failure_at);
    if (const auto* history = a->if_contains("history")) {
      if (!history->is_array()) {
        r.fail("/attempts/history", "must be an array");
      } else {
        for (std::size_t i = 0; i < history->get_array().size(); ++i) {
          const std::string path = "/attempts/history/" + std::to_string(i);
          if (const auto* record = r.object(&history->get_array()[i], path)) {
            auto& out = e.attempts.history.emplace_back();
            r.text(*record, "strategy", path, out.strategy, true);
            r.text(*record, "outcome", path, out.outcome, true);
            r.integer(*record, "tokens", path, out.tokens);
            r.time(*record, "at", path, out.at);
          }
        }
      }
    }
  }
  if (const auto* origin = r.object(o->if_contains("origin"), "/origin")) {
    r.text(*origin, "service", "/origin", e.origin.service);
    r.text(*origin, "worker", "/origin", e.origin.worker);
    r.text(*origin, "topic", "/origin", e.origin.topic);
    r.optional_integer(*origin, "partition", "/origin", e.origin.partition);
    r.optional_integer(*origin, "offset", "/origin", e.origin.offset);
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

// Keeps the first `bytes` bytes of `text`, backing off to a UTF-8 boundary.
inline void cut_text(captured_text& captured, std::size_t keep) {
  if (!captured.text || captured.text->size() <= keep) return;
  if (captured.base64) keep -= keep % 4;  // whole base64 quanta
  while (keep > 0 && (static_cast<unsigned char>((*captured.text)[keep]) & 0xC0) == 0x80) --keep;
  captured.text->resize(keep);
  captured.cut = true;
}

}  // namespace detail

namespace detail {

// An upper bound on the JSON size of `e`: every byte of text escaped to six
// (\u00XX), plus room for the fixed fields. Cheap, and usually enough to
// show that an envelope fits without serializing it.
inline std::size_t envelope_size_bound(const envelope& e) {
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
  for (const auto& a : e.attempts.history) text += a.strategy.size() + a.outcome.size() + 96;
  std::size_t bound = 6 * text + 2048;
  if (!e.extensions.empty()) bound += boost::json::serialize(e.extensions).size();
  return bound;
}

}  // namespace detail

LLMDLQ_INLINE std::size_t fit_envelope(envelope& e, std::size_t max_bytes) {
  if (const std::size_t bound = detail::envelope_size_bound(e); bound <= max_bytes) return bound;
  std::size_t size = serialize(e).size();
  // Escaping only lengthens text, so cutting n bytes of text saves at least
  // n bytes of JSON; the loop allows for the `"cut":true` a first cut adds.
  for (captured_text* captured : {e.original_input ? &*e.original_input : nullptr, &e.raw_response}) {
    while (size > max_bytes && captured && captured->text && !captured->text->empty()) {
      const std::size_t excess = size - max_bytes + 16;
      detail::cut_text(*captured, captured->text->size() > excess ? captured->text->size() - excess : 0);
      size = serialize(e).size();
    }
  }
  while (size > max_bytes && !e.failure.errors.empty()) {
    e.failure.errors.resize(e.failure.errors.size() / 2);
    size = serialize(e).size();
  }
  if (size > max_bytes && !e.extensions.empty()) {
    e.extensions.clear();
    e.extensions.emplace("llmdlq_dropped", "extensions exceeded the envelope size limit");
    size = serialize(e).size();
  }
  return size;
}

}  // namespace llmdlq
