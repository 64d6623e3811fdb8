// SPDX-License-Identifier: MIT
// Code-point sets for ECMA-262 patterns: ranges and their algebra, the class
// escapes (\d \w \s), `.`, character classes and the Unicode property names.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

struct code_point_range {
  char32_t first;
  char32_t last;
};

/// Code points as sorted, disjoint, non-adjacent ranges once normalize() has run.
using code_point_ranges = std::vector<code_point_range>;

inline constexpr char32_t max_code_point = 0x10FFFF;

/// Sorts and merges `ranges`, and drops the surrogates, which no UTF-8 subject holds.
inline void normalize(code_point_ranges& ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](code_point_range a, code_point_range b) { return a.first < b.first; });
  code_point_ranges merged;
  merged.reserve(ranges.size() + 1);
  for (const auto r : ranges) {
    if (!merged.empty() && r.first <= merged.back().last + 1) {
      merged.back().last = std::max(merged.back().last, r.last);
    } else {
      merged.push_back(r);
    }
  }
  // Surrogates last, once merging can no longer bring them back in.
  ranges.clear();
  for (const auto r : merged) {
    if (r.last < 0xD800 || r.first > 0xDFFF) {
      ranges.push_back(r);
      continue;
    }
    if (r.first < 0xD800) ranges.push_back({r.first, 0xD7FF});
    if (r.last > 0xDFFF) ranges.push_back({0xE000, r.last});
  }
}

/// Every scalar value not in `ranges`, which must be normalized.
inline code_point_ranges complement(const code_point_ranges& ranges) {
  code_point_ranges out;
  char32_t next = 0;
  for (const auto r : ranges) {
    if (r.first > next) out.push_back({next, r.first - 1});
    next = r.last + 1;
  }
  if (next <= max_code_point) out.push_back({next, max_code_point});
  normalize(out);
  return out;
}

/// Whether two normalized range lists share a code point.
inline bool intersects(const code_point_ranges& a, const code_point_ranges& b) noexcept {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].last < b[j].first) {
      ++i;
    } else if (b[j].last < a[i].first) {
      ++j;
    } else {
      return true;
    }
  }
  return false;
}

/// ECMA-262's WhiteSpace and LineTerminator code points: what `\s` matches.
inline code_point_ranges ecma_space_ranges() {
  return {{0x09, 0x0D}, {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
          {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
}

/// What `.` does not match.
inline code_point_ranges ecma_line_terminator_ranges() {
  return {{0x0A, 0x0A}, {0x0D, 0x0D}, {0x2028, 0x2029}};
}

inline code_point_ranges ecma_digit_ranges() { return {{'0', '9'}}; }

inline code_point_ranges ecma_word_ranges() { return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }

/// ECMA-262's General_Category value aliases, to PCRE2's names.
inline std::optional<std::string> pcre2_general_category(std::string_view value) {
  static constexpr std::pair<std::string_view, std::string_view> table[] = {
      {"C", "C"}, {"Other", "C"}, {"Cc", "Cc"}, {"Control", "Cc"}, {"cntrl", "Cc"}, {"Cf", "Cf"},
      {"Format", "Cf"}, {"Cn", "Cn"}, {"Unassigned", "Cn"}, {"Co", "Co"}, {"Private_Use", "Co"},
      {"Cs", "Cs"}, {"Surrogate", "Cs"}, {"L", "L"}, {"Letter", "L"}, {"LC", "L&"}, {"Cased_Letter", "L&"},
      {"Ll", "Ll"}, {"Lowercase_Letter", "Ll"}, {"Lm", "Lm"}, {"Modifier_Letter", "Lm"}, {"Lo", "Lo"},
      {"Other_Letter", "Lo"}, {"Lt", "Lt"}, {"Titlecase_Letter", "Lt"}, {"Lu", "Lu"},
      {"Uppercase_Letter", "Lu"}, {"M", "M"}, {"Mark", "M"}, {"Combining_Mark", "M"}, {"Mc", "Mc"},
      {"Spacing_Mark", "Mc"}, {"Me", "Me"}, {"Enclosing_Mark", "Me"}, {"Mn", "Mn"}, {"Nonspacing_Mark", "Mn"},
      {"N", "N"}, {"Number", "N"}, {"Nd", "Nd"}, {"Decimal_Number", "Nd"}, {"digit", "Nd"}, {"Nl", "Nl"},
      {"Letter_Number", "Nl"}, {"No", "No"}, {"Other_Number", "No"}, {"P", "P"}, {"Punctuation", "P"},
      {"punct", "P"}, {"Pc", "Pc"}, {"Connector_Punctuation", "Pc"}, {"Pd", "Pd"}, {"Dash_Punctuation", "Pd"},
      {"Pe", "Pe"}, {"Close_Punctuation", "Pe"}, {"Pf", "Pf"}, {"Final_Punctuation", "Pf"}, {"Pi", "Pi"},
      {"Initial_Punctuation", "Pi"}, {"Po", "Po"}, {"Other_Punctuation", "Po"}, {"Ps", "Ps"},
      {"Open_Punctuation", "Ps"}, {"S", "S"}, {"Symbol", "S"}, {"Sc", "Sc"}, {"Currency_Symbol", "Sc"},
      {"Sk", "Sk"}, {"Modifier_Symbol", "Sk"}, {"Sm", "Sm"}, {"Math_Symbol", "Sm"}, {"So", "So"},
      {"Other_Symbol", "So"}, {"Z", "Z"}, {"Separator", "Z"}, {"Zl", "Zl"}, {"Line_Separator", "Zl"},
      {"Zp", "Zp"}, {"Paragraph_Separator", "Zp"}, {"Zs", "Zs"}, {"Space_Separator", "Zs"},
  };
  for (const auto& [ecma, pcre] : table) {
    if (ecma == value) return std::string(pcre);
  }
  return std::nullopt;
}

/// ECMA-262's binary properties (and their aliases) that PCRE2 knows, to
/// their canonical names.
inline std::optional<std::string> pcre2_binary_property(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> aliases[] = {
      {"AHex", "ASCII_Hex_Digit"}, {"Alpha", "Alphabetic"}, {"Bidi_C", "Bidi_Control"},
      {"Bidi_M", "Bidi_Mirrored"}, {"CI", "Case_Ignorable"}, {"CWCF", "Changes_When_Casefolded"},
      {"CWCM", "Changes_When_Casemapped"}, {"CWL", "Changes_When_Lowercased"},
      {"CWT", "Changes_When_Titlecased"}, {"CWU", "Changes_When_Uppercased"},
      {"DI", "Default_Ignorable_Code_Point"}, {"Dep", "Deprecated"}, {"Dia", "Diacritic"},
      {"EComp", "Emoji_Component"}, {"EMod", "Emoji_Modifier"}, {"EBase", "Emoji_Modifier_Base"},
      {"EPres", "Emoji_Presentation"}, {"ExtPict", "Extended_Pictographic"}, {"Ext", "Extender"},
      {"Gr_Base", "Grapheme_Base"}, {"Gr_Ext", "Grapheme_Extend"}, {"Hex", "Hex_Digit"},
      {"IDSB", "IDS_Binary_Operator"}, {"IDST", "IDS_Trinary_Operator"}, {"IDC", "ID_Continue"},
      {"IDS", "ID_Start"}, {"Ideo", "Ideographic"}, {"Join_C", "Join_Control"},
      {"LOE", "Logical_Order_Exception"}, {"Lower", "Lowercase"}, {"NChar", "Noncharacter_Code_Point"},
      {"Pat_Syn", "Pattern_Syntax"}, {"Pat_WS", "Pattern_White_Space"}, {"QMark", "Quotation_Mark"},
      {"RI", "Regional_Indicator"}, {"STerm", "Sentence_Terminal"}, {"SD", "Soft_Dotted"},
      {"Term", "Terminal_Punctuation"}, {"UIdeo", "Unified_Ideograph"}, {"Upper", "Uppercase"},
      {"VS", "Variation_Selector"}, {"space", "White_Space"}, {"XIDC", "XID_Continue"}, {"XIDS", "XID_Start"},
  };
  static constexpr std::string_view canonical[] = {
      "ASCII_Hex_Digit", "Alphabetic", "Bidi_Control", "Bidi_Mirrored", "Case_Ignorable", "Cased",
      "Changes_When_Casefolded", "Changes_When_Casemapped", "Changes_When_Lowercased",
      "Changes_When_Titlecased", "Changes_When_Uppercased", "Dash", "Default_Ignorable_Code_Point",
      "Deprecated", "Diacritic", "Emoji", "Emoji_Component", "Emoji_Modifier", "Emoji_Modifier_Base",
      "Emoji_Presentation", "Extended_Pictographic", "Extender", "Grapheme_Base", "Grapheme_Extend",
      "Hex_Digit", "IDS_Binary_Operator", "IDS_Trinary_Operator", "ID_Continue", "ID_Start", "Ideographic",
      "Join_Control", "Logical_Order_Exception", "Lowercase", "Math", "Noncharacter_Code_Point",
      "Pattern_Syntax", "Pattern_White_Space", "Quotation_Mark", "Radical", "Regional_Indicator",
      "Sentence_Terminal", "Soft_Dotted", "Terminal_Punctuation", "Unified_Ideograph", "Uppercase",
      "Variation_Selector", "White_Space", "XID_Continue", "XID_Start",
  };
  for (const auto& [alias, full] : aliases) {
    if (alias == name) return std::string(full);
  }
  for (const auto full : canonical) {
    if (full == name) return std::string(full);
  }
  return std::nullopt;
}

/// A bracketed class, a class escape or `.`: the code points in `ranges`, plus
/// the Unicode properties in `properties` (PCRE2 `\p{..}` items), or everything
/// else when `negated`.
struct char_class {
  code_point_ranges ranges;
  std::string properties;
  bool negated = false;
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
