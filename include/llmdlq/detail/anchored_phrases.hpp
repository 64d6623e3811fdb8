// SPDX-License-Identifier: MIT
// Finds phrases ignoring ASCII case at several bytes per cycle: each phrase
// is found through a four-letter anchor it holds, and sixteen positions are
// tested against the ends of every anchor at once.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"

#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Phrases of ASCII text found ignoring case. Each phrase is found through
/// an anchor, four consecutive letters it holds, chosen so that few anchors
/// cover all phrases ("truc" covers every "... instructions"). A text costs
/// a vector compare per anchor for every sixteen bytes; only a position
/// whose four bytes match an anchor is compared with the phrases holding it.
/// A phrase without four consecutive letters is found by a plain scan.
class anchored_phrases {
 public:
  template <class Range>
  explicit anchored_phrases(const Range& phrases) {
    for (std::string_view p : phrases) {
      if (p.empty()) continue;
      std::string lower(p);
      for (char& c : lower) c = ascii_lower(c);
      phrases_.push_back(std::move(lower));
    }
    choose_anchors();
  }

  /// Offset and phrase of a match, if any.
  [[nodiscard]] std::optional<std::pair<std::size_t, std::string_view>> find(std::string_view text) const {
    if (!unanchored_.empty()) {
      for (std::size_t at = 0; at < text.size(); ++at) {
        for (const std::size_t p : unanchored_) {
          if (matches(text, at, phrases_[p])) return std::pair{at, std::string_view(phrases_[p])};
        }
      }
    }
    if (anchors_.empty() || text.size() < 4) return std::nullopt;
#if defined(__GNUC__) || defined(__clang__)
    // A few anchors are held in registers; more are read from ends_.
    switch (ends_.size()) {
      case 1: return find_in_blocks<1>(text);
      case 2: return find_in_blocks<2>(text);
      case 3: return find_in_blocks<3>(text);
      default: return find_in_blocks<0>(text);
    }
#else
    for (std::size_t at = 0; at + 4 <= text.size(); ++at) {
      if (auto hit = match_anchor(text, at)) return hit;
    }
#endif
    return std::nullopt;
  }

 private:
  struct anchor {
    std::string letters;                                    // four, lower case
    std::vector<std::pair<std::size_t, std::size_t>> uses;  // (phrase, offset of the anchor in it)
  };

  static bool is_letter(char c) noexcept { return c >= 'a' && c <= 'z'; }

  static bool matches(std::string_view text, std::size_t at, std::string_view lower) noexcept {
    if (lower.size() > text.size() - at) return false;
    for (std::size_t i = 0; i < lower.size(); ++i) {
      if (ascii_lower(text[at + i]) != lower[i]) return false;
    }
    return true;
  }

  // Greedy set cover: the four letters held by most phrases not yet
  // covered, until every phrase is.
  void choose_anchors() {
    std::vector<bool> covered(phrases_.size(), false);
    for (;;) {
      std::map<std::string, std::vector<std::pair<std::size_t, std::size_t>>> windows;
      for (std::size_t p = 0; p < phrases_.size(); ++p) {
        if (covered[p]) continue;
        const std::string& phrase = phrases_[p];
        for (std::size_t k = 0; k + 4 <= phrase.size(); ++k) {
          if (!std::all_of(phrase.begin() + static_cast<std::ptrdiff_t>(k),
                           phrase.begin() + static_cast<std::ptrdiff_t>(k + 4), is_letter)) {
            continue;
          }
          auto& uses = windows[phrase.substr(k, 4)];
          if (uses.empty() || uses.back().first != p) uses.emplace_back(p, k);
        }
      }
      if (windows.empty()) break;
      // Of the windows covering most phrases, the one whose ends are rarest
      // in text: fewer positions to look at twice.
      const auto best = std::max_element(windows.begin(), windows.end(), [](const auto& a, const auto& b) {
        if (a.second.size() != b.second.size()) return a.second.size() < b.second.size();
        return ends_rarity(a.first) < ends_rarity(b.first);
      });
      for (const auto& use : best->second) covered[use.first] = true;
#if defined(__GNUC__) || defined(__clang__)
      const auto* l = reinterpret_cast<const unsigned char*>(best->first.data());
      ends_.push_back({lanes_of(l[0]), lanes_of(l[3])});
#endif
      anchors_.push_back({best->first, best->second});
    }
    for (std::size_t p = 0; p < phrases_.size(); ++p) {
      if (!covered[p]) unanchored_.push_back(p);
    }
  }

  [[nodiscard]] std::optional<std::pair<std::size_t, std::string_view>> match_anchor(std::string_view text,
                                                                                     std::size_t at) const {
    for (const auto& a : anchors_) {
      if (!matches(text, at, a.letters)) continue;
      for (const auto& [p, k] : a.uses) {
        if (at >= k && matches(text, at - k, phrases_[p])) return std::pair{at - k, std::string_view(phrases_[p])};
      }
    }
    return std::nullopt;
  }

  // How rare the first and last letters of an anchor are in English text.
  static std::size_t ends_rarity(std::string_view letters) noexcept {
    constexpr std::string_view by_frequency = "etaoinsrhldcumfpgwybvkxjqz";
    return by_frequency.find(letters.front()) + by_frequency.find(letters.back());
  }

#if defined(__GNUC__) || defined(__clang__)
  using lanes = unsigned char __attribute__((vector_size(16)));

  // Two blocks of positions per round; a position is a candidate when its
  // first and fourth bytes are an anchor's (two compares per anchor, not
  // four). `Anchors` of them, or all of ends_ when 0.
  template <std::size_t Anchors>
  [[nodiscard]] std::optional<std::pair<std::size_t, std::string_view>> find_in_blocks(std::string_view text) const {
    constexpr std::size_t block = sizeof(lanes), round = 2 * block + 3;  // the bytes a round reads
    std::array<std::array<lanes, 2>, Anchors == 0 ? 1 : Anchors> held{};
    if constexpr (Anchors > 0) std::copy_n(ends_.begin(), Anchors, held.begin());
    const std::size_t count = Anchors > 0 ? Anchors : ends_.size();
    const auto* const bytes = reinterpret_cast<const unsigned char*>(text.data());
    auto load = [&](std::size_t from) {
      lanes v;
      std::memcpy(&v, bytes + from, sizeof v);
      return v | lanes_of(0x20);  // ASCII letters to lower case; anything else never equals a letter
    };
    if (text.size() < round) {
      for (std::size_t at = 0; at + 4 <= text.size(); ++at) {
        if (auto hit = match_anchor(text, at)) return hit;
      }
      return std::nullopt;
    }
    const auto& ends = [&]() -> const auto& {
      if constexpr (Anchors > 0) return held;
      else return ends_;
    }();
    for (std::size_t at = 0;; at += 2 * block) {
      // The last round ends at the text's end, reading some positions again.
      const bool last = at + round >= text.size();
      if (last) at = text.size() - round;
      const lanes first0 = load(at), last0 = load(at + 3), first1 = load(at + block), last1 = load(at + block + 3);
      auto any0 = (first0 == ends[0][0]) & (last0 == ends[0][1]);
      auto any1 = (first1 == ends[0][0]) & (last1 == ends[0][1]);
      for (std::size_t a = 1; a < count; ++a) {
        any0 |= (first0 == ends[a][0]) & (last0 == ends[a][1]);
        any1 |= (first1 == ends[a][0]) & (last1 == ends[a][1]);
      }
      if (!none(any0 | any1)) {
        for (std::size_t lane = 0; lane < block; ++lane) {
          if (!any0[lane]) continue;
          if (auto hit = match_anchor(text, at + lane)) return hit;
        }
        for (std::size_t lane = 0; lane < block; ++lane) {
          if (!any1[lane]) continue;
          if (auto hit = match_anchor(text, at + block + lane)) return hit;
        }
      }
      if (last) return std::nullopt;
    }
  }

  // Whether no lane is set (each lane is 0 or 0xFF).
  template <class Mask>
  static bool none(Mask v) noexcept {
#  if defined(__SSE2__)
    return _mm_movemask_epi8(reinterpret_cast<__m128i>(v)) == 0;
#  else
    std::uint64_t halves[2];
    std::memcpy(halves, &v, sizeof halves);
    return (halves[0] | halves[1]) == 0;
#  endif
  }
  static lanes lanes_of(unsigned char byte) noexcept {
    lanes v;
    std::memset(&v, byte, sizeof v);
    return v;
  }
  std::vector<std::array<lanes, 2>> ends_;  // each anchor's first and last letters, in every lane
#endif
  std::vector<std::string> phrases_;
  std::vector<anchor> anchors_;
  std::vector<std::size_t> unanchored_;  // phrases without four letters in a row
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
