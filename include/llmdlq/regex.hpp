// SPDX-License-Identifier: MIT
// ECMA-262 regular expressions (JSON Schema's `pattern` dialect) on PCRE2.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail {
struct ecma_regex_access;
}  // namespace detail

/// Why a pattern cannot be used.
struct regex_error {
  std::size_t offset = 0;  ///< byte offset in the pattern
  std::string message;
};

/// Outcome of one search.
enum class regex_match : unsigned char {
  no_match,
  match,
  budget_exceeded,  ///< the search hit its backtracking budget (a pathological subject)
};

/// Which pattern grammar ecma_regex::compile() reads. Either way a pattern
/// matches with the `u` flag's meaning (code points, ECMA-262's classes).
enum class regex_syntax : unsigned char {
  /// The `u` flag's grammar plus the web-compatible syntax of ECMA-262 Annex B
  /// that real schemas write, and that JavaScript without `u`, Python and PCRE
  /// accept: identity escapes of punctuation and non-ASCII characters (`\-`,
  /// `\_`, `\~`, `\'`, `\@`), a class escape beside a `-` in a class (`[\w-.]`
  /// holds `\w`, `-` and `.`), and `{`, `}` and `]` as literals where they
  /// start no quantifier and end no class. Escaped letters and digits that
  /// ECMA-262 does not define (`\a`, `\8`) stay errors: engines disagree on them.
  web_compatible,
  /// Exactly the `u` flag's grammar: each construct above is a compile error.
  strict_unicode,
};

/// A compiled ECMA-262 pattern, searched the way JSON Schema's `pattern` is:
/// unanchored, code-point based (UTF-8 subjects), with ECMA-262's meaning of
/// `\d`, `\w`, `\s`, `.` and `$`. Escapes and constructs ECMA-262 does not
/// define are compile errors (see regex_syntax for the ones Annex B adds).
///
/// Immutable and thread-safe once compiled; copies share the compiled code.
/// A search is bounded by a backtracking budget, so a hostile subject cannot
/// stall a worker.
///
/// Patterns that are a sequence of quantified literals and classes (such as
/// `^[A-Z]{3}$` or `^\d{4}-\d{2}-\d{2}$`), where greedy matching is provably
/// exact, run on a direct scanner in linear time; the rest run on PCRE2,
/// JIT-compiled where the platform allows.
///
/// What PCRE2 10.42 cannot express is a compile error that says so: lookbehinds
/// of unbounded length (except a leading repeated atom, as in `(?<=a+)b`),
/// quantifier bounds above 65535, groups nested deeper than 250 and the
/// Changes_When_NFKC_Casefolded property. ES2025's duplicate group names and
/// pattern modifiers (`(?i:..)`) are not accepted. Two differences remain, both
/// visible only through back-references: captures inside a repeated group are
/// not reset on each repetition, and lookbehinds match left to right.
///
/// Example:
///
///     auto re = llmdlq::ecma_regex::compile("^[A-Z]{3}$");
///     if (re && re->search("EUR") == llmdlq::regex_match::match) { ... }
class ecma_regex {
 public:
  /// Translates and compiles `pattern` (ECMA-262 with the `u` flag, as JSON
  /// Schema uses it). The error's offset points at the offending construct.
  [[nodiscard]] static LLMDLQ_INLINE expected<ecma_regex, regex_error> compile(
      std::string_view pattern, regex_syntax syntax = regex_syntax::web_compatible);

  /// Looks for a match anywhere in `subject`, which must be valid UTF-8 (a
  /// subject that is not never matches).
  ///
  /// Budget: a PCRE2 search may take 1,000,000 + 100 x `subject.size()`
  /// backtracking steps (the size rounded up to whole KiB; capped at
  /// 100,000,000), 8 MiB of JIT stack per thread
  /// or 64 MiB of interpreter heap, so its run time stays linear in the
  /// subject's length; past that it returns regex_match::budget_exceeded. The
  /// fast scanner is linear by construction. Allocates nothing once the
  /// calling thread has made its first search.
  [[nodiscard]] LLMDLQ_INLINE regex_match search(std::string_view subject) const noexcept;

  /// search() for a subject the caller knows is valid UTF-8 (a string of a
  /// parsed JSON document), without checking it again.
  struct valid_utf8_t {};
  static constexpr valid_utf8_t valid_utf8{};
  [[nodiscard]] LLMDLQ_INLINE regex_match search(std::string_view subject, valid_utf8_t) const noexcept;

  [[nodiscard]] const std::string& pattern() const noexcept;

 private:
  struct impl;
  friend struct detail::ecma_regex_access;
  explicit ecma_regex(std::shared_ptr<const impl> impl) noexcept : impl_(std::move(impl)) {}
  std::shared_ptr<const impl> impl_;
};

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/regex.ipp"
#endif
