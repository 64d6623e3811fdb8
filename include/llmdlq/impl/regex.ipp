// SPDX-License-Identifier: MIT
// Definitions for regex.hpp: the fast scanner where it decides the pattern, PCRE2 elsewhere.
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/detail/regex/engine.hpp"
#include "llmdlq/regex.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE expected<ecma_regex, regex_error> ecma_regex::compile(std::string_view pattern,
                                                                   regex_syntax syntax) {
  detail::ecma_regex_options options;
  options.syntax = syntax;
  return detail::ecma_regex_access::compile(pattern, options);
}

LLMDLQ_INLINE regex_match ecma_regex::search(std::string_view subject) const noexcept {
  if (!detail::is_valid_utf8(subject)) return regex_match::no_match;
  return search(subject, valid_utf8);
}

LLMDLQ_INLINE regex_match ecma_regex::search(std::string_view subject, valid_utf8_t) const noexcept {
  if (!impl_) return regex_match::no_match;
  if (impl_->fast) return detail::fast_search(*impl_->fast, subject) ? regex_match::match : regex_match::no_match;
  return detail::pcre2_search(impl_->code, impl_->jit, subject);
}

LLMDLQ_INLINE const std::string& ecma_regex::pattern() const noexcept {
  static const std::string empty;
  return impl_ ? impl_->pattern : empty;
}

LLMDLQ_END_NAMESPACE
