// SPDX-License-Identifier: MIT
// The envelope's JSON, written field by field in the order of
// schemas/envelope-v1.json; empty fields are left out.
#pragma once

#include <cmath>

#include <boost/json/serialize.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"

LLMDLQ_BEGIN_NAMESPACE
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

}  // namespace detail

namespace detail {

// Each object is left out when none of its fields is set.
inline void put_object(boost::json::object& o, std::string_view key, boost::json::object member) {
  if (!member.empty()) o.emplace(key, std::move(member));
}

inline boost::json::object source_to_json(const source_reference& s) {
  boost::json::object o;
  put_text(o, "uri", s.uri);
  put_text(o, "sha256", s.sha256);
  return o;
}

inline boost::json::object prompt_to_json(const prompt_reference& p) {
  boost::json::object o;
  put_text(o, "template_id", p.template_id);
  put_text(o, "version", p.version);
  put_text(o, "sha256", p.sha256);
  return o;
}

inline boost::json::object model_to_json(const model_reference& m) {
  boost::json::object o;
  put_text(o, "provider", m.provider);
  put_text(o, "name", m.name);
  put_text(o, "version", m.version);
  put_number(o, "temperature", m.temperature);
  put_optional(o, "max_tokens", m.max_tokens);
  put_optional(o, "seed", m.seed);
  return o;
}

inline boost::json::object versions_to_json(const version_set& v) {
  boost::json::object o;
  put_text(o, "schema", v.schema);
  put_text(o, "prompt", v.prompt);
  put_text(o, "model", v.model);
  put_text(o, "ocr", v.ocr);
  put_text(o, "pipeline", v.pipeline);
  return o;
}

inline boost::json::object failure_to_json(const failure_details& f) {
  boost::json::object o;
  o.emplace("category", to_string(f.category));
  o.emplace("code", f.code);
  o.emplace("message", f.message);
  boost::json::array errors;
  for (const auto& error : f.errors) errors.push_back(to_json(error));
  o.emplace("errors", std::move(errors));
  if (f.syntax) {
    o.emplace("syntax", boost::json::object{
                            {"offset", f.syntax->offset}, {"line", f.syntax->line}, {"column", f.syntax->column}});
  }
  if (f.cancelled_at) {
    boost::json::object at{{"offset", f.cancelled_at->offset}};
    if (f.cancelled_at->tokens) at.emplace("tokens", *f.cancelled_at->tokens);
    o.emplace("cancelled_at", std::move(at));
  }
  return o;
}

inline boost::json::object confidence_to_json(const confidence_score& c) {
  boost::json::object o;
  put_number(o, "score", c.score);
  put_number(o, "threshold", c.threshold);
  return o;
}

inline boost::json::object attempts_to_json(const attempt_summary& a) {
  boost::json::object o{{"count", a.count}, {"max", a.max}};
  put_time(o, "first_failure_at", a.first_failure_at);
  put_time(o, "last_failure_at", a.last_failure_at);
  if (!a.history.empty()) {
    boost::json::array history;
    for (const auto& record : a.history) history.push_back(attempt_to_json(record));
    o.emplace("history", std::move(history));
  }
  return o;
}

inline boost::json::object origin_to_json(const origin_reference& r) {
  boost::json::object o;
  put_text(o, "service", r.service);
  put_text(o, "worker", r.worker);
  put_text(o, "topic", r.topic);
  put_optional(o, "partition", r.partition);
  put_optional(o, "offset", r.offset);
  return o;
}

inline boost::json::object tool_call_to_json(const tool_call_reference& call) {
  boost::json::object o{{"name", call.name}};
  put_text(o, "id", call.id);
  put_optional(o, "index", call.index);
  return o;
}

inline boost::json::object redrive_to_json(const redrive_reference& link) {
  return {{"of", link.of}, {"count", link.count}};
}

}  // namespace detail

LLMDLQ_INLINE boost::json::value to_json(const envelope& e) {
  using namespace detail;
  boost::json::object o;
  o.emplace("envelope_version", e.envelope_version);
  o.emplace("dlq_id", e.dlq_id);
  o.emplace("created_at", format_rfc3339(e.created_at));
  put_text(o, "idempotency_key", e.idempotency_key);
  if (e.idempotency_key_derived) o.emplace("idempotency_key_derived", true);
  put_text(o, "record_id", e.record_id);
  put_text(o, "correlation_id", e.correlation_id);
  put_text(o, "trace_id", e.trace_id);
  put_object(o, "source_ref", source_to_json(e.source_ref));
  put_object(o, "prompt", prompt_to_json(e.prompt));
  put_object(o, "model", model_to_json(e.model));
  put_object(o, "versions", versions_to_json(e.versions));
  o.emplace("failure", failure_to_json(e.failure));
  o.emplace("triage", boost::json::object{{"class", to_string(e.triage.kind)},
                                          {"action", to_string(e.triage.action)},
                                          {"auto_replayable", e.triage.auto_replayable}});
  put_object(o, "confidence", confidence_to_json(e.confidence));
  o.emplace("raw_response", captured_to_json(e.raw_response));
  if (e.original_input) o.emplace("original_input", captured_to_json(*e.original_input));
  if (!e.redactions.empty()) {
    boost::json::array redactions;
    for (const auto& r : e.redactions) redactions.push_back(redaction_to_json(r));
    o.emplace("redactions", std::move(redactions));
  }
  o.emplace("attempts", attempts_to_json(e.attempts));
  put_object(o, "origin", origin_to_json(e.origin));
  if (e.tool_call) o.emplace("tool_call", tool_call_to_json(*e.tool_call));
  if (e.redrive) o.emplace("redrive", redrive_to_json(*e.redrive));
  put_time(o, "expires_at", e.expires_at);
  if (!e.extensions.empty()) o.emplace("extensions", e.extensions);
  return o;
}

LLMDLQ_INLINE std::string serialize(const envelope& e) { return boost::json::serialize(to_json(e)); }

LLMDLQ_END_NAMESPACE
