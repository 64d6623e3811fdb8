// SPDX-License-Identifier: MIT
// Which letters `llmdlq replay` and `llmdlq redrive` take: the selection
// flags they share, read into the library's replay_filter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <llmdlq/llm/replayer.hpp>
#include <llmdlq/moderation.hpp>

#include "options.hpp"

namespace llmdlq::cli {

inline constexpr option selection_options[] = {
    {"--category", option_kind::repeated, "C", "the failure category"},
    {"--triage", option_kind::repeated, "T", "the triage class"},
    {"--code", option_kind::repeated, "C", "the failure code"},
    {"--id", option_kind::repeated, "DLQ_ID", "the letter"},
    {"--written-schema", option_kind::value, "V", "written under this schema version"},
    {"--written-prompt", option_kind::value, "V", "written under this prompt version"},
    {"--written-model", option_kind::value, "V", "written under this model version"},
    {"--since", option_kind::value, "TIME", "created at or after (RFC 3339)"},
    {"--until", option_kind::value, "TIME", "created before (RFC 3339)"},
    {"--requeued-only", option_kind::flag, "", "only the letters an operator requeued"},
    {"--limit", option_kind::value, "N", "letters at most"},
};

/// What the selection flags chose.
struct letter_selection {
  replay_filter filter;
  bool requeued_only = false;
  std::size_t limit = 0;  ///< 0: all
};

/// Reads the selection flags; why not, as a usage error's message.
[[nodiscard]] std::optional<std::string> read_selection(const parsed_arguments& a, letter_selection& out);

/// Reads count option `name` into `out` when given; why not, as a usage error's message.
template <typename Count>
[[nodiscard]] std::optional<std::string> read_count(const parsed_arguments& a, std::string_view name, Count& out) {
  const auto v = a.value(name);
  if (!v) return std::nullopt;
  const auto n = parse_count(*v);
  if (!n) return fmt::format("{} wants a number, not '{}'", name, *v);
  out = static_cast<Count>(*n);
  return std::nullopt;
}

/// The query that reads, a page of 500 at a time, the records of any
/// status whose columns `filter` takes; its dlq_ids are left to the caller.
[[nodiscard]] moderation_query query_for(const replay_filter& filter);

/// How many readable letters of `store` in `statuses` `filter` takes, after `after`
/// (a replay's cursor, `CREATED_AT DLQ_ID`; empty: from the start), at
/// most `limit` (0: all). Reads those records once, in pages; nothing
/// when the store fails.
[[nodiscard]] std::optional<std::uint64_t> count_selected(moderation_store& store,
                                                          const std::vector<moderation_status>& statuses,
                                                          const replay_filter& filter, std::size_t limit,
                                                          std::string_view after = {});

/// Reads `--rate` (letters per second) into `out` when given.
[[nodiscard]] std::optional<std::string> read_rate(const parsed_arguments& a, double& out);

}  // namespace llmdlq::cli
