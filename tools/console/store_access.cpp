// SPDX-License-Identifier: MIT
#include "store_access.hpp"

#include <chrono>
#include <filesystem>

#include "../store_spec.hpp"

namespace llmdlq::cli {

expected<dlq_reader, std::string> dlq_reader::open(std::string_view spec, bool read_only) {
  // A console or report over a SQLite file that is not there would show an
  // empty DLQ it just created: a mistyped path, not a queue.
  const auto parsed = parse_store_spec(spec);
  if (!parsed) return unexpected(parsed.error());
  if (parsed->kind == store_spec::store_kind::sqlite && !std::filesystem::exists(parsed->location)) {
    return unexpected("no DLQ at " + parsed->location);
  }
  auto store = open_moderation_store(spec, read_only);
  if (!store) return unexpected(store.error());
  return dlq_reader(std::move(*store));
}

expected<moderation_page, moderation_error> dlq_reader::queue(const queue_filter& filter,
                                                              const std::optional<moderation_cursor>& after,
                                                              std::size_t limit) {
  moderation_query query;
  query.statuses = {filter.status};
  if (!filter.category.empty()) query.categories = {filter.category};
  if (!filter.triage.empty()) query.triage_classes = {filter.triage};
  if (!filter.failure_code.empty()) query.failure_codes = {filter.failure_code};
  query.after = after;
  query.limit = limit;
  return store_->query(query);
}

expected<dlq_overview, moderation_error> dlq_reader::counts() {
  auto statistics = store_->statistics();
  if (!statistics) return unexpected(statistics.error());
  auto unreadable = store_->unreadable_records();
  if (!unreadable) return unexpected(unreadable.error());
  return dlq_overview{std::move(*statistics), {}, std::move(*unreadable)};
}

expected<dlq_overview, moderation_error> dlq_reader::overview(timestamp since, timestamp now) {
  auto overview = counts();
  if (!overview) return overview;
  const auto first_day = std::chrono::floor<std::chrono::days>(since);
  const auto end = std::chrono::floor<std::chrono::days>(now) + std::chrono::days(1);
  auto timeline = store_->timeline(first_day, end, std::chrono::days(1));
  if (!timeline) return unexpected(timeline.error());
  overview->timeline = std::move(*timeline);
  return overview;
}

}  // namespace llmdlq::cli
