// SPDX-License-Identifier: MIT
// The WHERE clause of a moderation_query, with every value a bound parameter,
// for the SQL stores (each gives its placeholder and column spellings).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/moderation_query.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// How a store's SQL spells what the clause needs.
struct moderation_sql_dialect {
  std::string (*placeholder)(std::size_t number);           ///< `?3`, `$3` (numbered from 1)
  std::string (*version_column)(std::string_view field);   ///< the envelope's versions.<field> as text
  std::string_view time_cast;  ///< appended to a time parameter: `::timestamptz`, or nothing
};

/// A condition and the texts bound to its placeholders, in order.
struct moderation_sql_filter {
  std::string where = "TRUE";
  std::vector<std::string> values;
};

/// The conditions of `q` (all but its limit) over the table's columns
/// dlq_id, status, category, triage, failure_code and created_at. The
/// cursor's condition is `(created_at, dlq_id) > (after)`, for pages in
/// `ORDER BY created_at, dlq_id`.
[[nodiscard]] inline moderation_sql_filter moderation_query_filter(const moderation_query& q,
                                                                   const moderation_sql_dialect& d) {
  moderation_sql_filter f;
  std::vector<std::string> conditions;
  const auto bind = [&](std::string value) {
    f.values.push_back(std::move(value));
    return d.placeholder(f.values.size());
  };
  const auto any_of = [&](std::string_view column, const auto& values, auto text) {
    if (values.empty()) return;
    std::string list;
    for (const auto& v : values) {
      if (!list.empty()) list += ", ";
      list += bind(std::string(text(v)));
    }
    conditions.push_back(fmt::format("{} IN ({})", column, list));
  };
  const auto same = [](const std::string& s) -> const std::string& { return s; };
  any_of("status", q.statuses, [](moderation_status s) { return to_string(s); });
  any_of("category", q.categories, same);
  any_of("triage", q.triage_classes, same);
  any_of("failure_code", q.failure_codes, same);
  for (const auto& [field, value] : {std::pair<std::string_view, const std::string*>{"schema", &q.schema_version},
                                     {"prompt", &q.prompt_version},
                                     {"model", &q.model_version}}) {
    if (!value->empty()) conditions.push_back(fmt::format("{} = {}", d.version_column(field), bind(*value)));
  }
  if (q.created_since) {
    conditions.push_back(fmt::format("created_at >= {}{}", bind(format_rfc3339(*q.created_since)), d.time_cast));
  }
  if (q.created_before) {
    conditions.push_back(fmt::format("created_at < {}{}", bind(format_rfc3339(*q.created_before)), d.time_cast));
  }
  if (q.after) {
    const std::string at = bind(q.after->after_created_at);
    const std::string id = bind(q.after->after_dlq_id);
    conditions.push_back(fmt::format("(created_at > {0}{2} OR (created_at = {0}{2} AND dlq_id > {1}))", at, id,
                                     d.time_cast));
  }
  for (std::size_t i = 0; i < conditions.size(); ++i) {
    f.where = i == 0 ? conditions[0] : f.where + " AND " + conditions[i];
  }
  return f;
}

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
