// SPDX-License-Identifier: MIT
// What every moderation store, SQL or not, shapes its answers with: a page
// cut from a read of one record more, and the empty buckets of a timeline.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/moderation_query.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// The page of records read with `LIMIT limit + 1`: the extra record, if
/// any, says there are more and is dropped.
[[nodiscard]] inline moderation_page make_moderation_page(std::vector<moderation_record> records, std::size_t limit) {
  moderation_page page;
  if (records.size() > limit) {
    records.resize(limit);
    page.more = true;
  }
  page.records = std::move(records);
  if (page.more && !page.records.empty()) {
    page.next = moderation_cursor{page.records.back().created_at, page.records.back().dlq_id};
  }
  return page;
}

/// The most buckets a timeline returns.
inline constexpr std::size_t max_timeline_buckets = 10000;

/// Empty buckets covering [since, until) in steps of `width`, the last
/// max_timeline_buckets of them; `since` and `width` (at least a second)
/// are updated to what the buckets use.
[[nodiscard]] inline std::vector<dlq_timeline_bucket> empty_timeline(timestamp& since, timestamp until,
                                                                     std::chrono::seconds& width) {
  if (width < std::chrono::seconds(1)) width = std::chrono::seconds(1);
  std::vector<dlq_timeline_bucket> buckets;
  if (until <= since) return buckets;
  const auto span = until - since;
  auto count = static_cast<std::size_t>((span + width - std::chrono::milliseconds(1)) / width);
  if (count > max_timeline_buckets) {
    since += width * static_cast<std::int64_t>(count - max_timeline_buckets);
    count = max_timeline_buckets;
  }
  buckets.resize(count);
  for (std::size_t i = 0; i < count; ++i) buckets[i].start = since + width * static_cast<std::int64_t>(i);
  return buckets;
}

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
