// SPDX-License-Identifier: MIT
// The failure taxonomy: what failed (category), what to do about it (triage
// class and recommended action), and the stable codes hosts route on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// What failed, in precedence order: the first that applies wins.
enum class failure_category : std::uint8_t {
  poison,          ///< NUL or binary bytes, invalid UTF-8, over the size or depth limit, prompt injection
  refusal,         ///< the model refused (apology text without JSON, or an API refusal)
  empty,           ///< nothing but whitespace
  truncated,       ///< cut off: finish_reason "length", or a string or container left open
  syntax,          ///< not JSON, after local repair when that is enabled
  schema,          ///< JSON that violates structural keywords (type, required, enum, ...)
  semantic,        ///< fails a `format` assertion or a content rule
  low_confidence,  ///< valid, but the confidence score is under the threshold
};

/// What kind of problem an envelope holds, for routing and replay.
enum class triage_class : std::uint8_t {
  transient,      ///< a cheap automatic fix is likely (truncated, syntax)
  deterministic,  ///< repeats until a prompt or schema changes: hold for an engineer
  ambiguous,      ///< needs a human to judge (semantic, low confidence)
  poison,         ///< never replay
  policy,         ///< the model refused
  version_drift,  ///< written under other schema, prompt or model versions than today's
};

/// The next step recommended for an envelope.
enum class recommended_action : std::uint8_t {
  local_repair,    ///< zero-token repair of the stored response
  repair_prompt,   ///< ask the model again with the errors in the prompt
  escalate_model,  ///< ask a stronger model
  relax_schema,    ///< the schema is stricter than the data: change it
  human_review,    ///< a person decides
  hold,            ///< keep until an engineer looks
  discard,         ///< drop after the retention period
};

[[nodiscard]] LLMDLQ_INLINE std::string_view to_string(failure_category c) noexcept;
[[nodiscard]] LLMDLQ_INLINE std::string_view to_string(triage_class c) noexcept;
[[nodiscard]] LLMDLQ_INLINE std::string_view to_string(recommended_action a) noexcept;

/// The enum value named `name` (as to_string spells it), or nothing.
[[nodiscard]] LLMDLQ_INLINE std::optional<failure_category> failure_category_from(std::string_view name) noexcept;
[[nodiscard]] LLMDLQ_INLINE std::optional<triage_class> triage_class_from(std::string_view name) noexcept;
[[nodiscard]] LLMDLQ_INLINE std::optional<recommended_action> recommended_action_from(std::string_view name) noexcept;

/// The triage of a fresh failure.
struct triage {
  triage_class kind = triage_class::transient;  ///< serialized as "class"
  recommended_action action = recommended_action::hold;
  bool auto_replayable = false;  ///< whether a replayer may retry it without a person

  friend bool operator==(const triage&, const triage&) = default;
};

/// The triage llmdlq gives a failure of `category`. `repaired_locally` says
/// whether local repair already ran on it (then a syntax failure needs the
/// model again rather than another local attempt).
[[nodiscard]] LLMDLQ_INLINE triage triage_for(failure_category category, bool repaired_locally) noexcept;

/// The default failure code of a category (`structural_broken_json` for
/// syntax, ...), prefixed with `prefix` and an underscore when it is not
/// empty: prefix "ocr" gives `ocr_structural_broken_json`.
[[nodiscard]] LLMDLQ_INLINE std::string default_failure_code(failure_category category,
                                                             std::string_view prefix = {});

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/taxonomy.ipp"
#endif
