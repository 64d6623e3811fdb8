// SPDX-License-Identifier: MIT
// The envelope of a failure process_response or make_envelope found: the
// host's context cleaned into the envelope's alphabet, ids derived, errors
// capped, then redacted, sealed or fitted to its size.
#pragma once

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/json/utf8.hpp"
#include "llmdlq/dlq_id.hpp"
#include "llmdlq/process.hpp"

LLMDLQ_BEGIN_NAMESPACE
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
  for (char& c : text) c = detail::ascii_lower(c);
  const bool hex = text.size() == 64 && std::all_of(text.begin(), text.end(), detail::is_hex_digit);
  return hex ? text : std::string();
}

// A failure code in the envelope's alphabet ([a-z0-9_.-]): upper case
// lowered, anything else an underscore; the default code when nothing is left.
inline std::string code_or_default(std::string code, failure_category category) {
  for (char& c : code) {
    c = detail::ascii_lower(c);
    if (!((c >= 'a' && c <= 'z') || detail::is_ascii_digit(c) || c == '_' || c == '.' || c == '-')) c = '_';
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

// `raw_utf8_end`: where the raw text stops being UTF-8 (its size: all valid).
inline envelope build_envelope(timestamp now, failure_report failure, std::string_view raw, std::size_t raw_utf8_end,
                               const request_context& context, const process_config& config,
                               std::string_view schema_fingerprint, std::span<const pii_path> pii_paths) {
  envelope e;
  e.created_at = now;
  e.raw_response = captured_text::of(raw, raw_utf8_end == raw.size());
  if (!context.original_input.empty()) e.original_input = captured_text::of(context.original_input);
  e.attempts.count = std::max<std::uint32_t>(context.attempt, 1);
  // One failure, one id: derived from the key and the attempt, never drawn.
  if (context.idempotency_key.empty()) {
    e.idempotency_key = derive_idempotency_key(schema_fingerprint, e.raw_response.sha256,
                                               e.original_input ? std::string_view(e.original_input->sha256)
                                                                : std::string_view(detail::sha256_hex("")));
    e.idempotency_key_derived = true;
    // The calls of one reply may have the same arguments: each keeps a letter, by its place and the tool named.
    if (const auto& call = context.tool_call) {
      e.idempotency_key += fmt::format("/tool_calls/{}/{}", call->index.value_or(0),
                                       detail::sha256_hex(call->name).substr(0, 16));
    }
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
  for (std::string* field :
       {&e.versions.schema, &e.versions.prompt, &e.versions.model, &e.versions.ocr, &e.versions.pipeline}) {
    make_valid_utf8(*field);
  }
  const failure_category category = failure.category;
  e.failure.category = category;
  e.failure.code = code_or_default(config.envelope.failure_code
                                       ? config.envelope.failure_code(category)
                                       : default_failure_code(category, config.envelope.failure_code_prefix),
                                   category);
  e.failure.message = clean(std::move(failure.message));
  std::vector<validation_error>& errors = failure.errors;
  if (errors.size() > config.judging.max_errors) {
    // The last error may be the structural one found past the cap (see
    // validate_options::find_structural): it stays, in the last kept place.
    if (config.judging.max_errors > 0) errors[config.judging.max_errors - 1] = std::move(errors.back());
    errors.resize(config.judging.max_errors);
  }
  e.failure.errors = std::move(errors);
  e.failure.syntax = failure.syntax;
  e.failure.cancelled_at = context.cancelled_at;
  e.triage = triage_for(category, failure.repaired_locally);
  e.confidence = {finite(context.confidence), finite(config.judging.min_confidence)};
  e.attempts.max = config.envelope.max_attempts;
  if (e.attempts.count == 1) e.attempts.first_failure_at = now;
  e.attempts.last_failure_at = now;
  e.origin = context.origin;
  e.origin.partition = non_negative(e.origin.partition);  // librdkafka's "unknown" is -1, its invalid offset -1001
  e.origin.offset = non_negative(e.origin.offset);
  for (std::string* field : {&e.origin.service, &e.origin.worker, &e.origin.topic}) make_valid_utf8(*field);
  e.tool_call = context.tool_call;
  if (e.tool_call) {
    make_valid_utf8(e.tool_call->name);
    make_valid_utf8(e.tool_call->id);
  }
  // A link read from a message (a header anyone could write) is kept only when it names a letter.
  if (context.redrive && context.redrive->count >= 1 && is_dlq_id(context.redrive->of)) e.redrive = context.redrive;
  e.expires_at = config.envelope.retention.expires_at(e);  // after the triage and attempts it depends on
  e.extensions = context.extensions;
  if (!e.extensions.empty()) {
    boost::json::value extensions(std::move(e.extensions));
    clean_json(extensions);
    e.extensions = std::move(extensions.as_object());
  }
  config.privacy.redaction.redact(e, pii_paths);
  if (config.privacy.cipher) {
    detail::seal_originals(e, raw, context.original_input, *config.privacy.cipher, config.envelope.max_envelope_bytes);
  } else {
    fit_envelope(e, config.envelope.max_envelope_bytes);
  }
  return e;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
