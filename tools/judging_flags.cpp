// SPDX-License-Identifier: MIT
#include "judging_flags.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace llmdlq::cli {

std::optional<std::string> read_judging_options(const parsed_arguments& a, process_config& config) {
  judging_options& judging = config.judging;
  judging.coerce = a.has("--coerce");
  if (a.has("--no-instruction-phrases")) judging.guard.detect_instruction_phrases = false;
  if (const auto v = a.value("--repair")) {
    if (*v != "local" && *v != "off") return fmt::format("--repair wants local or off, not '{}'", *v);
    judging.repair = *v == "local" ? repair_mode::local : repair_mode::off;
  }
  if (const auto v = a.value("--min-confidence")) {
    double threshold = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), threshold);
    if (ec != std::errc() || end != v->data() + v->size() || !std::isfinite(threshold) || threshold < 0 ||
        threshold > 1) {
      return fmt::format("--min-confidence wants a number from 0 to 1, not '{}'", *v);
    }
    judging.min_confidence = threshold;
  }
  if (const auto v = a.value("--code-prefix")) config.envelope.failure_code_prefix = std::string(*v);
  return std::nullopt;
}

}  // namespace llmdlq::cli
