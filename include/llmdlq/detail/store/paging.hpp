// SPDX-License-Identifier: MIT
// Pages of a moderation store's records (query, list_after), read the same
// way on every SQL back-end.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/store/query_filter.hpp"
#include "llmdlq/detail/store/query_results.hpp"
#include "llmdlq/detail/store/record_reader.hpp"
#include "llmdlq/detail/store/sql_dialect.hpp"
#include "llmdlq/detail/store/sql_session.hpp"
#include "llmdlq/moderation_query.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// One page of the records of `table` that match `q`, in creation time,
/// then dlq_id, order: read with one record more than the page holds, to
/// tell whether more follow.
[[nodiscard]] inline expected<moderation_page, moderation_error> query_page(sql_session& session, const sql_dialect& d,
                                                                            std::string_view table,
                                                                            const moderation_query& q) {
  if (q.limit == 0) return moderation_page{};
  const auto filter = moderation_query_filter(q, d);
  std::vector<sql_value> values;
  for (const auto& v : filter.values) values.emplace_back(d.storable ? d.storable(v) : v);
  values.emplace_back(static_cast<std::int64_t>(std::min<std::size_t>(q.limit, INT64_MAX - 1) + 1));
  const std::string sql = fmt::format("SELECT {} FROM {} WHERE {} ORDER BY created_at, dlq_id LIMIT {}{}",
                                      d.record_columns, table, filter.where, d.placeholder(values.size()),
                                      d.integer_cast);
  std::vector<moderation_record> records;
  auto read = session.attempt([&]() -> expected<void, moderation_error> {
    records.clear();
    return session.execute(sql, values, [&](const sql_row& row) { records.push_back(read_record(row, d)); }, "query");
  });
  if (!read) return unexpected(std::move(read.error()));
  return make_moderation_page(std::move(records), q.limit);
}

/// Up to `limit` records with `status` after the record created at
/// `after_created_at` with `after_dlq_id` (an empty time: from the first).
[[nodiscard]] inline expected<std::vector<moderation_record>, moderation_error> list_after(
    sql_session& session, const sql_dialect& d, std::string_view table, moderation_status status,
    std::string_view after_created_at, std::string_view after_dlq_id, std::size_t limit) {
  moderation_query q;
  q.statuses = {status};
  q.limit = limit;
  if (!after_created_at.empty()) q.after = moderation_cursor{std::string(after_created_at), std::string(after_dlq_id)};
  auto page = query_page(session, d, table, q);
  if (!page) return unexpected(std::move(page.error()));
  return std::move(page->records);
}

/// The record of `table` with this dlq_id, if any, in one attempt.
[[nodiscard]] inline expected<std::optional<moderation_record>, moderation_error> get_record(
    sql_session& session, const sql_dialect& d, std::string_view table, std::string_view dlq_id) {
  const std::string sql = fmt::format("SELECT {} FROM {} WHERE dlq_id = {}", d.record_columns, table, d.placeholder(1));
  const sql_value values[] = {d.storable ? d.storable(dlq_id) : std::string(dlq_id)};
  std::optional<moderation_record> found;
  auto read = session.attempt([&]() -> expected<void, moderation_error> {
    found.reset();
    return session.execute(sql, values, [&](const sql_row& row) { found = read_record(row, d); }, "get");
  });
  if (!read) return unexpected(std::move(read.error()));
  return found;
}

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
