// SPDX-License-Identifier: MIT
// The store that keeps the moderation queue, and what an operator asks of
// it; its records are in moderation_record.hpp, its reads in moderation_query.hpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/error_category.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/moderation_query.hpp"
#include "llmdlq/moderation_record.hpp"
#include "llmdlq/sink.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Why an operator action or a read of a moderation store did not happen.
enum class moderation_errc : std::uint8_t {
  not_found,           ///< no record with that dlq_id
  invalid_transition,  ///< the action is not allowed in the record's status (someone else acted first)
  invalid_resolution,  ///< the corrected JSON (or the replayer's envelope) is missing or not strict JSON
  store_unavailable,   ///< the store failed: nothing changed, try again
  unreadable_record,   ///< the record's stored status is none of moderation_status: nothing changed
};

LLMDLQ_END_NAMESPACE
template <>
struct std::is_error_code_enum<llmdlq::moderation_errc> : std::true_type {};
LLMDLQ_BEGIN_NAMESPACE

namespace detail {
template <>
struct errc_table<moderation_errc> {
  static constexpr const char* category = "llmdlq.moderation";
  static constexpr std::string_view unknown = "unknown";
  static constexpr bool has_permanence = true;
  static constexpr errc_entry<moderation_errc> entries[] = {
      {moderation_errc::not_found, "not_found", true},
      {moderation_errc::invalid_transition, "invalid_transition", true},
      {moderation_errc::invalid_resolution, "invalid_resolution", true},
      {moderation_errc::store_unavailable, "store_unavailable"},
      {moderation_errc::unreadable_record, "unreadable_record", true},
  };
};
}  // namespace detail

/// Whether the same request can never succeed: only a failed store may
/// answer differently next time. A std::error_code of it says the same by
/// comparing equal to failure_condition::permanent.
[[nodiscard]] constexpr bool is_permanent(moderation_errc code) noexcept { return detail::errc_permanent(code); }

/// The enumerator's name ("not_found"), also the message() of its
/// std::error_code, whose category is named "llmdlq.moderation".
[[nodiscard]] constexpr std::string_view to_string(moderation_errc code) noexcept { return detail::errc_name(code); }

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
/// only along transition() and append to its log, in one transaction. Reads
/// return a record that does not read back (moderation_record::readable())
/// with what is wrong, never fail for it: one broken row stops no reader.
class moderation_store : public sink {
 public:
  /// Applies one operator action; returns the record as it now is. A
  /// record whose stored status is none of the statuses is refused
  /// (unreadable_record, naming it): no status is ever read as another.
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

  /// The records that do not read back: how many, and the first
  /// max_listed_unreadable with why. Reads every record once, in query()
  /// pages: linear in the store's size (each envelope is parsed), unlike
  /// statistics(), which the store counts itself.
  [[nodiscard]] virtual expected<unreadable_census, moderation_error> unreadable_records();

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

inline expected<std::vector<dlq_timeline_bucket>, moderation_error> moderation_store::timeline(
    timestamp since, std::chrono::seconds width) {
  return timeline(since, system_now(), width);
}

inline expected<unreadable_census, moderation_error> moderation_store::unreadable_records() {
  unreadable_census census;
  moderation_query q;
  q.limit = 500;
  for (;;) {
    auto page = query(q);
    if (!page) return unexpected(std::move(page.error()));
    for (auto& r : page->records) {
      if (r.readable()) continue;
      ++census.count;
      if (census.records.size() < max_listed_unreadable) {
        census.records.push_back({std::move(r.dlq_id), std::move(r.defect_reason)});
      }
    }
    if (!page->more || !page->next) return census;
    q.after = std::move(page->next);
  }
}

LLMDLQ_END_NAMESPACE
