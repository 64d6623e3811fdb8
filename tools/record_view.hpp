// SPDX-License-Identifier: MIT
// Showing a dead letter to an operator: the parts of its raw response that
// its failure points at, and the response printed with them marked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <llmdlq/envelope.hpp>
#include <llmdlq/moderation.hpp>

namespace llmdlq::cli {

/// Bytes [begin, end) of the raw response (as the envelope holds it) that
/// a failure points at.
struct error_span {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string label;    ///< `syntax: ...`, or `<instance path>: <message>`
  std::string pointer;  ///< the validation error's instance path (empty for the syntax error)
};

/// The spans of `e`'s raw response that its failure points at, in text
/// order: the token at the syntax error's location (a string, a word, or
/// one byte), and the value at each validation error's instance
/// path, found lexically (the response may be broken JSON; `/` is the whole
/// document). An error whose value is not in the text gets no span. Empty
/// when the envelope holds no raw response text (redacted away, or stored
/// as base64). Offsets past a cut or redacted text are dropped.
[[nodiscard]] std::vector<error_span> error_spans(const envelope& e);

/// `text` with each span marked: underlined red with its number on a
/// terminal (`colour`), `>>[n]` ... `<<` otherwise. Nested or overlapping
/// spans are marked each at its own begin and end.
[[nodiscard]] std::string mark_spans(std::string_view text, const std::vector<error_span>& spans, bool colour);

/// `provider/name`, or the name alone when no provider is recorded; empty
/// when no model is named.
[[nodiscard]] std::string model_text(const model_reference& m);

/// How a letter's attempt history counts against its cap of automated
/// attempts, the way the recovery ladder counts it: a model call
/// (repair_prompt, escalate_model) counts once it may have been answered;
/// a call that got no answer (`call_failed`) and a local step (local_repair,
/// relax_schema, revalidate) do not.
struct attempt_tally {
  std::uint32_t counted = 0;     ///< automated attempts made
  std::uint32_t unanswered = 0;  ///< model calls that got no answer
  std::uint32_t local = 0;       ///< steps taken without a model
};
[[nodiscard]] attempt_tally tally_attempts(const attempt_summary& attempts);

/// Why a history row does not count against the cap ("no answer", "local
/// step"); empty for a row that counts.
[[nodiscard]] std::string_view not_counted_because(const attempt_record& a);

/// The attempt history in one line: "1 of 2 automated attempts made; not
/// counted: 3 calls without an answer, 1 local step".
[[nodiscard]] std::string attempts_text(const attempt_summary& attempts);

/// A record's row in `llmdlq list --json`: dlq_id, status, category,
/// triage, failure_code, created_at, updated_at, claimed_by (when claimed)
/// and age_seconds (at `now`); for a record that does not read back,
/// `unreadable` (why) after dlq_id, and no status when its status is unknown.
[[nodiscard]] boost::json::object record_summary_json(const moderation_record& r, timestamp now);

}  // namespace llmdlq::cli
