// SPDX-License-Identifier: MIT
// Zero-token local repair of LLM output: every change reported, with its
// risk tier, so that policy decides what may be accepted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"

namespace llmdlq {

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
  [[nodiscard]] constexpr bool allows(repair_tier t) const noexcept {
    return (bits >> static_cast<unsigned>(t)) & 1u;
  }
  friend constexpr bool operator==(repair_tiers, repair_tiers) noexcept = default;
};

/// One change made to the raw text.
struct repair_action {
  std::string code;       ///< stable name of the repair: `markdown_fence`, `prose_around_json`, ...
  repair_tier tier = repair_tier::lossless;
  std::size_t begin = 0;  ///< byte span [begin, end) in the raw text that changed
  std::size_t end = 0;
  std::string before;     ///< what stood there (cut to a short excerpt)
  std::string after;      ///< what replaced it
  friend bool operator==(const repair_action&, const repair_action&) = default;
};

/// What local repair produced.
struct repair_result {
  std::string json;                    ///< the repaired text (the input itself when nothing changed)
  std::vector<repair_action> actions;  ///< in order of position; empty when nothing changed
  /// The document still ends inside a string, array or object: it was cut
  /// off, and is never to be accepted as it stands.
  bool truncated = false;
};

/// Why local repair found nothing it could stand behind.
enum class repair_errc : std::uint8_t {
  no_json,          ///< no JSON value in the text
  ambiguous,        ///< several different JSON values: choosing one would be a guess
  budget_exceeded,  ///< the input is larger than the repair budget
};

struct repair_error {
  repair_errc code = repair_errc::no_json;
  std::size_t offset = 0;
  std::string message;
};

struct repair_options {
  /// Tiers whose actions may be applied; others make repair stop short.
  repair_tiers allowed{repair_tier::lossless, repair_tier::syntactic};
  /// Inputs larger than this are not repaired (repair is linear, but a worker
  /// should not spend long on a document it will probably dead-letter).
  std::size_t max_bytes = 16u << 20;
};

/// Takes the JSON value out of an LLM response: strips a markdown fence, and
/// the prose around a single JSON object or array. Valid JSON comes back
/// unchanged with no actions. Linear in the input; no recursion.
[[nodiscard]] LLMDLQ_INLINE expected<repair_result, repair_error> repair(std::string_view raw,
                                                                        const repair_options& options = {});

namespace detail {
/// repair() for text the caller already knows is not strict JSON.
[[nodiscard]] LLMDLQ_INLINE expected<repair_result, repair_error> extract_json(std::string_view raw,
                                                                             const repair_options& options);
}  // namespace detail

}  // namespace llmdlq

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/repair.ipp"
#endif
