// SPDX-License-Identifier: MIT
// The guard in front of the parser: poison (binary bytes, invalid UTF-8,
// prompt injection aimed at downstream tools) and refusals.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/taxonomy.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// What the guard looks for.
struct guard_options {
  /// Look for prompt-injection markup: chat-template control tokens
  /// (`<|im_start|>`, `[INST]`, `<<SYS>>`, ...) and tool-call tags
  /// (`<tool_call>`, ...), text meant to steer the next model or tool that
  /// reads this output. They never occur in legitimate data, and finding
  /// them costs a memchr for `<` and `[`.
  bool detect_injection = true;
  /// Also look for instruction phrases ("ignore previous instructions",
  /// "disregard all previous instructions", ...). On by default: a failed
  /// output waits in the DLQ for a repair model, where such a phrase is a
  /// second-order injection. Turn it off where documents legitimately quote
  /// them; the search reads every byte.
  bool detect_instruction_phrases = true;
  /// Markers added to the built-in ones, matched ignoring ASCII case; those
  /// that start with neither `<` nor `[` are searched as phrases.
  std::vector<std::string> extra_injection_markers;
  /// Refusal phrases added to the built-in list ("I'm sorry", "I cannot",
  /// "Извините", ...); they count only in a response that holds no JSON.
  std::vector<std::string> extra_refusal_phrases;
};

/// Why the guard stopped a response.
struct guard_finding {
  failure_category category = failure_category::poison;
  std::size_t offset = 0;  ///< where in the raw text
  std::string message;
};

/// NUL bytes and other control characters (but tab, line feed and carriage
/// return), and invalid UTF-8. Linear; no allocation unless it finds one.
[[nodiscard]] LLMDLQ_INLINE std::optional<guard_finding> find_binary(std::string_view raw);

namespace detail {
/// find_binary for a text known to be UTF-8 up to `valid_utf8_end` (its
/// size: all of it), found once for every stage that needs it.
[[nodiscard]] LLMDLQ_INLINE std::optional<guard_finding> find_binary(std::string_view raw, std::size_t valid_utf8_end);
}  // namespace detail

/// A prompt-injection marker anywhere in `raw`.
[[nodiscard]] LLMDLQ_INLINE std::optional<guard_finding> find_injection(std::string_view raw,
                                                                       const guard_options& options = {});

/// The length of the longest marker find_injection looks for under
/// `options`: a text read in pieces needs searching again only from that
/// many bytes before each new piece.
[[nodiscard]] LLMDLQ_INLINE std::size_t longest_injection_marker(const guard_options& options) noexcept;

/// A refusal phrase in a response with no `{` or `[` in it.
[[nodiscard]] LLMDLQ_INLINE std::optional<guard_finding> find_refusal(std::string_view raw,
                                                                     const guard_options& options = {});

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/guard.ipp"
#endif
