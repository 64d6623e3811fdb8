// SPDX-License-Identifier: MIT
// Showing a dead letter to an operator: the parts of its raw response that
// its failure points at, and the response printed with them marked.
#pragma once

#include <cstddef>
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

/// A record's row in `llmdlq list --json`: dlq_id, status, category,
/// triage, failure_code, created_at, updated_at, claimed_by (when claimed)
/// and age_seconds (at `now`).
[[nodiscard]] boost::json::object record_summary_json(const moderation_record& r, timestamp now);

}  // namespace llmdlq::cli
