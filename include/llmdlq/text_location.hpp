// SPDX-License-Identifier: MIT
// Where in a text something is: byte offset, line and column.
#pragma once

#include <cstdint>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// A place in a text (a syntax error in a raw response, say).
struct text_location {
  std::uint64_t offset = 0;  ///< 0-based byte offset
  std::uint64_t line = 1;    ///< 1-based
  std::uint64_t column = 1;  ///< 1-based, in Unicode code points
  friend bool operator==(const text_location&, const text_location&) = default;
};

LLMDLQ_END_NAMESPACE
