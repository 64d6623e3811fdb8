// SPDX-License-Identifier: MIT
// Purging expired dead letters: what a store is asked (the time, who asks,
// whether only to count) and what it reports and writes to its audit.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/moderation_record.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct purge_report;

/// A purge of every record whose `expires_at` is at or before `now`. Records
/// without `expires_at` are kept. Each store's `purge()` takes one.
struct purge_request {
  timestamp now{};            ///< the purge's time (inject it: the stores read no clock)
  std::string operator_name;  ///< who purges; written to the audit, must not be empty
  bool dry_run = false;       ///< count what would go, change nothing, audit nothing
  /// Called with the report so far after each piece a store purges piece
  /// by piece (a Redis stream's pages, every 256 expired lines of a JSON
  /// Lines file); a store that purges in one statement calls it never.
  std::function<void(const purge_report&)> on_piece;
};

/// What a purge removed (or, in a dry run, would remove). A purge that is
/// not a dry run writes these fields as its store's audit record.
struct purge_report {
  std::uint64_t count = 0;
  std::optional<timestamp> oldest_expires_at;  ///< the earliest expiry among the records purged
  std::optional<timestamp> newest_expires_at;  ///< the latest
  std::string operator_name;                   ///< who
  timestamp at{};                              ///< when: the request's `now`
  bool dry_run = false;
  /// Records kept because their expiry does not read back (a SQLite
  /// expires_at that is not an RFC 3339 time, a Redis entry whose envelope
  /// is not one): never taken as expired, and not part of the audit record.
  std::uint64_t unreadable = 0;
  std::vector<unreadable_record> unreadable_records;  ///< the first max_listed_unreadable of them

  /// A report for `request` that has purged nothing yet.
  [[nodiscard]] static purge_report for_request(const purge_request& request) {
    return {0, std::nullopt, std::nullopt, request.operator_name, request.now, request.dry_run, 0, {}};
  }
  /// Counts one purged record that expired at `expires_at`.
  void add(timestamp expires_at) noexcept {
    ++count;
    if (!oldest_expires_at || expires_at < *oldest_expires_at) oldest_expires_at = expires_at;
    if (!newest_expires_at || expires_at > *newest_expires_at) newest_expires_at = expires_at;
  }
  /// Counts one record kept because it does not read back, naming the
  /// first max_listed_unreadable of them.
  void add_unreadable(std::string id, std::string reason) {
    ++unreadable;
    if (unreadable_records.size() < max_listed_unreadable) {
      unreadable_records.push_back({std::move(id), std::move(reason)});
    }
  }
  friend bool operator==(const purge_report&, const purge_report&) = default;
};

/// Whether a purge at `now` removes `e`.
[[nodiscard]] inline bool expired(const envelope& e, timestamp now) noexcept {
  return e.expires_at && *e.expires_at <= now;
}

/// The report as JSON: `{"count", "oldest_expires_at", "newest_expires_at",
/// "operator", "at", "dry_run"}`, times in RFC 3339 (absent when nothing was
/// purged). The audit records of the JSONL file and Redis stream are this.
[[nodiscard]] LLMDLQ_INLINE boost::json::object to_json(const purge_report& report);

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/purge.ipp"
#endif
