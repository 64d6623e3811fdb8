// SPDX-License-Identifier: MIT
// Definitions for guard.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>

#include <fmt/format.h>
#include <simdjson.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/anchored_phrases.hpp"
#include "llmdlq/detail/json/utf8_check.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/guard.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail {

// Control tokens and tool-call markup: each starts with '<' or '['.
inline constexpr std::string_view builtin_injection_markup[] = {
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|system|>", "<|assistant|>", "<|user|>",
    "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>", "<start_of_turn>", "<end_of_turn>",
    "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "<tool_call>", "</tool_call>", "<function_calls>",
};

// Instructions addressed to whoever reads the output next.
inline constexpr std::string_view builtin_injection_phrases[] = {
    "ignore previous instructions", "ignore all previous instructions", "ignore the previous instructions",
    "ignore all prior instructions", "ignore the above instructions", "disregard previous instructions",
    "disregard all previous instructions", "disregard the above instructions", "you are now in developer mode",
};

inline constexpr std::string_view builtin_refusal_phrases[] = {
    "i'm sorry", "i am sorry", "i’m sorry", "i cannot", "i can't", "i can’t", "i can not", "i'm unable",
    "i am unable", "i’m unable", "i won't", "i will not", "as an ai", "cannot assist", "can't assist",
    "cannot help with", "can't help with", "unable to comply", "unable to provide",
    "het spijt me", "sorry, ik kan", "ik kan niet",       // Dutch
    "извините", "к сожалению", "не могу", "я не могу",  // Russian
    "Извините", "К сожалению", "Не могу", "Я не могу",
    "සමාවෙන්න",                                        // Sinhala: "sorry"
};

/// Phrases found ignoring ASCII case. Phrases are bucketed by their first
/// byte; when every phrase starts with a byte that is rare in text (`<`,
/// `[`), the search jumps between occurrences with memchr instead of reading
/// every byte.
class phrase_matcher {
 public:
  template <class Range>
  explicit phrase_matcher(const Range& phrases) {
    for (std::string_view p : phrases) add(p);
  }
  void add(std::string_view phrase) {
    if (phrase.empty()) return;
    std::string lower(phrase);
    for (char& c : lower) c = ascii_lower(c);
    const auto first = static_cast<unsigned char>(lower[0]);
    buckets_[first].push_back(std::move(lower));
    starts_[first] = true;
    if (first >= 'a' && first <= 'z') starts_[first - ('a' - 'A')] = true;  // its upper case starts it too
    if (first != '<' && first != '[') markup_only_ = false;
  }
  /// Offset and phrase of the first match, if any.
  [[nodiscard]] std::optional<std::pair<std::size_t, std::string_view>> find(std::string_view text) const {
    std::optional<std::pair<std::size_t, std::string_view>> best;
    if (markup_only_) {
      for (const char start : {'<', '['}) {
        const char* const begin = text.data();
        const char* const end = begin + text.size();
        for (const char* p = begin; p < end; ++p) {
          p = static_cast<const char*>(std::memchr(p, start, static_cast<std::size_t>(end - p)));
          if (!p) break;
          const auto at = static_cast<std::size_t>(p - begin);
          if (best && at >= best->first) break;
          if (auto hit = match_at(text, at)) {
            best = std::pair{at, *hit};
            break;
          }
        }
      }
      return best;
    }
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (!starts_[static_cast<unsigned char>(text[i])]) continue;
      if (auto hit = match_at(text, i)) return std::pair{i, *hit};
    }
    return std::nullopt;
  }

 private:
  std::optional<std::string_view> match_at(std::string_view text, std::size_t at) const {
    const auto first = static_cast<unsigned char>(ascii_lower(text[at]));
    for (const auto& p : buckets_[first]) {
      if (p.size() <= text.size() - at && equal_lower(text.substr(at, p.size()), p)) return std::string_view(p);
    }
    return std::nullopt;
  }
  static bool equal_lower(std::string_view text, std::string_view lower) noexcept {
    for (std::size_t i = 0; i < lower.size(); ++i) {
      if (ascii_lower(text[i]) != lower[i]) return false;
    }
    return true;
  }
  std::array<std::vector<std::string>, 256> buckets_;
  std::array<bool, 256> starts_{};  // the bytes a phrase may start with, either case
  bool markup_only_ = true;
};


// At most `limit` bytes of `text`, cut at a character boundary, controls as spaces.
inline std::string printable_excerpt(std::string_view text, std::size_t limit = 60) {
  if (text.size() > limit) {
    while (limit > 0 && (static_cast<unsigned char>(text[limit]) & 0xC0) == 0x80) --limit;
    text = text.substr(0, limit);
  }
  std::string out;
  for (const char c : text) out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  return out;
}

/// Offset of the first control byte that makes a text binary, or its size.
inline std::size_t first_control_byte(std::string_view raw) noexcept {
  count_text_pass(text_pass::binary_scan);
  auto is_binary = [](unsigned char byte) {
    return (byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7F;
  };
  std::size_t i = 0;
  // Eight bytes at a time: a word without bytes below 0x20 and without 0x7F
  // (the classic "has a zero byte" tests) needs no closer look.
  constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  for (; i + 8 <= raw.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, raw.data() + i, sizeof w);
    const std::uint64_t below_space = (w - 0x20 * ones) & ~w & highs;
    const std::uint64_t del = ((w ^ 0x7F * ones) - ones) & ~(w ^ 0x7F * ones) & highs;
    if (!(below_space | del)) continue;
    for (std::size_t j = i; j < i + 8; ++j) {
      if (is_binary(static_cast<unsigned char>(raw[j]))) return j;
    }
  }
  for (; i < raw.size(); ++i) {
    if (is_binary(static_cast<unsigned char>(raw[i]))) return i;
  }
  return raw.size();
}

// What find_binary finds, given where the first control byte is and where
// the text stops being UTF-8 (each the size when there is none).
inline std::optional<guard_finding> binary_finding(std::string_view raw, std::size_t control, std::size_t utf8_end) {
  if (control < raw.size()) {
    return guard_finding{failure_category::poison, control,
                         fmt::format("binary data: control byte 0x{:02X} at offset {}",
                                     static_cast<unsigned char>(raw[control]), control)};
  }
  if (utf8_end < raw.size()) {
    return guard_finding{failure_category::poison, utf8_end, fmt::format("invalid UTF-8 at offset {}", utf8_end)};
  }
  return std::nullopt;
}

LLMDLQ_INLINE std::optional<guard_finding> find_binary(std::string_view raw, std::size_t valid_utf8_end) {
  return binary_finding(raw, first_control_byte(raw), valid_utf8_end);
}

}  // namespace detail

LLMDLQ_INLINE std::optional<guard_finding> find_binary(std::string_view raw) {
  const std::size_t control = detail::first_control_byte(raw);
  // UTF-8 is read only when no control byte already decides.
  return detail::binary_finding(raw, control, control < raw.size() ? raw.size() : detail::first_invalid_utf8(raw));
}

LLMDLQ_INLINE std::optional<guard_finding> find_injection(std::string_view raw, const guard_options& options) {
  detail::count_text_pass(detail::text_pass::injection_scan);
  if (!options.detect_injection) return std::nullopt;
  static const detail::phrase_matcher markup{std::span<const std::string_view>(detail::builtin_injection_markup)};
  static const detail::anchored_phrases phrases{std::span<const std::string_view>(detail::builtin_injection_phrases)};
  std::optional<std::pair<std::size_t, std::string_view>> found = markup.find(raw);
  if (!found && options.detect_instruction_phrases) found = phrases.find(raw);
  if (!found && !options.extra_injection_markers.empty()) {
    found = detail::phrase_matcher(options.extra_injection_markers).find(raw);
  }
  if (!found) return std::nullopt;
  return guard_finding{failure_category::poison, found->first,
                       fmt::format("prompt-injection marker \"{}\" at offset {}",
                                   detail::printable_excerpt(raw.substr(found->first, found->second.size())),
                                   found->first)};
}

LLMDLQ_INLINE std::size_t longest_injection_marker(const guard_options& options) noexcept {
  if (!options.detect_injection) return 0;
  std::size_t longest = 0;
  for (const auto marker : detail::builtin_injection_markup) longest = std::max(longest, marker.size());
  if (options.detect_instruction_phrases) {
    for (const auto phrase : detail::builtin_injection_phrases) longest = std::max(longest, phrase.size());
  }
  for (const auto& marker : options.extra_injection_markers) longest = std::max(longest, marker.size());
  return longest;
}

LLMDLQ_INLINE std::optional<guard_finding> find_refusal(std::string_view raw, const guard_options& options) {
  detail::count_text_pass(detail::text_pass::refusal_scan);
  if (raw.find('{') != std::string_view::npos || raw.find('[') != std::string_view::npos) return std::nullopt;
  static const detail::phrase_matcher standard{std::span<const std::string_view>(detail::builtin_refusal_phrases)};
  auto found = standard.find(raw);
  if (!found && !options.extra_refusal_phrases.empty()) {
    found = detail::phrase_matcher(options.extra_refusal_phrases).find(raw);
  }
  if (!found) return std::nullopt;
  return guard_finding{failure_category::refusal, found->first,
                       fmt::format("the model refused: \"{}\"", detail::printable_excerpt(raw))};
}

LLMDLQ_END_NAMESPACE
