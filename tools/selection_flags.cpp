// SPDX-License-Identifier: MIT
#include "selection_flags.hpp"

#include <algorithm>
#include <cstdlib>

#include <llmdlq/taxonomy.hpp>
#include <llmdlq/timestamp.hpp>

namespace llmdlq::cli {

std::optional<std::string> read_selection(const parsed_arguments& a, letter_selection& out) {
  auto& f = out.filter;
  for (const auto v : a.values("--category")) {
    if (!failure_category_from(v)) return fmt::format("no failure category '{}'", v);
    f.categories.emplace_back(v);
  }
  for (const auto v : a.values("--triage")) {
    if (!triage_class_from(v)) return fmt::format("no triage class '{}'", v);
    f.triage_classes.emplace_back(v);
  }
  for (const auto v : a.values("--code")) f.codes.emplace_back(v);
  for (const auto v : a.values("--id")) f.dlq_ids.emplace_back(v);
  if (auto v = a.value("--written-schema")) f.schema_version = std::string(*v);
  if (auto v = a.value("--written-prompt")) f.prompt_version = std::string(*v);
  if (auto v = a.value("--written-model")) f.model_version = std::string(*v);
  for (const std::string_view name : {"--since", "--until"}) {
    const auto v = a.value(name);
    if (!v) continue;
    const auto t = parse_rfc3339(*v);
    if (!t) return fmt::format("{} wants an RFC 3339 time, not '{}'", name, *v);
    (name == "--since" ? f.since : f.until) = *t;
  }
  out.requeued_only = a.has("--requeued-only");
  return read_count(a, "--limit", out.limit);
}

moderation_query query_for(const replay_filter& filter) {
  moderation_query q;
  q.categories = filter.categories;
  q.triage_classes = filter.triage_classes;
  q.failure_codes = filter.codes;
  q.schema_version = filter.schema_version;
  q.prompt_version = filter.prompt_version;
  q.model_version = filter.model_version;
  q.created_since = filter.since;
  q.created_before = filter.until;
  q.limit = 500;
  return q;
}

std::optional<std::uint64_t> count_selected(moderation_store& store, const std::vector<moderation_status>& statuses,
                                            const replay_filter& filter, std::size_t limit, std::string_view after) {
  moderation_query q = query_for(filter);
  q.statuses = statuses;
  if (const auto space = after.find(' '); space != std::string_view::npos) {
    q.after = moderation_cursor{std::string(after.substr(0, space)), std::string(after.substr(space + 1))};
  }
  std::uint64_t n = 0;
  for (;;) {
    auto page = store.query(q);
    if (!page) return std::nullopt;
    for (const auto& r : page->records) {
      const auto& ids = filter.dlq_ids;
      const bool taken = r.readable() && (ids.empty() || std::find(ids.begin(), ids.end(), r.dlq_id) != ids.end());
      if (taken && ++n == limit) return n;
    }
    if (!page->more || !page->next) return n;
    q.after = std::move(page->next);
  }
}

std::optional<std::string> read_rate(const parsed_arguments& a, double& out) {
  const auto v = a.value("--rate");
  if (!v) return std::nullopt;
  const std::string text(*v);
  char* end = nullptr;
  const double rate = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(rate >= 0) || rate > 1e6) {
    return fmt::format("--rate wants letters per second, not '{}'", *v);
  }
  out = rate;
  return std::nullopt;
}

}  // namespace llmdlq::cli
