// SPDX-License-Identifier: MIT
// What runs an ecma_regex: its compiled state, PCRE2 compilation and bounded PCRE2 searches.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#ifndef PCRE2_CODE_UNIT_WIDTH
#  define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>
#include <simdjson.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/regex/fast_program.hpp"
#include "llmdlq/detail/regex/parser.hpp"
#include "llmdlq/detail/regex/pcre2_emitter.hpp"
#include "llmdlq/detail/json/utf8.hpp"
#include "llmdlq/regex.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct ecma_regex::impl {
  std::string pattern;
  std::optional<detail::fast_program> fast;
  std::string translated;  // the PCRE2 pattern; empty when `fast` decides every search
  pcre2_code* code = nullptr;
  bool jit = false;

  impl() = default;
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl() { pcre2_code_free(code); }
};

namespace detail {

inline constexpr std::uint32_t regex_base_budget = 1'000'000;
inline constexpr std::uint32_t regex_budget_per_byte = 100;
inline constexpr std::uint32_t regex_max_budget = 100'000'000;
inline constexpr std::uint32_t regex_heap_limit_kib = 64 * 1024;
inline constexpr std::size_t regex_jit_stack_start = 32 * 1024;
inline constexpr std::size_t regex_jit_stack_max = 8 * 1024 * 1024;

/// The backtracking steps a search of `subject_size` bytes may take. The size
/// counts in whole KiB, so that short subjects share one value and the match
/// context is seldom touched.
inline std::uint32_t regex_budget(std::size_t subject_size) noexcept {
  const std::uint64_t bytes = (std::min<std::uint64_t>(subject_size, regex_max_budget) + 1023) / 1024 * 1024;
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(regex_base_budget + bytes * regex_budget_per_byte, regex_max_budget));
}

/// Whether `text` is well-formed UTF-8 (simdjson's validator).
inline bool is_valid_utf8(std::string_view text) noexcept {
  return simdjson::validate_utf8(text.data(), text.size());
}

/// What a thread needs to run PCRE2 searches: match data (whose backtracking
/// frames PCRE2 keeps between calls), a match context carrying the limits,
/// and a JIT stack, which PCRE2 lets only one thread use at a time.
class regex_scratch {
 public:
  regex_scratch() noexcept {
    data_ = pcre2_match_data_create(1, nullptr);
    context_ = pcre2_match_context_create(nullptr);
    jit_stack_ = pcre2_jit_stack_create(regex_jit_stack_start, regex_jit_stack_max, nullptr);
    if (context_ != nullptr) {
      pcre2_set_heap_limit(context_, regex_heap_limit_kib);
      if (jit_stack_ != nullptr) pcre2_jit_stack_assign(context_, nullptr, jit_stack_);
    }
  }
  regex_scratch(const regex_scratch&) = delete;
  regex_scratch& operator=(const regex_scratch&) = delete;
  ~regex_scratch() {
    pcre2_jit_stack_free(jit_stack_);
    pcre2_match_context_free(context_);
    pcre2_match_data_free(data_);
  }

  static regex_scratch& for_this_thread() noexcept {
    static thread_local regex_scratch scratch;
    return scratch;
  }

  bool usable() const noexcept { return data_ != nullptr && context_ != nullptr; }
  pcre2_match_data* data() const noexcept { return data_; }
  pcre2_match_context* context_for(std::size_t subject_size) noexcept {
    const std::uint32_t budget = regex_budget(subject_size);
    if (budget != budget_) {
      pcre2_set_match_limit(context_, budget);
      pcre2_set_depth_limit(context_, budget);
      budget_ = budget;
    }
    return context_;
  }

 private:
  pcre2_match_data* data_ = nullptr;
  pcre2_match_context* context_ = nullptr;
  pcre2_jit_stack* jit_stack_ = nullptr;
  std::uint32_t budget_ = 0;  // the limits context_ holds; 0 until the first search sets them
};

/// One bounded search with `code`, JIT-compiled when `jit`.
inline regex_match pcre2_search(const pcre2_code* code, bool jit, std::string_view subject) noexcept {
  auto& scratch = regex_scratch::for_this_thread();
  if (!scratch.usable()) return regex_match::budget_exceeded;
  const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  // PCRE2_NO_UTF_CHECK: search() has validated the subject already.
  const int rc = jit ? pcre2_jit_match(code, text, subject.size(), 0, PCRE2_NO_UTF_CHECK, scratch.data(),
                                       scratch.context_for(subject.size()))
                     : pcre2_match(code, text, subject.size(), 0, PCRE2_NO_UTF_CHECK, scratch.data(),
                                   scratch.context_for(subject.size()));
  if (rc >= 0) return regex_match::match;  // 0: a match with more groups than the one-pair ovector holds
  if (rc == PCRE2_ERROR_NOMATCH) return regex_match::no_match;
  // The limits (match, depth, heap, JIT stack) and running out of memory all
  // mean the search could not be finished within its budget.
  return regex_match::budget_exceeded;
}

inline std::string pcre2_error_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0) return "PCRE2 error " + std::to_string(code);
  return std::string(reinterpret_cast<const char*>(buffer));
}

/// Compilation knobs the tests and benchmarks use to run each engine alone.
struct ecma_regex_options {
  bool fast_path = true;  ///< use the direct scanner when it decides the pattern exactly
  bool jit = true;        ///< JIT-compile the PCRE2 code when the platform allows
  regex_syntax syntax = regex_syntax::web_compatible;
};

/// Access to the parts of an ecma_regex that its public interface hides.
struct ecma_regex_access {
  static expected<ecma_regex, regex_error> compile(std::string_view pattern, ecma_regex_options options) {
    ecma_pattern_parser parser(pattern, options.syntax == regex_syntax::web_compatible);
    auto parsed = parser.parse();
    if (!parsed) return unexpected(std::move(parsed.error()));
    reduce_lookbehinds(*parsed);

    auto re = std::make_shared<ecma_regex::impl>();
    re->pattern = std::string(pattern);
    if (options.fast_path) re->fast = make_fast_program(*parsed);
    if (re->fast) return ecma_regex(std::move(re));

    const auto translated = to_pcre2(*parsed);
    re->translated = translated.text;
    int code = 0;
    PCRE2_SIZE error_offset = 0;
    re->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.text.data()), translated.text.size(),
                             PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ALLOW_EMPTY_CLASS |
                                 PCRE2_MATCH_UNSET_BACKREF | PCRE2_NEVER_BACKSLASH_C | PCRE2_NEVER_UCP,
                             &code, &error_offset, nullptr);
    if (re->code == nullptr) {
      const std::size_t offset = translated.source_offset(error_offset);
      if (code == PCRE2_ERROR_UNKNOWN_UNICODE_PROPERTY)  // only script names reach PCRE2 unchecked
        return unexpected(regex_error{offset, "unknown Unicode script"});
      if (code == PCRE2_ERROR_LOOKBEHIND_NOT_FIXED_LENGTH)
        return unexpected(regex_error{offset, "a lookbehind of unbounded length is unsupported by this engine "
                                              "(PCRE2 10.42 needs a bounded length)"});
      return unexpected(regex_error{offset, "unsupported by this engine (PCRE2): " + pcre2_error_message(code)});
    }
    if (options.jit) re->jit = pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE) == 0;
    return ecma_regex(std::move(re));
  }

  static bool uses_fast_path(const ecma_regex& re) noexcept { return re.impl_->fast.has_value(); }
  static bool uses_jit(const ecma_regex& re) noexcept { return re.impl_->jit; }
  static const std::string& translated(const ecma_regex& re) noexcept { return re.impl_->translated; }
};

}  // namespace detail

LLMDLQ_END_NAMESPACE
