// SPDX-License-Identifier: MIT
// process_llm_response: what a worker calls for every LLM response. It comes
// back accepted (validated JSON) or as a dead-letter envelope saying why.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/content_check.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/field_cipher.hpp"
#include "llmdlq/guard.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/metrics.hpp"
#include "llmdlq/redaction.hpp"
#include "llmdlq/repair.hpp"
#include "llmdlq/request_context.hpp"
#include "llmdlq/retention.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/taxonomy.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Whether local, zero-token repair runs on responses that are not JSON.
enum class repair_mode : std::uint8_t {
  local,  ///< strip fences and prose, fix surface syntax; accept only allowed tiers
  off,    ///< strict: anything but strict JSON is a syntax failure
};

/// How responses are judged and envelopes written.
struct process_options {
  repair_mode repair = repair_mode::local;
  /// A repaired document is accepted only when every repair is of these tiers.
  repair_tiers accept_repairs{repair_tier::lossless, repair_tier::syntactic};
  /// Schema-guided coercion (see coerce()): a document that fails the schema
  /// only by a quoted number, a lone value for an array, an enum's spelling
  /// or a null optional property is fixed, with each change reported as a
  /// repair of tier `coercion`. Off by default: it changes values.
  bool coerce = false;
  /// Responses whose confidence (request_context::confidence) is below this
  /// are dead-lettered as low_confidence, and so are scores that are not
  /// finite numbers; without a threshold, no score is judged.
  std::optional<double> min_confidence;
  parse_options limits;  ///< size and depth: beyond them a response is poison
  guard_options guard;
  std::size_t max_errors = 32;  ///< errors kept in an envelope
  /// Failure codes: `failure_code(category)` when set, else the default code
  /// with this prefix and an underscore (prefix "ocr": `ocr_structural_broken_json`).
  std::string failure_code_prefix;
  std::function<std::string(failure_category)> failure_code;
  std::vector<content_check> checks;
  /// Runs on every envelope before it leaves: the raw response, the original
  /// input, messages and extensions lose what it detects, and the schema's
  /// `x-llmdlq-pii` properties their values (see redaction.hpp). On by
  /// default with every detector and `remove`; redactor::none() turns it off.
  redactor redaction = redactor::standard();
  clock_function clock = system_now;  ///< created_at, expires_at, content rules
  /// expires_at = first failure + the policy's retention for the envelope (30
  /// days, poison 14); a plain duration applies to every envelope.
  retention_policy retention;
  std::size_t max_envelope_bytes = 256u << 10;  ///< raw text is cut to fit; its length and hash are kept
  std::uint32_t max_attempts = 2;               ///< automated attempts a replayer may make
  /// Seals the originals of raw_response and original_input beside their
  /// stored (redacted) texts, for those who hold the key (see
  /// field_cipher.hpp); nullptr: nothing is sealed. The sealed copies share
  /// max_envelope_bytes with the rest: the envelope is first fitted to half
  /// of it (at least envelope_limits::min_bytes), then the copies get the
  /// room left, split as fit_envelope splits the texts; a copy that does not
  /// fit holds the start of its original, with `cut` set. A seal that fails
  /// (a key provider down, or no room left at all) leaves that text unsealed
  /// and says why in extensions.llmdlq_seal_error: the envelope still goes
  /// out, and the original is never stored in clear for it.
  std::shared_ptr<const field_cipher> cipher;
  /// Counts every response judged (accepted, with its repairs, or dead-
  /// lettered, with the time its envelope took) and every make_envelope;
  /// nullptr: nothing is counted. Shared by every worker the host runs.
  std::shared_ptr<llmdlq::metrics> metrics;
};

/// Why process_options cannot be used as given.
struct options_error {
  std::string option;  ///< the member at fault: "min_confidence"
  std::string message;
};

/// Checks what a host set before it is used: min_confidence must be a finite
/// number (NaN would turn the check off, infinity cannot be written in an
/// envelope). process_llm_response does not call it: given a NaN threshold,
/// it dead-letters every scored response as low_confidence (closed, not open).
[[nodiscard]] LLMDLQ_INLINE expected<void, options_error> check_options(const process_options& options);

/// A response that passed: its validated JSON text and the repairs it took.
struct accepted {
  std::string json;  ///< the original bytes when nothing was repaired, else the repaired text
  std::vector<repair_action> repairs;

  [[nodiscard]] bool repaired() const noexcept { return !repairs.empty(); }
  /// The document as a Boost.JSON value, parsed on demand.
  [[nodiscard]] LLMDLQ_INLINE boost::json::value value() const;
};

/// Judges one LLM response. In precedence order it is poison (binary bytes,
/// invalid UTF-8, over the size or depth limit, prompt injection), a refusal,
/// empty, truncated, not JSON (after local repair when enabled), against the
/// schema, against a format or content rule, or under the confidence
/// threshold; the first that applies names the envelope's category. Anything
/// else is accepted.
///
/// Thread-safe; each thread reuses its own parser. Throws nothing but
/// std::bad_alloc.
[[nodiscard]] LLMDLQ_INLINE expected<accepted, envelope> process_llm_response(
    std::string_view raw, const schema& schema, const request_context& context,
    const process_options& options = {});

namespace detail {

/// process_llm_response, handing the accepted document to `on_accept` while
/// it is still parsed (the typed overload converts it without a second parse).
/// `on_accept` returns an error message when it cannot use the document.
LLMDLQ_INLINE expected<accepted, envelope> process_response(
    std::string_view raw, const schema& schema, const request_context& context,
    const process_options& options,
    const std::function<std::optional<std::string>(const json_document&)>& on_accept);

}  // namespace detail

/// A failure found outside process_llm_response, described for make_envelope.
/// (Every member has an initializer, so that designated initializers may
/// leave any out without -Wmissing-field-initializers.)
struct failure_report {
  failure_category category = failure_category::poison;
  std::string message{};
  std::vector<validation_error> errors{};  ///< what a host's own schema or rule checks found
  std::optional<text_location> syntax{};   ///< where a syntax failure is in the raw text
  bool repaired_locally = false;           ///< the text was repaired before the failure was found
};

/// An envelope for a failure found outside process_llm_response: a host's
/// own checks, or an LLM call that failed for good (see call_outcome.hpp).
/// Fills ids, times, hashes, triage and codes exactly as process_llm_response does.
///
/// \code
///   auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::poison,
///                                   .message = "context length exceeded"},
///                                  raw, context, options);
/// \endcode
[[nodiscard]] LLMDLQ_INLINE envelope make_envelope(failure_report failure, std::string_view raw,
                                                   const request_context& context,
                                                   const process_options& options = {});

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/process.ipp"
#endif
