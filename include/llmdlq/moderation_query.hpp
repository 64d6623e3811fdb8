// SPDX-License-Identifier: MIT
// Reading a moderation queue as an operator does: filtered pages of records,
// counts, and the dead letters (and traffic) over time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/moderation_record.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Where a page of records ends: the next page starts after the record
/// created at `after_created_at` (RFC 3339, as moderation_record::created_at
/// gives it) with `after_dlq_id`. Pages are in creation time, then dlq_id,
/// order, so a record inserted while an operator pages is never shown twice
/// and never skips one already due.
struct moderation_cursor {
  std::string after_created_at;
  std::string after_dlq_id;

  friend bool operator==(const moderation_cursor&, const moderation_cursor&) = default;
};

/// The cursor as one token for a command line or a URL: `CREATED_AT,DLQ_ID`.
[[nodiscard]] inline std::string to_string(const moderation_cursor& c) {
  return c.after_created_at + "," + c.after_dlq_id;
}

/// Reads to_string()'s form back; nothing when the text is not one.
[[nodiscard]] inline std::optional<moderation_cursor> parse_moderation_cursor(std::string_view text) {
  const auto comma = text.find(',');
  if (comma == std::string_view::npos || comma == 0 || comma + 1 == text.size()) return std::nullopt;
  if (!parse_rfc3339(text.substr(0, comma))) return std::nullopt;
  return moderation_cursor{std::string(text.substr(0, comma)), std::string(text.substr(comma + 1))};
}

/// Which records to read. Each list is "any of these" (empty: no filter);
/// the filters together are "all of these".
struct moderation_query {
  std::vector<moderation_status> statuses;
  std::vector<std::string> categories;      ///< failure category: `syntax`, `schema`, ...
  std::vector<std::string> triage_classes;  ///< triage class
  std::vector<std::string> failure_codes;   ///< e.g. `ocr_structural_broken_json`
  std::string schema_version;  ///< the envelope's versions.schema; empty: any
  std::string prompt_version;  ///< the envelope's versions.prompt; empty: any
  std::string model_version;   ///< the envelope's versions.model; empty: any
  std::optional<timestamp> created_since;   ///< created at or after
  std::optional<timestamp> created_before;  ///< created strictly before
  std::optional<moderation_cursor> after;   ///< continue after this record (moderation_page::next)
  std::size_t limit = 100;                  ///< records per page (0 reads nothing)
};

/// One page of a query's records, oldest first.
struct moderation_page {
  std::vector<moderation_record> records;
  bool more = false;                       ///< records past this page matched when it was read
  std::optional<moderation_cursor> next;   ///< the cursor after the last record (set when `more`)
};

/// Counts of a DLQ's records, for dashboards and `llmdlq stats`.
struct dlq_statistics {
  std::uint64_t total = 0;
  std::map<std::string, std::uint64_t> by_category;
  std::map<std::string, std::uint64_t> by_triage;
  std::map<std::string, std::uint64_t> by_status;
  std::map<std::string, std::uint64_t> by_code;
  /// When the oldest record still `pending` was created; nothing when none is.
  std::optional<timestamp> oldest_pending_created_at;
};

/// The records of a store that do not read back (moderation_record::readable()),
/// which dlq_statistics counts by what their columns say (an unknown status as itself).
struct unreadable_census {
  std::uint64_t count = 0;
  std::vector<unreadable_record> records;  ///< the first max_listed_unreadable of them, oldest first, with why
};

/// The dead letters created in [start, start + width) by failure category,
/// and the responses the pipeline judged in that time (what `record_traffic`
/// recorded; 0 when nothing was recorded). The DLQ rate of a bucket is its
/// dead letters over `processed`, when `processed` is known.
struct dlq_timeline_bucket {
  timestamp start{};
  std::map<std::string, std::uint64_t> dead_letters_by_category;
  std::uint64_t processed = 0;
  std::uint64_t dead_lettered = 0;  ///< as recorded with the traffic (0 when unknown)

  [[nodiscard]] std::uint64_t dead_letters() const noexcept {
    std::uint64_t n = 0;
    for (const auto& [category, count] : dead_letters_by_category) n += count;
    return n;
  }
};

LLMDLQ_END_NAMESPACE
