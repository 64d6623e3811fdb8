// SPDX-License-Identifier: MIT
// The dead-letter envelope (version 1): everything needed months later to
// answer what the system saw, what it produced, which contract failed, and
// whether it can be replayed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/taxonomy.hpp"
#include "llmdlq/text_location.hpp"
#include "llmdlq/timestamp.hpp"
#include "llmdlq/validation_error.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// The source document, by reference: where it is and its content hash, never the document.
struct source_reference {
  std::string uri;
  std::string sha256;
  friend bool operator==(const source_reference&, const source_reference&) = default;
};

/// The prompt that produced the response: its template and the hash of the rendered text.
struct prompt_reference {
  std::string template_id;
  std::string version;
  std::string sha256;
  friend bool operator==(const prompt_reference&, const prompt_reference&) = default;
};

/// The model that answered, and how it was called.
struct model_reference {
  std::string provider;
  std::string name;
  std::string version;
  std::optional<double> temperature;
  std::optional<std::int64_t> max_tokens;
  std::optional<std::int64_t> seed;
  friend bool operator==(const model_reference&, const model_reference&) = default;
};

/// Versions of everything that shaped the output; a replay compares them to today's.
struct version_set {
  std::string schema;
  std::string prompt;
  std::string model;
  std::string ocr;
  std::string pipeline;
  friend bool operator==(const version_set&, const version_set&) = default;
};

/// What failed.
/// Where a streamed answer was closed because its judge found it dead (see
/// stream_judge.hpp): the raw response is what arrived until then.
struct cancel_point {
  std::uint64_t offset = 0;  ///< the byte after which no continuation could be accepted
  /// Tokens received until the close, when known (a stream's events that
  /// carried answer text: about one per token).
  std::optional<std::uint64_t> tokens;
  friend bool operator==(const cancel_point&, const cancel_point&) = default;
};

struct failure_details {
  failure_category category = failure_category::syntax;
  std::string code;                          ///< stable, chosen by the host: `ocr_structural_broken_json`
  std::string message;                       ///< one line for a person
  std::vector<validation_error> errors;      ///< machine-readable, capped
  std::optional<text_location> syntax;       ///< where a syntax failure is in the raw response
  std::optional<cancel_point> cancelled_at;  ///< a streamed answer closed early: where
  friend bool operator==(const failure_details&, const failure_details&) = default;
};

/// The confidence score the producer reported and the threshold it was held to.
struct confidence_score {
  std::optional<double> score;
  std::optional<double> threshold;
  friend bool operator==(const confidence_score&, const confidence_score&) = default;
};

/// The original of a stored text, encrypted and authenticated for those who
/// hold the key (see field_cipher.hpp). `text` beside it is the redacted view.
struct sealed_text {
  std::string key_id;        ///< which key sealed it
  std::string algorithm;     ///< `xchacha20poly1305-ietf`
  std::string nonce;         ///< base64
  std::string ciphertext;    ///< base64: the ciphertext and its authentication tag
  std::uint64_t length = 0;  ///< bytes sealed: the whole original, or its start when `cut`
  bool cut = false;
  friend bool operator==(const sealed_text&, const sealed_text&) = default;
};

/// A stored text (the raw response, the original input). Its length and hash
/// always describe the whole text, also when `text` was cut to fit the
/// envelope's size limit or removed by redaction.
struct captured_text {
  std::optional<std::string> text;
  std::uint64_t length = 0;  ///< bytes in the whole text
  std::string sha256;        ///< of the whole text
  bool cut = false;          ///< `text` holds only the start of it
  /// `text` is the bytes in base64: they were not valid UTF-8, and JSON
  /// cannot carry them otherwise.
  bool base64 = false;
  std::optional<sealed_text> sealed;  ///< the original, encrypted, when a field cipher is configured
  friend bool operator==(const captured_text&, const captured_text&) = default;

  /// Captures all of `whole`.
  [[nodiscard]] static LLMDLQ_INLINE captured_text of(std::string_view whole);
  /// Captures all of `whole`, which the caller has found to be valid UTF-8
  /// or not (base64 then), so that the text is not read for it again.
  [[nodiscard]] static LLMDLQ_INLINE captured_text of(std::string_view whole, bool valid_utf8);
};

/// What the redactor replaced in one field, by kind: never the values.
struct redaction_summary {
  std::string field;   ///< raw_response, original_input, failure or extensions
  std::string kind;    ///< email, iban, card, ...; a national id's name; a schema path's label
  std::string action;  ///< remove, mask or token (the JSON's `operator`)
  std::uint64_t count = 0;
  std::string path;    ///< the JSON Pointer (`*` for any member or item) when a schema path chose it
  std::string key_id;  ///< the HMAC key of a token
  /// [offset, length] in the original text of the first replacements (at
  /// most max_spans); offsets in a base64 text are of its decoded bytes.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  static constexpr std::size_t max_spans = 8;
  friend bool operator==(const redaction_summary&, const redaction_summary&) = default;
};

/// One recovery attempt on this payload.
struct attempt_record {
  std::string strategy;     ///< local_repair, repair_prompt, escalate_model, relax_schema, revalidate
  std::string outcome;      ///< recovered, relaxed, failed, poison, refusal, call_failed, ...
  std::int64_t tokens = 0;  ///< prompt + completion tokens the attempt spent
  std::optional<timestamp> at;
  std::string model;  ///< the model asked; empty for a local step
  std::optional<std::int64_t> latency_ms;
  /// Of the errors the attempt's answer still had (see error_fingerprint):
  /// the same fingerprint twice means asking again will not help.
  std::string fingerprint;
  friend bool operator==(const attempt_record&, const attempt_record&) = default;
};

/// How an attempt counts against attempts.max, as the recovery ladder counts
/// it: a model call (repair_prompt, escalate_model) counts unless no model
/// answered it (outcome call_failed, or request_refused: the provider
/// refused the request itself); a call that died midway counts, since
/// the model may have answered; a local step never counts.
enum class attempt_weight : std::uint8_t {
  counted,     ///< a model call that spent an attempt
  unanswered,  ///< a model call no model answered
  local,       ///< a zero-token step
};

[[nodiscard]] LLMDLQ_INLINE attempt_weight weight_of(const attempt_record& a) noexcept;

/// How often this payload has failed, and what was tried.
struct attempt_summary {
  std::uint32_t count = 1;
  std::uint32_t max = 2;  ///< automated attempts allowed before it waits for a person
  std::optional<timestamp> first_failure_at;
  std::optional<timestamp> last_failure_at;
  std::vector<attempt_record> history;
  friend bool operator==(const attempt_summary&, const attempt_summary&) = default;
};

/// Where the input came from: enough to replay it to its source.
struct origin_reference {
  std::string service;
  std::string worker;
  std::string topic;
  std::optional<std::int32_t> partition;
  std::optional<std::int64_t> offset;
  friend bool operator==(const origin_reference&, const origin_reference&) = default;
};

/// The tool call whose arguments failed (see tool_call.hpp): which tool the
/// model named, and the provider's id of the call.
struct tool_call_reference {
  std::string name;  ///< as the model wrote it: empty, or a tool no one registered, is itself the failure
  std::string id;    ///< the provider's call id (`call_…`, `toolu_…`); empty when it gave none (Ollama)
  std::optional<std::uint32_t> index;  ///< the call's place among the response's parallel calls
  friend bool operator==(const tool_call_reference&, const tool_call_reference&) = default;
};

/// The earlier letter whose original input was sent back to its source (a
/// redrive, llmdlq/llm/redriver.hpp) and failed again as this letter.
struct redrive_reference {
  std::string of;           ///< the earlier letter's dlq_id
  std::uint32_t count = 1;  ///< the input's automated attempt this redrive was (replays count too)
  friend bool operator==(const redrive_reference&, const redrive_reference&) = default;
};

/// A dead-letter record. Serialized as JSON by to_json(), read back by
/// envelope_from_json(); the round trip is exact. Its JSON Schema is
/// `schemas/envelope-v1.json`.
struct envelope {
  static constexpr std::string_view current_version = "1";

  std::string envelope_version{current_version};
  std::string dlq_id;  ///< derived from idempotency_key + attempt (see dlq_id.hpp)
  timestamp created_at{};
  std::string idempotency_key;
  /// The host gave no key: `idempotency_key` was derived from hashes of the
  /// response, the input and the schema, so identical failures share one record.
  bool idempotency_key_derived = false;
  std::string record_id;
  std::string correlation_id;
  std::string trace_id;
  source_reference source_ref;
  prompt_reference prompt;
  model_reference model;
  version_set versions;
  failure_details failure;
  llmdlq::triage triage;
  confidence_score confidence;
  captured_text raw_response;
  std::optional<captured_text> original_input;
  attempt_summary attempts;
  origin_reference origin;
  /// Set when what failed is a tool call's arguments: `raw_response` is then
  /// those arguments, and the tool's schema the one they failed.
  std::optional<tool_call_reference> tool_call;
  std::optional<redrive_reference> redrive;  ///< the input came back by a redrive and failed again
  /// What was redacted before the envelope left process_llm_response.
  std::vector<redaction_summary> redactions;
  std::optional<timestamp> expires_at;  ///< retention: delete after this
  boost::json::object extensions;       ///< host metadata

  friend bool operator==(const envelope&, const envelope&) = default;
};

/// The most JSON (escaped bytes, without the quotes) fit_envelope leaves in
/// each string field, whatever its size limit. A longer identifier keeps a
/// prefix followed by `…sha256:<hex of the whole>`, so it stays unique,
/// recognisable and the same on every machine; longer prose keeps a prefix
/// followed by `…`; a failure code keeps a plain prefix (its pattern has no `…`).
struct envelope_limits {
  /// The smallest size limit fit_envelope honours: a smaller one is raised to it.
  /// Every envelope fits in it once reduced to its identity, hashes and failure summary.
  static constexpr std::size_t min_bytes = 4096;
  static constexpr std::size_t identifier =
      256;  ///< idempotency_key, record_id, correlation_id, trace_id, tool_call.id
  static constexpr std::size_t label =
      128;  ///< dlq_id, hashes, prompt, model, versions, origin, failure.code, tool_call.name
  static constexpr std::size_t uri = 1024;              ///< source_ref.uri
  static constexpr std::size_t message = 1024;          ///< failure.message
  static constexpr std::size_t error_text = 512;        ///< an error's instance_path, schema_path and message
  static constexpr std::size_t keyword = 64;            ///< an error's keyword; an attempt's strategy and outcome
  static constexpr std::size_t extensions = 16384;      ///< the extensions object as a whole (else replaced by a note)
  static constexpr std::size_t reduced_message = 256;   ///< failure.message of a reduced envelope (less a tool call)
  static constexpr std::size_t reduced_tool_name = 48;  ///< tool_call.name of a reduced envelope (its id is removed)
  static constexpr std::size_t redactions = 32;         ///< redaction summaries kept
  static constexpr std::size_t reduced_redactions = 4;  ///< and in a reduced envelope, without paths or spans
};

/// Why a JSON text is not a version 1 envelope.
struct envelope_error {
  std::string path;  ///< JSON Pointer to the offending field
  std::string message;
};

/// The envelope as JSON. Empty strings and absent optionals are left out, and
/// so are non-finite numbers (a NaN or infinite temperature, score or
/// threshold): JSON cannot carry them.
[[nodiscard]] LLMDLQ_INLINE boost::json::value to_json(const envelope& e);

/// The envelope as compact JSON text.
[[nodiscard]] LLMDLQ_INLINE std::string serialize(const envelope& e);

/// Reads an envelope back. It accepts what `schemas/envelope-v1.json` accepts:
/// every required field present, no unknown field, no empty string where the
/// schema asks for one character, identifiers, hashes and times in their
/// patterns, numbers finite and within their minimums. The error names the
/// first offending field by its JSON Pointer.
[[nodiscard]] LLMDLQ_INLINE expected<envelope, envelope_error> envelope_from_json(const boost::json::value& json);
[[nodiscard]] LLMDLQ_INLINE expected<envelope, envelope_error> parse_envelope(std::string_view json);

/// Makes `e` fit in `max_bytes` of JSON (at least envelope_limits::min_bytes:
/// a smaller limit is raised to it), whatever it holds:
///  1. every string field is bounded by envelope_limits, whatever the limit,
///     and non-finite numbers are removed;
///  2. `raw_response` and `original_input` share the room left: a text that
///     needs at most half of it is kept whole and the other gets the rest,
///     else each gets half. A cut text keeps the longest prefix whose escaped
///     JSON fits, on a UTF-8 (base64: 4-character) boundary, with `cut` set;
///     `length` and `sha256` keep describing the whole text;
///  3. when the other fields leave the texts less than a quarter of the room
///     they need, trailing errors, then attempt records, are removed, then the
///     extensions are replaced by `{"llmdlq_dropped": ...}`, then the sealed
///     originals are removed (the redacted texts stay);
///  4. when it still cannot fit, it is reduced to its identity, hashes,
///     failure summary, triage, confidence, attempt counts and origin,
///     the first redaction summaries (without paths or spans), with
///     `{"llmdlq_reduced": ...}` as its extensions. It is never dropped.
/// Linear in the envelope's size; an envelope that obviously fits is not
/// serialized. Returns an upper bound on the size of its JSON, exact when
/// anything had to be cut. Applying it twice changes nothing more.
LLMDLQ_INLINE std::size_t fit_envelope(envelope& e, std::size_t max_bytes);

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/envelope.ipp"
#endif
