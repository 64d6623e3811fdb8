// SPDX-License-Identifier: MIT
// Which records `llmdlq list` and `llmdlq export` take: the filter flags
// they share, read into the library's moderation_query.
#pragma once

#include <optional>
#include <string>

#include <llmdlq/moderation_query.hpp>
#include <llmdlq/timestamp.hpp>

#include "options.hpp"

namespace llmdlq::cli {

inline constexpr option query_filter_options[] = {
    {"--status", option_kind::repeated, "S",
     "pending, claimed, resolved, discarded, requeued, recovered, exhausted or\nredriven"},
    {"--category", option_kind::repeated, "C", "the failure category"},
    {"--triage", option_kind::repeated, "T", "the triage class"},
    {"--code", option_kind::repeated, "X", "the failure code"},
    {"--schema-version", option_kind::value, "V", "written under this schema version"},
    {"--prompt-version", option_kind::value, "V", "written under this prompt version"},
    {"--model-version", option_kind::value, "V", "written under this model version"},
    {"--since", option_kind::value, "TIME", "created at or after: RFC 3339, or an age (90s, 30m, 2h, 7d)"},
    {"--until", option_kind::value, "TIME", "created before: RFC 3339, or an age"},
};

/// Reads the filter flags into `query` (an age counts back from `now`);
/// why not, as a usage error's message.
[[nodiscard]] std::optional<std::string> read_query_filters(const parsed_arguments& a, timestamp now,
                                                            moderation_query& query);

}  // namespace llmdlq::cli
