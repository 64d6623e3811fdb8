// SPDX-License-Identifier: MIT
// What the recovery ladder decides and what a run of it comes to, as plain
// data: light to include (no schema engine) for code that only inspects,
// logs or stores the ladder's steps.
// Part of the llmdlq::llm library.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/llm/client.hpp"

LLMDLQ_BEGIN_NAMESPACE

enum class recovery_step_kind : std::uint8_t {
  local_repair,    ///< zero tokens: repair the stored response locally and judge it again
  repair_prompt,   ///< ask the model with a repair prompt
  escalate_model,  ///< ask the stronger model with the same repair prompt
  relax_schema,    ///< zero tokens: accept the stored response under the declared relaxations
  revalidate,      ///< zero tokens: judge the stored response under today's schema and prompt versions
  stop,            ///< nothing more to do now: see the reason
};

/// Why the ladder stops.
enum class stop_reason : std::uint8_t {
  recovered,             ///< a step produced a document the schema accepts
  relaxed,               ///< accepted under declared relaxations: also goes to moderation
  poison,                ///< never re-asked (the stored response, or an answer, is poison)
  policy,                ///< a refusal: never re-asked
  held,                  ///< a deterministic failure under unchanged schema and prompt: for an engineer
  human_review,          ///< ambiguous (semantic, low confidence): for a person
  exhausted,             ///< the automated attempts are spent: for a person
  fingerprint_repeated,  ///< an answer failed the same way as before: asking again will not help
  truncation_limit,      ///< cut off, and max_tokens cannot be raised further
  payload_budget_spent,  ///< the tokens allowed for this payload are spent
  no_model,              ///< no model to ask is configured or recorded
  window_budget_spent,   ///< later: the tokens allowed in this time window are spent
  circuit_open,          ///< later: the endpoint's circuit is open
  throttled,             ///< later: the endpoint asked to wait (429, Retry-After)
  call_failed,           ///< later: the call failed (timeout, network, 5xx)
  call_rejected,         ///< the request can never succeed as it stands (context too long, filtered)
  call_waiting,          ///< later: this payload's last call got no completion; it waits, the others go on
  /// later: the provider refuses the request itself (the schema as sent, a
  /// parameter): every letter would fail the same way, so the run stops
  /// with the provider's words, and the letter waits for the fix
  request_refused,
};

[[nodiscard]] std::string_view to_string(recovery_step_kind kind) noexcept;
[[nodiscard]] std::string_view to_string(stop_reason reason) noexcept;

/// What a stop means for the record.
enum class stop_effect : std::uint8_t {
  recovered,  ///< a document goes downstream (relaxed: and to moderation)
  exhausted,  ///< automation is done with it: a person decides (status `exhausted`)
  unchanged,  ///< it stays as it is: held for an engineer, waiting for a person, or never replayed
  later,      ///< infrastructure or budget: try again after `retry_after`
};
[[nodiscard]] stop_effect effect_of(stop_reason reason) noexcept;

/// The next step, as data the host can inspect, log, run or skip.
struct recovery_step {
  recovery_step_kind kind = recovery_step_kind::stop;
  stop_reason reason = stop_reason::held;  ///< when kind is stop
  std::string model;                       ///< repair_prompt, escalate_model: the model to ask
  std::optional<std::int64_t> max_tokens;  ///< repair_prompt, escalate_model
  std::string detail;                      ///< why, for a person
};

/// The outcome of running the ladder on one envelope.
struct recovery_result {
  stop_reason reason = stop_reason::held;
  std::string detail;
  std::optional<std::string> output;       ///< recovered or relaxed: the accepted document
  std::vector<std::string> dropped_paths;  ///< relaxed: properties removed
  std::vector<std::string> waived_paths;   ///< relaxed: failures kept
  token_usage usage;                       ///< over every call of this run, failed ones too
  std::uint32_t calls = 0;                 ///< model calls made by this run
  std::vector<recovery_step> steps;        ///< the steps taken, in order
  std::optional<std::chrono::milliseconds> retry_after;  ///< later: when to come back

  [[nodiscard]] stop_effect effect() const noexcept { return effect_of(reason); }
};

/// A short, stable digest of a failure's errors (category, keywords,
/// schema and instance paths, syntax position): equal digests mean the same
/// failure. Empty for a failure without errors (empty, truncated): a
/// larger max_tokens or another model is progress, not a repeat.
[[nodiscard]] std::string error_fingerprint(const failure_details& failure);

LLMDLQ_END_NAMESPACE
