// SPDX-License-Identifier: MIT
// The dead letters and the recorded traffic over time (a moderation
// store's timeline and record_traffic), the same on every SQL back-end.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/store/query_results.hpp"
#include "llmdlq/detail/store/sql_dialect.hpp"
#include "llmdlq/detail/store/sql_session.hpp"
#include "llmdlq/moderation_query.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// The dead letters of `[since, until)` by bucket of `width` and category,
/// and the traffic recorded then (when the traffic table exists), in one
/// attempt; see moderation_store::timeline.
[[nodiscard]] inline expected<std::vector<dlq_timeline_bucket>, moderation_error> timeline(
    sql_session& session, const sql_dialect& d, const store_tables& tables, timestamp since, timestamp until,
    std::chrono::seconds width) {
  const auto empty = empty_timeline(since, until, width);
  if (empty.empty()) return empty;
  const auto at = [&](std::size_t n) { return d.placeholder(n) + std::string(d.time_cast); };
  const std::string letters = fmt::format(
      "SELECT {0} AS bucket, category, count(*) FROM {1} WHERE created_at >= {2} AND created_at < {3} "
      "GROUP BY bucket, category",
      d.time_bucket("created_at"), tables.dlq, at(3), at(4));
  const std::string traffic = fmt::format(
      "SELECT {0} AS bucket, sum(processed), sum(dead_lettered) FROM {1} WHERE dlq_table = {2} AND "
      "minute >= {3} AND minute < {4} GROUP BY bucket",
      d.time_bucket("minute"), tables.traffic, d.placeholder(5), at(3), at(4));
  const sql_value values[] = {since.time_since_epoch().count(), std::chrono::milliseconds(width).count(),
                              format_rfc3339(since), format_rfc3339(until), tables.name};
  const sql_value traffic_table[] = {tables.traffic};
  std::vector<dlq_timeline_bucket> buckets;
  const auto bucket = [&](const sql_row& row) -> dlq_timeline_bucket* {
    const auto i = row.integer(0);
    return i >= 0 && static_cast<std::size_t>(i) < buckets.size() ? &buckets[static_cast<std::size_t>(i)] : nullptr;
  };
  auto read = session.attempt([&]() -> expected<void, moderation_error> {
    buckets = empty;
    auto counted = session.execute(letters, std::span(values, 4), [&](const sql_row& row) {
      if (auto* b = bucket(row)) b->dead_letters_by_category[row.text(1)] += row.count(2);
    }, "timeline");
    if (!counted) return counted;
    bool recorded = false;
    auto exists = session.execute(std::string(d.table_exists), traffic_table,
                              [&](const sql_row& row) { recorded = row.integer(0) != 0; }, "timeline");
    if (!exists || !recorded) return exists;
    return session.execute(traffic, values, [&](const sql_row& row) {
      if (auto* b = bucket(row)) {
        b->processed += row.count(1);
        b->dead_lettered += row.count(2);
      }
    }, "timeline");
  });
  if (!read) return unexpected(std::move(read.error()));
  return buckets;
}

/// Adds `processed` and `dead_lettered` (each at most INT64_MAX) to the
/// traffic row of the DLQ and the minute holding `at`: one upsert, run
/// once (a retry could count twice).
[[nodiscard]] inline expected<void, moderation_error> record_traffic(sql_session& session, const sql_dialect& d,
                                                                     const store_tables& tables, timestamp at,
                                                                     std::uint64_t processed,
                                                                     std::uint64_t dead_lettered) {
  const auto count = [](std::uint64_t n) { return static_cast<std::int64_t>(std::min<std::uint64_t>(n, INT64_MAX)); };
  const sql_value values[] = {tables.name, format_rfc3339(std::chrono::floor<std::chrono::minutes>(at)),
                              count(processed), count(dead_lettered)};
  const std::string sql = fmt::format(
      "INSERT INTO {0} AS t (dlq_table, minute, processed, dead_lettered) VALUES ({1}, {2}{5}, {3}{6}, {4}{6}) "
      "ON CONFLICT (dlq_table, minute) DO UPDATE SET processed = t.processed + excluded.processed, "
      "dead_lettered = t.dead_lettered + excluded.dead_lettered",
      tables.traffic, d.placeholder(1), d.placeholder(2), d.placeholder(3), d.placeholder(4), d.time_cast,
      d.integer_cast);
  return session.execute(sql, values, {}, "record traffic");
}

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
