// SPDX-License-Identifier: MIT
#include "store_access.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <boost/json/parse.hpp>
#include <fmt/format.h>
#include <llmdlq/detail/json_path_scan.hpp>

namespace llmdlq::cli {
namespace {

constexpr std::size_t walk_batch = 500;

bool matches(const queue_filter& filter, const moderation_record& r) {
  return (filter.category.empty() || r.category == filter.category) &&
         (filter.triage.empty() || r.triage == filter.triage) &&
         (filter.failure_code.empty() || r.failure_code == filter.failure_code);
}

std::string day_of(std::chrono::sys_days day) {
  const std::chrono::year_month_day ymd(day);
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

}  // namespace

expected<dlq_reader, std::string> dlq_reader::open(std::string_view spec, bool read_only) {
  if (!spec.starts_with("sqlite:") || spec.size() == 7) return unexpected(std::string("give the DLQ as sqlite:PATH"));
  const std::filesystem::path path(spec.substr(7));
  if (!std::filesystem::exists(path)) return unexpected("no DLQ at " + path.string());
  auto store = sqlite_store::open(path, {.read_only = read_only});
  if (!store) return unexpected(store.error().message);
  return dlq_reader(std::make_unique<sqlite_store>(std::move(*store)));
}

expected<queue_page, moderation_error> dlq_reader::queue(const queue_filter& filter,
                                                        const std::optional<queue_cursor>& after,
                                                        std::size_t limit) {
  queue_page page;
  queue_cursor at = after.value_or(queue_cursor{});
  bool more_rows = true;
  // One extra match tells whether there is a next page.
  while (more_rows && page.records.size() <= limit) {
    auto rows = at.after_dlq_id.empty() && at.after_created_at.empty()
                    ? store_->list(filter.status, walk_batch)
                    : store_->list_after(filter.status, at.after_created_at, at.after_dlq_id, walk_batch);
    if (!rows) return unexpected(rows.error());
    more_rows = rows->size() == walk_batch;
    for (auto& row : *rows) {
      at = {row.created_at, row.dlq_id};
      if (matches(filter, row)) page.records.push_back(std::move(row));
      if (page.records.size() > limit) break;
    }
  }
  if (page.records.size() > limit) {
    page.records.resize(limit);
    if (!page.records.empty()) page.next = queue_cursor{page.records.back().created_at, page.records.back().dlq_id};
  }
  return page;
}

expected<dlq_overview, moderation_error> dlq_reader::counts() {
  dlq_overview overview;
  auto stats = store_->statistics();
  if (!stats) return unexpected(stats.error());
  overview.statistics = std::move(*stats);
  auto oldest = store_->list(moderation_status::pending, 1);
  if (!oldest) return unexpected(oldest.error());
  if (!oldest->empty()) overview.oldest_pending_created_at = oldest->front().created_at;
  return overview;
}

expected<dlq_overview, moderation_error> dlq_reader::overview(std::optional<timestamp> since) {
  auto counted = counts();
  if (!counted) return counted;
  auto& overview = *counted;

  std::map<std::chrono::sys_days, std::map<std::string, std::uint64_t>> by_day;
  for (const auto status : all_moderation_statuses) {
    std::string after_created_at, after_dlq_id;
    while (true) {
      auto rows = after_dlq_id.empty() ? store_->list(status, walk_batch)
                                       : store_->list_after(status, after_created_at, after_dlq_id, walk_batch);
      if (!rows) return unexpected(rows.error());
      for (const auto& row : *rows) {
        const auto created = parse_rfc3339(row.created_at);
        if (!created || (since && *created < *since)) continue;
        ++by_day[std::chrono::floor<std::chrono::days>(*created)][row.category];
      }
      if (rows->size() < walk_batch) break;
      after_created_at = rows->back().created_at;
      after_dlq_id = rows->back().dlq_id;
    }
  }
  if (by_day.empty()) return counted;
  auto first = since ? std::min(by_day.begin()->first, std::chrono::floor<std::chrono::days>(*since))
                     : by_day.begin()->first;
  for (auto day = first; day <= by_day.rbegin()->first; day += std::chrono::days(1)) {
    timeline_bucket bucket{day_of(day), {}, 0};
    if (const auto found = by_day.find(day); found != by_day.end()) bucket.by_category = found->second;
    overview.timeline.push_back(std::move(bucket));
  }
  return counted;
}

std::vector<error_span> error_spans(const envelope& e, std::string_view raw) {
  std::vector<error_span> spans;
  if (raw.empty()) return spans;
  if (e.failure.syntax) {
    const auto begin = std::min<std::size_t>(e.failure.syntax->offset, raw.size() - 1);
    spans.push_back({begin, begin + 1,
                     fmt::format("syntax error at line {}, column {}", e.failure.syntax->line,
                                 e.failure.syntax->column)});
  }
  std::vector<detail::pointer_pattern> patterns;
  for (const auto& error : e.failure.errors) {
    if (error.instance_path.empty()) continue;
    patterns.push_back(detail::compile_pointer_pattern(error.instance_path, static_cast<std::uint32_t>(patterns.size())));
    patterns.back().pointer = error.instance_path + ": " + error.message;
  }
  for (const auto& match : detail::json_path_scan(raw, patterns).run()) {
    spans.push_back({match.begin, match.end, patterns[match.pattern].pointer});
  }
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
  std::vector<error_span> disjoint;
  for (auto& span : spans) {
    if (!disjoint.empty() && span.begin < disjoint.back().end) {
      disjoint.back().end = std::max(disjoint.back().end, span.end);
      disjoint.back().label += "; " + span.label;
    } else {
      disjoint.push_back(std::move(span));
    }
  }
  return disjoint;
}

std::vector<validation_error> check_resolution(const schema* schema, std::string_view corrected) {
  boost::system::error_code ec;
  const auto value = boost::json::parse(corrected, ec);
  if (ec) return {validation_error{"", "", "json", "not strict JSON: " + ec.message()}};
  if (schema == nullptr) return {};
  return schema->validate(value);
}

}  // namespace llmdlq::cli
