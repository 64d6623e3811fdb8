// SPDX-License-Identifier: MIT
// A count and its noun as a person writes them: "1 item", "2 items".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// `n` and the noun in the form `n` calls for: `one` for 1, else `many`
/// (`one` with an "s" when `many` is empty). counted(1, "item") is
/// "1 item", counted(0, "property", "properties") "0 properties".
[[nodiscard]] inline std::string counted(std::uint64_t n, std::string_view one, std::string_view many = {}) {
  std::string out = std::to_string(n);
  out += ' ';
  if (n == 1) {
    out += one;
  } else if (many.empty()) {
    out.append(one).push_back('s');
  } else {
    out += many;
  }
  return out;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
