// SPDX-License-Identifier: MIT
// Zero-token local repair of LLM output: every change reported, with its
// risk tier, so that policy decides what may be accepted.
//
// Repair is one linear pass with an explicit stack: it copies what is JSON
// and rewrites what is not. Valid JSON comes back byte for byte; the output
// is always strict RFC 8259 JSON or an error with a position; and
// repair(repair(x)) == repair(x).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/error_category.hpp"
#include "llmdlq/expected.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// How much a repair can change what the model meant.
enum class repair_tier : std::uint8_t {
  lossless,   ///< only presentation: a markdown fence, prose around the value, whitespace
  syntactic,  ///< quotes, commas, literals, comments, escapes: the same data, written validly
  lossy,      ///< drops or invents content (closing a cut-off document, dropping `...`)
  coercion,   ///< changes a value's type to what the schema wants
};

[[nodiscard]] LLMDLQ_INLINE std::string_view to_string(repair_tier tier) noexcept;

/// Which tiers a caller accepts, as a bit set of repair_tier values.
struct repair_tiers {
  std::uint8_t bits = 0;
  constexpr repair_tiers() noexcept = default;
  constexpr repair_tiers(std::initializer_list<repair_tier> tiers) noexcept {
    for (const auto t : tiers) bits |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(t));
  }
  [[nodiscard]] constexpr bool allows(repair_tier t) const noexcept { return (bits >> static_cast<unsigned>(t)) & 1u; }
  friend constexpr bool operator==(repair_tiers, repair_tiers) noexcept = default;
};

/// One change made to the raw text: its bytes [begin, end) were replaced
/// by `after` (an insertion has begin == end).
///
/// The actions of a repair_result replay: they are sorted by `begin` (an
/// insertion before a replacement at the same offset), their spans do not
/// overlap, `before` is exactly raw[begin, end), and copying the raw text
/// with each span replaced by its `after` yields exactly
/// repair_result::json. Nothing changes that no action names.
struct repair_action {
  /// Stable name of the repair, a static string: `markdown_fence`,
  /// `trailing_comma`, `truncated`... (README lists them with their tiers).
  std::string_view code;
  repair_tier tier = repair_tier::lossless;
  std::size_t begin = 0;  ///< byte span [begin, end) in the raw text that changed
  std::size_t end = 0;
  std::string before;  ///< the raw bytes of the span
  std::string after;   ///< what replaced them, exactly
  std::string path;    ///< JSON Pointer of the value changed, for coercions; empty otherwise
  friend bool operator==(const repair_action&, const repair_action&) = default;
};

/// `{"code", "tier", "begin", "end", "before", "after"}`, and `"path"` for a
/// coercion.
[[nodiscard]] LLMDLQ_INLINE boost::json::object to_json(const repair_action& action);

/// What local repair produced.
struct repair_result {
  std::string json;                    ///< the repaired text (the input itself when nothing changed)
  std::vector<repair_action> actions;  ///< in order of position, replaying to `json`; empty when nothing changed
  /// The document still ends inside a string, array or object: it was cut
  /// off, and is never to be accepted as it stands.
  bool truncated = false;
};

/// Why local repair found nothing it could stand behind.
enum class repair_errc : std::uint8_t {
  no_json,           ///< no JSON object or array in the text
  ambiguous,         ///< several different JSON values: choosing one would be a guess
  unrepairable,      ///< a JSON value starts here, but this is beyond what repair may fix
  tier_not_allowed,  ///< the value needs a repair of a tier the options do not allow
  invalid_utf8,      ///< the text is not UTF-8
  budget_exceeded,   ///< the input (or its repair) is larger than the repair budget
};

LLMDLQ_END_NAMESPACE
template <>
struct std::is_error_code_enum<llmdlq::repair_errc> : std::true_type {};
LLMDLQ_BEGIN_NAMESPACE

namespace detail {
template <>
struct errc_table<repair_errc> {
  static constexpr const char* category = "llmdlq.repair";
  static constexpr std::string_view unknown = "no_json";
  static constexpr errc_entry<repair_errc> entries[] = {
      {repair_errc::no_json, "no_json"},           {repair_errc::ambiguous, "ambiguous"},
      {repair_errc::unrepairable, "unrepairable"}, {repair_errc::tier_not_allowed, "tier_not_allowed"},
      {repair_errc::invalid_utf8, "invalid_utf8"}, {repair_errc::budget_exceeded, "budget_exceeded"},
  };
};
}  // namespace detail

/// The enumerator's name ("ambiguous"), also the message() of its
/// std::error_code, whose category is named "llmdlq.repair".
[[nodiscard]] LLMDLQ_INLINE std::string_view to_string(repair_errc code) noexcept;

struct repair_error {
  repair_errc code = repair_errc::no_json;
  std::size_t offset = 0;  ///< byte offset in the raw text
  std::string message;
  bool truncated = false;  ///< the value found was cut off (tier_not_allowed: closing it is lossy)
};

struct repair_options {
  /// Tiers whose actions may be applied; a value needing others is an error.
  repair_tiers allowed{repair_tier::lossless, repair_tier::syntactic};
  /// Inputs larger than this are not repaired (repair is linear, but a worker
  /// should not spend long on a document it will probably dead-letter).
  std::size_t max_bytes = 16u << 20;
  /// Containers nested deeper than this are an error, as in parse_options.
  std::size_t max_depth = 128;
};

/// Finds the JSON value in an LLM response and repairs its syntax. Candidates
/// come from markdown fences (any language word) that do not sit inside a
/// JSON string, else from a string-aware scan of the prose for objects and
/// arrays; two candidates, even equal ones, are `ambiguous`. Text after a
/// value is dropped as prose only when it cannot continue that value (a
/// comma and a key after an early `}` continue it, even a quoted key whose
/// colon is missing: `{"a": 1}, "b" 2}`), and a value a stray quote makes
/// the text of a string is no candidate. Text before a value is prose
/// unless it ends in a key and colon, a JSON string directly followed by
/// `:` (`Result: {...}` is prose with a colon in it): the value is then a
/// member of an object whose `{` is missing. When the text or fence starts
/// with that key (`"a": {"b": 2}}`), the brace is inserted before it
/// (`missing_opening_brace`, syntactic: an empty `before`, `after` "{");
/// after other prose, where the object begins is unknown, and the text is
/// `unrepairable`. A text that begins with an object or array (its bracket
/// followed by what JSON allows there: `{"`, `[1`, `[]`, not `[Note]`)
/// answers with it: no fence after it is searched, the text is `unrepairable` when that
/// value is, and where process_llm_response chooses among values by the
/// schema, a later one the schema accepts makes the text `ambiguous`, never
/// replaces the first. Valid JSON comes back unchanged with no actions.
[[nodiscard]] LLMDLQ_INLINE expected<repair_result, repair_error> repair(std::string_view raw,
                                                                         const repair_options& options = {});

/// A JSON value in an LLM response that the text cuts off.
struct truncated_value {
  std::size_t begin = 0;  ///< where the value starts in the raw text (inside a fence or prose, perhaps)
  std::string unclosed;   ///< the quote and brackets still open at the end, innermost first: `"}]`
};

/// Whether the JSON value in an LLM response is cut off: found as repair()
/// finds it (in a fence, in prose, or the whole text), and ending inside a
/// string, array or object. Nothing is repaired or returned for use: this
/// tells a truncation from other syntax errors even where repair is off.
/// A value cut off is reported even beside complete ones (an example in
/// the prose); nothing when there is no value or none is cut off. Linear
/// in the text.
[[nodiscard]] LLMDLQ_INLINE std::optional<truncated_value> find_truncated_value(std::string_view raw,
                                                                                const repair_options& limits = {});

namespace detail {
/// Whether a repaired candidate is what the caller wants (process_llm_response
/// asks whether it satisfies the schema); null accepts all.
using candidate_filter = bool (*)(void* context, std::string_view json);

/// repair() for text the caller already knows is not strict JSON, with every
/// tier allowed (the caller judges the actions) and a filter to choose among
/// several candidates. `tiers`, when given, gets the tiers the actions use
/// (perhaps more). `valid_utf8_end`: where the text stops being UTF-8, when
/// the caller has found it already (npos: found here). `leading_answers`:
/// a value that opens the text is the answer (see repair()); off, every
/// value is a candidate alike, for a search of the text's values.
[[nodiscard]] LLMDLQ_INLINE expected<repair_result, repair_error> find_and_repair(
    std::string_view raw, const repair_options& options, candidate_filter filter = nullptr,
    void* filter_context = nullptr, repair_tiers* tiers = nullptr, std::size_t valid_utf8_end = std::string_view::npos,
    bool leading_answers = true);
}  // namespace detail

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/repair.ipp"
#endif
