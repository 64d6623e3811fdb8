// SPDX-License-Identifier: MIT
// One row of the moderation queue, the statuses it moves through and the
// actions that move it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Where a dead letter is in its life.
///
///     pending ──claim──► claimed ──resolve──► resolved
///        │                 │  ├────discard──► discarded
///        │                 │  └────requeue──► requeued ──claim──► claimed
///        ├──discard────────┼──────────────────► discarded
///        └──requeue────────┘
///
///     pending, requeued ──recover──► recovered
///     pending, requeued ──exhaust──► exhausted ──claim/discard/requeue──► ...
///     pending, requeued, exhausted ──redrive──► redriven ──recover──► recovered
///                                                  └──claim/discard──► ...
///
/// `resolved`, `discarded` and `recovered` are final. `redriven` says the
/// letter's original input was sent back to its source for the pipeline to
/// process again (llmdlq/llm/redriver.hpp); it becomes `recovered` once
/// that input succeeds. `requeued` marks a
/// record for the replayer; claiming it again takes it back from the
/// replayer. The replayer records each attempt (`record_attempt`, which
/// keeps the status), and ends a record as `recovered` (a replay produced a
/// valid document) or `exhausted` (its automated attempts are spent: it
/// waits for a person, like `pending`).
enum class moderation_status : std::uint8_t {
  pending,
  claimed,
  resolved,
  discarded,
  requeued,
  recovered,
  exhausted,
  redriven,
};

/// What an operator, or the replayer, does to a record.
enum class moderation_action : std::uint8_t {
  claim,
  resolve,
  discard,
  requeue,
  record_attempt,
  recover,
  exhaust,
  redrive,
};

/// Every status, in declaration order.
inline constexpr moderation_status all_moderation_statuses[] = {
    moderation_status::pending,   moderation_status::claimed,  moderation_status::resolved,
    moderation_status::discarded, moderation_status::requeued, moderation_status::recovered,
    moderation_status::exhausted, moderation_status::redriven};

[[nodiscard]] constexpr std::string_view to_string(moderation_status s) noexcept {
  switch (s) {
    case moderation_status::pending: return "pending";
    case moderation_status::claimed: return "claimed";
    case moderation_status::resolved: return "resolved";
    case moderation_status::discarded: return "discarded";
    case moderation_status::requeued: return "requeued";
    case moderation_status::recovered: return "recovered";
    case moderation_status::exhausted: return "exhausted";
    case moderation_status::redriven: return "redriven";
  }
  return "pending";
}

[[nodiscard]] constexpr std::string_view to_string(moderation_action a) noexcept {
  switch (a) {
    case moderation_action::claim: return "claim";
    case moderation_action::resolve: return "resolve";
    case moderation_action::discard: return "discard";
    case moderation_action::requeue: return "requeue";
    case moderation_action::record_attempt: return "record_attempt";
    case moderation_action::recover: return "recover";
    case moderation_action::exhaust: return "exhaust";
    case moderation_action::redrive: return "redrive";
  }
  return "claim";
}

[[nodiscard]] constexpr std::optional<moderation_status> parse_moderation_status(std::string_view s) noexcept {
  for (const auto status : all_moderation_statuses) {
    if (to_string(status) == s) return status;
  }
  return std::nullopt;
}

/// The status `action` leads to from `from`, or nothing when the action is
/// not allowed there. Stores apply it atomically (a conditional update), so
/// two operators cannot both claim a record.
[[nodiscard]] constexpr std::optional<moderation_status> transition(moderation_status from,
                                                                    moderation_action action) noexcept {
  using s = moderation_status;
  switch (action) {
    case moderation_action::claim:
      if (from == s::pending || from == s::requeued || from == s::exhausted || from == s::redriven) return s::claimed;
      break;
    case moderation_action::resolve:
      if (from == s::claimed) return s::resolved;
      break;
    case moderation_action::discard:
      if (from == s::pending || from == s::claimed || from == s::exhausted || from == s::redriven) return s::discarded;
      break;
    case moderation_action::requeue:
      if (from == s::pending || from == s::claimed || from == s::exhausted) return s::requeued;
      break;
    case moderation_action::record_attempt:
      if (from == s::pending || from == s::requeued) return from;
      break;
    case moderation_action::recover:
      if (from == s::pending || from == s::requeued || from == s::redriven) return s::recovered;
      break;
    case moderation_action::exhaust:
      if (from == s::pending || from == s::requeued) return s::exhausted;
      break;
    case moderation_action::redrive:
      if (from == s::pending || from == s::requeued || from == s::exhausted) return s::redriven;
      break;
  }
  return std::nullopt;
}

/// The statuses from which `action` is allowed (for a store's conditional update).
[[nodiscard]] inline std::vector<moderation_status> statuses_allowing(moderation_action action) {
  std::vector<moderation_status> from;
  for (const auto status : all_moderation_statuses) {
    if (transition(status, action)) from.push_back(status);
  }
  return from;
}

/// Which part of a stored record does not read back as llmdlq wrote it.
enum class record_defect : std::uint8_t {
  none,      ///< it all reads back
  status,    ///< the status is none of moderation_status
  time,      ///< created_at or updated_at is not an RFC 3339 time
  envelope,  ///< the envelope is not JSON, not an envelope, or the one of another dlq_id
};

/// A record a reader skipped because it does not read back, as it reports it.
struct unreadable_record {
  std::string dlq_id;
  std::string reason;  ///< what was found, safe to print: "unknown status 'bogus'"

  friend bool operator==(const unreadable_record&, const unreadable_record&) = default;
};

/// The most unreadable records a summary names (it counts them all).
inline constexpr std::size_t max_listed_unreadable = 1000;

/// One row of the moderation queue.
struct moderation_record {
  std::string dlq_id;
  moderation_status status = moderation_status::pending;
  std::string category;                   ///< failure category (`syntax`, `schema`, ...)
  std::string triage;                     ///< triage class
  std::string failure_code;               ///< e.g. `ocr_structural_broken_json`
  std::string raw_response;               ///< the model's answer as stored in the envelope
  std::string envelope_json;              ///< the whole envelope
  std::string created_at;                 ///< RFC 3339 UTC
  std::string updated_at;                 ///< RFC 3339 UTC
  std::string operator_log;               ///< one line per action: time, operator, action, note
  std::string claimed_by;                 ///< empty unless claimed
  std::optional<std::string> resolution;  ///< the corrected JSON, once resolved or recovered
  /// What of the stored row does not read back (none: it all does; the
  /// first found of status, times, envelope), and why, naming what was
  /// found. The fields of a part that does not read are not to be trusted
  /// (an unknown status reads as `pending`); the texts are as stored. Every
  /// reader of many records skips such a record, counts it and names it,
  /// and goes on with the others; act() refuses an unknown status.
  record_defect defect = record_defect::none;
  std::string defect_reason;

  [[nodiscard]] bool readable() const noexcept { return defect == record_defect::none; }
};

LLMDLQ_END_NAMESPACE
