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
#include "llmdlq/process_config.hpp"
#include "llmdlq/redaction.hpp"
#include "llmdlq/repair.hpp"
#include "llmdlq/request_context.hpp"
#include "llmdlq/retention.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/taxonomy.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// How responses are judged and envelopes written, all in one flat
/// aggregate. Deprecated since 0.2.0, removed in 0.3.0: use process_config,
/// whose parts (judging_options, envelope_policy, privacy_options and the
/// metrics) hold the same members under the same names. Every function that
/// takes a process_config still takes a process_options, converted to its
/// parts on each call (a pipeline or a stream judge converts once, when made).
struct process_options {
  repair_mode repair = repair_mode::local;                                     ///< judging_options::repair
  repair_tiers accept_repairs{repair_tier::lossless, repair_tier::syntactic};  ///< judging_options::accept_repairs
  bool coerce = false;                                                         ///< judging_options::coerce
  std::optional<double> min_confidence;                                        ///< judging_options::min_confidence
  parse_options limits;                                                        ///< judging_options::limits
  guard_options guard;                                                         ///< judging_options::guard
  std::size_t max_errors = 32;                                                 ///< judging_options::max_errors
  std::string failure_code_prefix;                                             ///< envelope_policy::failure_code_prefix
  std::function<std::string(failure_category)> failure_code;                   ///< envelope_policy::failure_code
  std::vector<content_check> checks;                                           ///< judging_options::checks
  std::shared_ptr<const llmdlq::forced_nulls> forced_nulls;                    ///< judging_options::forced_nulls
  redactor redaction = redactor::standard();                                   ///< privacy_options::redaction
  clock_function clock = system_now;                                           ///< envelope_policy::clock
  retention_policy retention;                                                  ///< envelope_policy::retention
  std::size_t max_envelope_bytes = 256u << 10;                                 ///< envelope_policy::max_envelope_bytes
  std::uint32_t max_attempts = 2;                                              ///< envelope_policy::max_attempts
  std::shared_ptr<const field_cipher> cipher;                                  ///< privacy_options::cipher
  std::shared_ptr<llmdlq::metrics> metrics;                                    ///< process_config::metrics

  [[nodiscard]] judging_options judging_part() const {
    return {repair, accept_repairs, coerce, min_confidence, limits, guard, max_errors, checks, forced_nulls};
  }
  [[nodiscard]] envelope_policy envelope_part() const {
    return {failure_code_prefix, failure_code, clock, retention, max_envelope_bytes, max_attempts};
  }
  [[nodiscard]] privacy_options privacy_part() const { return {redaction, cipher}; }
  // NOLINTNEXTLINE(google-explicit-constructor): every host's options still convert where a config is taken
  operator process_config() const { return {judging_part(), envelope_part(), privacy_part(), metrics}; }

  /// The aggregate of a config's parts, for what still reads one.
  [[nodiscard]] static process_options of(const process_config& config) {
    const judging_options& j = config.judging;
    const envelope_policy& e = config.envelope;
    return {j.repair,
            j.accept_repairs,
            j.coerce,
            j.min_confidence,
            j.limits,
            j.guard,
            j.max_errors,
            e.failure_code_prefix,
            e.failure_code,
            j.checks,
            j.forced_nulls,
            config.privacy.redaction,
            e.clock,
            e.retention,
            e.max_envelope_bytes,
            e.max_attempts,
            config.privacy.cipher,
            config.metrics};
  }
};

/// Why the options cannot be used as given.
struct options_error {
  std::string option;  ///< the member at fault: "min_confidence", or "judging.min_confidence" in a process_config
  std::string message;
};

/// Checks what a host set before it is used: min_confidence must be a finite
/// number (NaN would turn the check off, infinity cannot be written in an
/// envelope). process_llm_response does not call it: given a NaN threshold,
/// it dead-letters every scored response as low_confidence (closed, not open).
/// The error names the member as the host wrote it: from the part, within a
/// process_config, or in the deprecated process_options.
[[nodiscard]] LLMDLQ_INLINE expected<void, options_error> check_options(const judging_options& options);
[[nodiscard]] LLMDLQ_INLINE expected<void, options_error> check_options(const process_config& config);
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
    std::string_view raw, const schema& schema, const request_context& context, const process_config& config = {});

namespace detail {

/// process_llm_response, handing the accepted document to `on_accept` while
/// it is still parsed (the typed overload converts it without a second parse).
/// `on_accept` returns an error message when it cannot use the document.
/// A failure's envelope is made from `letter_context()` when it is given (a
/// tool call's context: made only when the response failed), else from `context`.
LLMDLQ_INLINE expected<accepted, envelope> process_response(
    std::string_view raw, const schema& schema, const request_context& context, const process_config& config,
    const std::function<std::optional<std::string>(const json_document&)>& on_accept,
    const std::function<request_context()>& letter_context = {});

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
///                                  raw, context, config);
/// \endcode
[[nodiscard]] LLMDLQ_INLINE envelope make_envelope(failure_report failure, std::string_view raw,
                                                   const request_context& context, const process_config& config = {});
/// make_envelope for a failure of a response judged against `schema`, as
/// process_llm_response would make it: a derived key names the schema's
/// fingerprint, and the schema's PII paths are redacted.
[[nodiscard]] LLMDLQ_INLINE envelope make_envelope(failure_report failure, std::string_view raw, const schema& schema,
                                                   const request_context& context, const process_config& config = {});

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/process.ipp"
#endif
