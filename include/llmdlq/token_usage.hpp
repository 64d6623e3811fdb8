// SPDX-License-Identifier: MIT
// Tokens a model call cost, as the server reported them: what a completion,
// a streamed answer and the recovery ladder count.
#pragma once

#include <cstdint>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Tokens a call cost, as the server reported them.
struct token_usage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;

  [[nodiscard]] constexpr std::int64_t total() const noexcept { return prompt_tokens + completion_tokens; }
  constexpr token_usage& operator+=(const token_usage& other) noexcept {
    prompt_tokens += other.prompt_tokens;
    completion_tokens += other.completion_tokens;
    return *this;
  }
  friend bool operator==(const token_usage&, const token_usage&) = default;
};

LLMDLQ_END_NAMESPACE
