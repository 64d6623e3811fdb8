// SPDX-License-Identifier: MIT
// Definitions for taxonomy.hpp.
#pragma once

#include <array>
#include <utility>

#include "llmdlq/config.hpp"
#include "llmdlq/taxonomy.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail {

inline constexpr std::array<std::string_view, 8> category_names = {
    "poison", "refusal", "empty", "truncated", "syntax", "schema", "semantic", "low_confidence"};
inline constexpr std::array<std::string_view, 6> triage_names = {
    "transient", "deterministic", "ambiguous", "poison", "policy", "version_drift"};
inline constexpr std::array<std::string_view, 7> action_names = {
    "local_repair", "repair_prompt", "escalate_model", "relax_schema", "human_review", "hold", "discard"};

template <class Enum, std::size_t N>
std::optional<Enum> enum_from(const std::array<std::string_view, N>& names, std::string_view name) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace detail

LLMDLQ_INLINE std::string_view to_string(failure_category c) noexcept {
  return detail::category_names[static_cast<std::size_t>(c)];
}
LLMDLQ_INLINE std::string_view to_string(triage_class c) noexcept {
  return detail::triage_names[static_cast<std::size_t>(c)];
}
LLMDLQ_INLINE std::string_view to_string(recommended_action a) noexcept {
  return detail::action_names[static_cast<std::size_t>(a)];
}

LLMDLQ_INLINE std::optional<failure_category> failure_category_from(std::string_view name) noexcept {
  return detail::enum_from<failure_category>(detail::category_names, name);
}
LLMDLQ_INLINE std::optional<triage_class> triage_class_from(std::string_view name) noexcept {
  return detail::enum_from<triage_class>(detail::triage_names, name);
}
LLMDLQ_INLINE std::optional<recommended_action> recommended_action_from(std::string_view name) noexcept {
  return detail::enum_from<recommended_action>(detail::action_names, name);
}

LLMDLQ_INLINE triage triage_for(failure_category category, bool repaired_locally) noexcept {
  using c = failure_category;
  using t = triage_class;
  using a = recommended_action;
  switch (category) {
    case c::poison: return {t::poison, a::discard, false};
    case c::refusal: return {t::policy, a::human_review, false};
    case c::empty: return {t::transient, a::repair_prompt, true};
    case c::truncated: return {t::transient, a::repair_prompt, true};
    case c::syntax:
      return repaired_locally ? triage{t::transient, a::repair_prompt, true}
                              : triage{t::transient, a::local_repair, true};
    case c::schema: return {t::deterministic, a::hold, false};
    case c::semantic: return {t::ambiguous, a::human_review, false};
    case c::low_confidence: return {t::ambiguous, a::human_review, false};
  }
  return {};
}

LLMDLQ_INLINE std::string default_failure_code(failure_category category, std::string_view prefix) {
  static constexpr std::array<std::string_view, 8> codes = {
      "poison_input",     "model_refusal",      "empty_output",     "truncated_output",
      "structural_broken_json", "schema_violation", "semantic_violation", "low_confidence"};
  std::string code;
  if (!prefix.empty()) {
    code.append(prefix);
    code.push_back('_');
  }
  code.append(codes[static_cast<std::size_t>(category)]);
  return code;
}

LLMDLQ_END_NAMESPACE
