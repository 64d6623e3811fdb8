// SPDX-License-Identifier: MIT
// A counting hook for the passes judging makes over a response's text: each
// whole-text reader says it ran, and a test that installs a counter sees how
// often each ran for one response. Without a counter, a pass costs one
// thread-local load.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// The readers that go over a whole text.
enum class text_pass : std::uint8_t {
  forward_pass,    ///< validation while reading the text (judge_text)
  parse,           ///< simdjson's parse into a document
  locate_error,    ///< the strict SAX pass that places a syntax error
  utf8_check,      ///< where the text stops being UTF-8
  binary_scan,     ///< control bytes that make it binary
  injection_scan,  ///< injection markers
  refusal_scan,    ///< refusal phrases
  repair,          ///< locating and repairing the JSON value in it
  sha256,          ///< the hash an envelope keeps of a captured text
  redaction,       ///< the PII detectors over the text
};
inline constexpr std::size_t text_pass_kinds = 10;

constexpr std::string_view to_string(text_pass pass) noexcept {
  constexpr std::array<std::string_view, text_pass_kinds> names{
      "forward_pass",   "parse",        "locate_error", "utf8_check", "binary_scan",
      "injection_scan", "refusal_scan", "repair",       "sha256",     "redaction"};
  return names[static_cast<std::size_t>(pass)];
}

/// How many times each pass ran while a counter was installed.
struct text_pass_counts {
  std::array<unsigned, text_pass_kinds> runs{};
  [[nodiscard]] unsigned operator[](text_pass pass) const noexcept { return runs[static_cast<std::size_t>(pass)]; }
  [[nodiscard]] unsigned total() const noexcept { return std::accumulate(runs.begin(), runs.end(), 0u); }
};

inline text_pass_counts*& installed_text_pass_counts() noexcept {
  thread_local text_pass_counts* counts = nullptr;
  return counts;
}

/// Says that `pass` ran over a whole text (on this thread).
inline void count_text_pass(text_pass pass) noexcept {
  if (text_pass_counts* counts = installed_text_pass_counts()) ++counts->runs[static_cast<std::size_t>(pass)];
}

/// Counts the passes on this thread while it lives.
class counting_text_passes {
 public:
  explicit counting_text_passes(text_pass_counts& counts) noexcept : previous_(installed_text_pass_counts()) {
    installed_text_pass_counts() = &counts;
  }
  ~counting_text_passes() { installed_text_pass_counts() = previous_; }
  counting_text_passes(const counting_text_passes&) = delete;
  counting_text_passes& operator=(const counting_text_passes&) = delete;

 private:
  text_pass_counts* previous_;
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
