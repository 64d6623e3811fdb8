// SPDX-License-Identifier: MIT
#include "query_flags.hpp"

#include <fmt/format.h>

#include "cli.hpp"

namespace llmdlq::cli {

std::optional<std::string> read_query_filters(const parsed_arguments& a, timestamp now, moderation_query& query) {
  for (const auto value : a.values("--status")) {
    const auto status = parse_moderation_status(value);
    if (!status) return fmt::format("no status '{}'", value);
    query.statuses.push_back(*status);
  }
  for (const auto value : a.values("--category")) query.categories.emplace_back(value);
  for (const auto value : a.values("--triage")) query.triage_classes.emplace_back(value);
  for (const auto value : a.values("--code")) query.failure_codes.emplace_back(value);
  if (auto v = a.value("--schema-version")) query.schema_version = std::string(*v);
  if (auto v = a.value("--prompt-version")) query.prompt_version = std::string(*v);
  if (auto v = a.value("--model-version")) query.model_version = std::string(*v);
  for (const std::string_view name : {"--since", "--until"}) {
    const auto value = a.value(name);
    if (!value) continue;
    const auto t = parse_time_or_age(*value, now);
    if (!t) return fmt::format("{} wants an RFC 3339 time or an age like 2h, not '{}'", name, *value);
    (name == "--since" ? query.created_since : query.created_before) = *t;
  }
  return std::nullopt;
}

}  // namespace llmdlq::cli
