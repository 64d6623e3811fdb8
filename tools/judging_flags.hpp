// SPDX-License-Identifier: MIT
// The options that say how a response is judged (local repair, coercion,
// confidence, failure codes, the guard), read the same way by every command
// that judges: `llmdlq process` judges the pipeline's responses with them,
// `llmdlq eval` a candidate's answers.
#pragma once

#include <optional>
#include <string>

#include <llmdlq/process_config.hpp>

#include "options.hpp"

namespace llmdlq::cli {

inline constexpr option judging_options_table[] = {
    {"--repair", option_kind::value, "local|off", "local repair of broken JSON (default local)"},
    {"--coerce", option_kind::flag, "", "schema-guided coercion, reported as repairs of tier \"coercion\""},
    {"--min-confidence", option_kind::value, "X", "the confidence a response needs, from 0 to 1"},
    {"--code-prefix", option_kind::value, "PREFIX", "put before every failure code"},
    {"--no-instruction-phrases", option_kind::flag, "",
     "do not treat \"ignore previous instructions\" and the like as injection"},
};

/// Reads the options above from `parsed` into `config`; why not, as a usage error's message.
[[nodiscard]] std::optional<std::string> read_judging_options(const parsed_arguments& parsed, process_config& config);

}  // namespace llmdlq::cli
