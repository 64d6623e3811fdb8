// SPDX-License-Identifier: MIT
// A moderation store's counts (dlq_statistics), read the same way on every
// SQL back-end.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/store/sql_dialect.hpp"
#include "llmdlq/detail/store/sql_session.hpp"
#include "llmdlq/moderation_query.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// The rows of `table` counted by category, triage class, status and
/// failure code, and the oldest pending row's creation time: one query
/// per count, in one attempt.
[[nodiscard]] inline expected<dlq_statistics, moderation_error> statistics(sql_session& session, const sql_dialect& d,
                                                                           std::string_view table) {
  dlq_statistics stats;
  auto read = session.attempt([&]() -> expected<void, moderation_error> {
    stats = {};
    for (const auto& [column, counts] : {std::pair{"category", &stats.by_category}, std::pair{"triage", &stats.by_triage},
                                         std::pair{"status", &stats.by_status},
                                         std::pair{"failure_code", &stats.by_code}}) {
      auto counted = session.execute(fmt::format("SELECT {0}, count(*) FROM {1} GROUP BY {0} ORDER BY {0}", column, table),
                                 {}, [&](const sql_row& row) { (*counts)[row.text(0)] = row.count(1); }, "statistics");
      if (!counted) return counted;
    }
    for (const auto& [status, count] : stats.by_status) stats.total += count;
    return session.execute(
        fmt::format("SELECT {} FROM {} WHERE status = 'pending'", d.time_text("min(created_at)"), table), {},
        [&](const sql_row& row) {
          if (!row.is_null(0)) stats.oldest_pending_created_at = parse_rfc3339(row.text(0));
        },
        "statistics");
  });
  if (!read) return unexpected(std::move(read.error()));
  return stats;
}

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
