// SPDX-License-Identifier: MIT
// The moderation queue: dead letters waiting for an operator, what an
// operator may do with one, and the store that keeps them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/sink.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

// Defined in moderation_query.hpp (included at the end).
struct moderation_query;
struct moderation_page;
struct dlq_statistics;
struct dlq_timeline_bucket;

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
///
/// `resolved`, `discarded` and `recovered` are final. `requeued` marks a
/// record for the replayer; claiming it again takes it back from the
/// replayer. The replayer records each attempt (`record_attempt`, which
/// keeps the status), and ends a record as `recovered` (a replay produced a
/// valid document) or `exhausted` (its automated attempts are spent: it
/// waits for a person, like `pending`).
enum class moderation_status : std::uint8_t { pending, claimed, resolved, discarded, requeued, recovered, exhausted };

/// What an operator, or the replayer, does to a record.
enum class moderation_action : std::uint8_t { claim, resolve, discard, requeue, record_attempt, recover, exhaust };

/// Every status, in declaration order.
inline constexpr moderation_status all_moderation_statuses[] = {
    moderation_status::pending,   moderation_status::claimed,   moderation_status::resolved,
    moderation_status::discarded, moderation_status::requeued,  moderation_status::recovered,
    moderation_status::exhausted};

[[nodiscard]] constexpr std::string_view to_string(moderation_status s) noexcept {
  switch (s) {
    case moderation_status::pending: return "pending";
    case moderation_status::claimed: return "claimed";
    case moderation_status::resolved: return "resolved";
    case moderation_status::discarded: return "discarded";
    case moderation_status::requeued: return "requeued";
    case moderation_status::recovered: return "recovered";
    case moderation_status::exhausted: return "exhausted";
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
      if (from == s::pending || from == s::requeued || from == s::exhausted) return s::claimed;
      break;
    case moderation_action::resolve:
      if (from == s::claimed) return s::resolved;
      break;
    case moderation_action::discard:
      if (from == s::pending || from == s::claimed || from == s::exhausted) return s::discarded;
      break;
    case moderation_action::requeue:
      if (from == s::pending || from == s::claimed || from == s::exhausted) return s::requeued;
      break;
    case moderation_action::record_attempt:
      if (from == s::pending || from == s::requeued) return from;
      break;
    case moderation_action::recover:
      if (from == s::pending || from == s::requeued) return s::recovered;
      break;
    case moderation_action::exhaust:
      if (from == s::pending || from == s::requeued) return s::exhausted;
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

/// One row of the moderation queue.
struct moderation_record {
  std::string dlq_id;
  moderation_status status = moderation_status::pending;
  std::string category;        ///< failure category (`syntax`, `schema`, ...)
  std::string triage;          ///< triage class
  std::string failure_code;    ///< e.g. `ocr_structural_broken_json`
  std::string raw_response;    ///< the model's answer as stored in the envelope
  std::string envelope_json;   ///< the whole envelope
  std::string created_at;      ///< RFC 3339 UTC
  std::string updated_at;      ///< RFC 3339 UTC
  std::string operator_log;    ///< one line per action: time, operator, action, note
  std::string claimed_by;      ///< empty unless claimed
  std::optional<std::string> resolution;  ///< the corrected JSON, once resolved or recovered
};

/// Why an operator action or a read of a moderation store did not happen.
enum class moderation_errc : std::uint8_t {
  not_found,           ///< no record with that dlq_id
  invalid_transition,  ///< the action is not allowed in the record's status (someone else acted first)
  invalid_resolution,  ///< the corrected JSON (or the replayer's envelope) is missing or not strict JSON
  store_unavailable,   ///< the store failed: nothing changed, try again
};

/// Whether the same request can never succeed: only a failed store may
/// answer differently next time.
[[nodiscard]] constexpr bool is_permanent(moderation_errc code) noexcept {
  return code != moderation_errc::store_unavailable;
}

[[nodiscard]] constexpr std::string_view to_string(moderation_errc code) noexcept {
  switch (code) {
    case moderation_errc::not_found: return "not_found";
    case moderation_errc::invalid_transition: return "invalid_transition";
    case moderation_errc::invalid_resolution: return "invalid_resolution";
    case moderation_errc::store_unavailable: return "store_unavailable";
  }
  return "unknown";
}

struct moderation_error {
  moderation_errc code = moderation_errc::store_unavailable;
  std::string message;
  std::optional<moderation_status> current;  ///< the record's status, for invalid_transition
};

/// An operator's (or the replayer's) action on one record.
struct moderation_request {
  std::string dlq_id;
  moderation_action action = moderation_action::claim;
  std::string operator_name;             ///< who acts; goes into the log
  std::string note;                      ///< why; goes into the log
  std::optional<std::string> corrected;  ///< resolve, recover: the corrected JSON (required)
  /// record_attempt, recover, exhaust: the envelope with its attempt
  /// history brought up to date (required); it replaces the stored one.
  std::optional<std::string> envelope_json;
};

/// A dead-letter store with a moderation queue. `publish` (from sink) inserts
/// a record with status `pending`, once per dlq_id: a redelivered envelope is
/// a duplicate, never a second row. Operator actions change a record's status
/// only along transition() and append to its log, in one transaction.
class moderation_store : public sink {
 public:
  /// Applies one operator action; returns the record as it now is.
  [[nodiscard]] virtual expected<moderation_record, moderation_error> act(const moderation_request& request) = 0;

  /// The record with this dlq_id, if any.
  [[nodiscard]] virtual expected<std::optional<moderation_record>, moderation_error> get(std::string_view dlq_id) = 0;

  /// Up to `limit` records with this status, oldest first.
  [[nodiscard]] virtual expected<std::vector<moderation_record>, moderation_error> list(moderation_status status,
                                                                                      std::size_t limit) = 0;

  /// The next page: up to `limit` records with this status that come after
  /// the record created at `after_created_at` (RFC 3339, as
  /// moderation_record::created_at gives it) with `after_dlq_id`, in the
  /// order of list() (creation time, then dlq_id).
  [[nodiscard]] virtual expected<std::vector<moderation_record>, moderation_error> list_after(
      moderation_status status, std::string_view after_created_at, std::string_view after_dlq_id,
      std::size_t limit) = 0;

  /// One page of the records that match `query`, in list()'s order
  /// (creation time, then dlq_id); `query.after` continues a previous page.
  [[nodiscard]] virtual expected<moderation_page, moderation_error> query(const moderation_query& query) = 0;

  /// The records counted by category, triage class, status and failure
  /// code, and the oldest pending record's creation time.
  [[nodiscard]] virtual expected<dlq_statistics, moderation_error> statistics() = 0;

  /// Consecutive buckets of `width` (at least a second) from `since` until
  /// `until`, at most the last 10000: the dead letters created in each, by
  /// category, and the traffic recorded in it. Empty when `until` is not
  /// after `since`.
  [[nodiscard]] virtual expected<std::vector<dlq_timeline_bucket>, moderation_error> timeline(
      timestamp since, timestamp until, std::chrono::seconds width) = 0;

  /// timeline() until now.
  [[nodiscard]] expected<std::vector<dlq_timeline_bucket>, moderation_error> timeline(timestamp since,
                                                                                     std::chrono::seconds width);

  /// Adds to the traffic of the minute holding `at` (a row per minute of
  /// table `llmdlq_traffic`): `processed` responses judged, of which
  /// `dead_lettered` were dead-lettered. timeline() reads it back.
  [[nodiscard]] virtual expected<void, moderation_error> record_traffic(timestamp at, std::uint64_t processed,
                                                                        std::uint64_t dead_lettered) = 0;
};

LLMDLQ_END_NAMESPACE

#include "llmdlq/moderation_query.hpp"
