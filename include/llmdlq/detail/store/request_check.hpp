// SPDX-License-Identifier: MIT
// What every moderation store checks in a request before touching a row, and
// the status list its table's CHECK constraint allows.
#pragma once

#include <optional>
#include <string>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/moderation.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// Why `request` cannot be applied to any record (invalid_resolution), or
/// nothing: resolve and recover carry strict JSON in `corrected`;
/// record_attempt, recover and exhaust carry an envelope of the same dlq_id.
[[nodiscard]] inline std::optional<moderation_error> check_moderation_request(const moderation_request& request) {
  const auto refuse = [](std::string message) {
    return moderation_error{moderation_errc::invalid_resolution, std::move(message), std::nullopt};
  };
  const auto action = request.action;
  if (action == moderation_action::resolve || action == moderation_action::recover) {
    if (!request.corrected) return refuse(fmt::format("{} needs the corrected JSON", to_string(action)));
    if (auto bad = check_syntax(*request.corrected)) {
      return refuse(fmt::format("the corrected JSON is not strict JSON: line {}, column {}: {}", bad->line,
                                bad->column, bad->message));
    }
  }
  if (action == moderation_action::record_attempt || action == moderation_action::recover ||
      action == moderation_action::exhaust) {
    if (!request.envelope_json) return refuse(fmt::format("{} needs the updated envelope", to_string(action)));
    auto parsed = parse_envelope(*request.envelope_json);
    if (!parsed) return refuse("the updated envelope is not an envelope: " + parsed.error().message);
    if (parsed->dlq_id != request.dlq_id) {
      return refuse(fmt::format("the updated envelope is dead letter {}, not {}", parsed->dlq_id, request.dlq_id));
    }
  }
  return std::nullopt;
}

/// `'pending', 'claimed', ...`: every status, quoted for SQL.
[[nodiscard]] inline std::string moderation_status_sql_list() {
  std::string out;
  for (const auto status : all_moderation_statuses) {
    if (!out.empty()) out += ", ";
    out += fmt::format("'{}'", to_string(status));
  }
  return out;
}

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
