// SPDX-License-Identifier: MIT
// process_config: how responses are judged and their envelopes written, in
// parts: judging, envelope policy, privacy, and the metrics counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/content_check.hpp"
#include "llmdlq/field_cipher.hpp"
#include "llmdlq/guard.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/metrics.hpp"
#include "llmdlq/provider_schema.hpp"
#include "llmdlq/redaction.hpp"
#include "llmdlq/repair.hpp"
#include "llmdlq/retention.hpp"
#include "llmdlq/taxonomy.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Whether local, zero-token repair runs on responses that are not JSON.
enum class repair_mode : std::uint8_t {
  local,  ///< strip fences and prose, fix surface syntax; accept only allowed tiers
  off,    ///< strict: anything but strict JSON is a syntax failure
};

/// What a response must be to be accepted, and what a failure reports of itself.
struct judging_options {
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
  /// finite numbers; without a threshold, no score is judged. The envelope
  /// records it beside the score.
  std::optional<double> min_confidence;
  parse_options limits;  ///< size and depth: beyond them a response is poison
  guard_options guard;
  std::size_t max_errors = 32;  ///< errors kept in an envelope
  std::vector<content_check> checks;
  /// The nulls a provider's schema forced (lower_schema's `nulls`, for the
  /// schema the model was asked with): such a null in an answer the schema
  /// rejects is removed before judging, as a repair `forced_null` (lossless).
  std::shared_ptr<const llmdlq::forced_nulls> forced_nulls;
};

/// How an envelope is coded, dated, kept and sized.
struct envelope_policy {
  /// Failure codes: `failure_code(category)` when set, else the default code
  /// with this prefix and an underscore (prefix "ocr": `ocr_structural_broken_json`).
  std::string failure_code_prefix;
  std::function<std::string(failure_category)> failure_code;
  clock_function clock = system_now;  ///< created_at, expires_at, content rules
  /// expires_at = first failure + the policy's retention for the envelope (30
  /// days, poison 14); a plain duration applies to every envelope.
  retention_policy retention;
  std::size_t max_envelope_bytes = 256u << 10;  ///< raw text is cut to fit; its length and hash are kept
  std::uint32_t max_attempts = 2;               ///< automated attempts a replayer may make
};

/// What an envelope hides of what it carries, before it leaves.
struct privacy_options {
  /// Runs on every envelope: the raw response, the original input, messages
  /// and extensions lose what it detects, and the schema's `x-llmdlq-pii`
  /// properties their values (see redaction.hpp). On by default with every
  /// detector and `remove`; redactor::none() turns it off.
  redactor redaction = redactor::standard();
  /// Seals the originals of raw_response and original_input beside their
  /// stored (redacted) texts, for those who hold the key (see
  /// field_cipher.hpp); nullptr: nothing is sealed. The sealed copies share
  /// envelope_policy::max_envelope_bytes with the rest: the envelope is
  /// first fitted to half of it (at least envelope_limits::min_bytes), then
  /// the copies get the room left, split as fit_envelope splits the texts; a
  /// copy that does not fit holds the start of its original, with `cut` set.
  /// A seal that fails (a key provider down, or no room left at all) leaves
  /// that text unsealed and says why in extensions.llmdlq_seal_error: the
  /// envelope still goes out, and the original is never stored in clear for it.
  std::shared_ptr<const field_cipher> cipher;
};

/// How responses are judged and envelopes written: what process_llm_response,
/// make_envelope, a pipeline and a stream judge take. Each part defaults to
/// the library's defaults, so a host sets only what it changes:
///
/// \code
///   llmdlq::process_config config;
///   config.judging.coerce = true;
///   config.envelope.failure_code_prefix = "ocr";
///   config.metrics = std::make_shared<llmdlq::metrics>();
/// \endcode
struct process_config {
  judging_options judging;
  envelope_policy envelope;
  privacy_options privacy;
  /// Counts every response judged (accepted, with its repairs, or dead-
  /// lettered, with the time its envelope took) and every make_envelope;
  /// nullptr: nothing is counted. Shared by every worker the host runs.
  std::shared_ptr<llmdlq::metrics> metrics;
};

LLMDLQ_END_NAMESPACE
