// SPDX-License-Identifier: MIT
// Rewriting a moderation store's envelopes in place (envelope_rewrite),
// page by page, the same on every SQL back-end.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/store/sql_dialect.hpp"
#include "llmdlq/detail/store/sql_session.hpp"
#include "llmdlq/envelope_rewrite.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// Walks `table` in dlq_id order, `batch` rows (at least 1) a transaction,
/// and stores what `change` returns for a row where it differs from the
/// stored envelope. A failed batch is rolled back and ends the walk; the
/// batches before it stay. Returns the rows changed.
[[nodiscard]] inline expected<std::size_t, moderation_error> rewrite_envelopes(sql_session& session,
                                                                               const sql_dialect& d,
                                                                               std::string_view table,
                                                                               const envelope_rewrite& change,
                                                                               std::size_t batch) {
  batch = std::max<std::size_t>(batch, 1);
  const std::string select =
      fmt::format("SELECT dlq_id, {} FROM {} WHERE dlq_id > {} ORDER BY dlq_id LIMIT {}{}{}", d.envelope_text, table,
                  d.placeholder(1), d.placeholder(2), d.integer_cast, d.lock_rows);
  const std::string update =
      fmt::format("UPDATE {} SET envelope = {}{} WHERE dlq_id = {}", table, d.placeholder(2), d.json_cast,
                  d.placeholder(1));
  const auto limit = static_cast<std::int64_t>(std::min<std::size_t>(batch, INT64_MAX));
  std::size_t changed = 0;
  std::string after;
  for (bool more = true; more;) {
    std::vector<std::pair<std::string, std::string>> rows;  // dlq_id, envelope
    std::size_t changed_here = 0;
    auto page = session.transaction([&]() -> expected<void, moderation_error> {
      rows.clear();
      changed_here = 0;
      const sql_value page_values[] = {after, limit};
      auto read = session.execute(select, page_values,
                              [&](const sql_row& row) { rows.emplace_back(row.text(0), row.text(1)); }, "read");
      if (!read) return read;
      for (const auto& [id, json] : rows) {
        auto replaced = change(id, json);
        if (!replaced || *replaced == json) continue;
        const sql_value update_values[] = {id, std::move(*replaced)};
        if (auto written = session.execute(update, update_values, {}, "rewrite " + id); !written) return written;
        ++changed_here;
      }
      return {};
    });
    if (!page) return unexpected(std::move(page.error()));
    changed += changed_here;
    if (!rows.empty()) after = rows.back().first;
    more = rows.size() == batch;
  }
  return changed;
}

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
