// SPDX-License-Identifier: MIT
// Applies a repair's actions to the raw text, as a reader of the actions
// would: what the replay contract in repair.hpp promises comes out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <llmdlq/repair.hpp>

namespace llmdlq::test {

/// The raw text with each action's span replaced by its `after`, or nothing
/// when the actions break the contract: spans out of order, overlapping or
/// past the end, or a `before` that is not the raw bytes of its span.
inline std::optional<std::string> replay(std::string_view raw, const std::vector<llmdlq::repair_action>& actions) {
  std::string out;
  std::size_t at = 0;
  for (const auto& a : actions) {
    if (a.begin < at || a.end < a.begin || a.end > raw.size()) return std::nullopt;
    if (a.before != raw.substr(a.begin, a.end - a.begin)) return std::nullopt;
    out.append(raw.substr(at, a.begin - at));
    out += a.after;
    at = a.end;
  }
  out.append(raw.substr(at));
  return out;
}

}  // namespace llmdlq::test
