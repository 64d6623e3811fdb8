// SPDX-License-Identifier: MIT
// Writes a parsed ECMA-262 pattern out as PCRE2 syntax.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/regex/code_point_set.hpp"
#include "llmdlq/detail/regex/parser.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Shortens the leftmost repeated atom of each lookbehind alternative to its
/// minimum count, which PCRE2 needs (it takes only bounded lookbehinds) and
/// which changes no outcome: `(?<=Q{n,m}R)` holds exactly where `(?<=Q{n}R)`
/// does, because the last n repetitions of Q before R match too. When n is 0
/// the atom after it is leftmost as well, and so are the first atoms of the
/// alternatives of a leftmost group that is not repeated. Captures are the one
/// thing this would change, so a group holding one is left alone when the
/// pattern has back-references.
inline void reduce_lookbehinds(parsed_pattern& pattern) {
  auto& tokens = pattern.tokens;
  const auto is_lookbehind = [](const regex_token& t) {
    return t.group == group_kind::lookbehind || t.group == group_kind::negative_lookbehind;
  };
  std::vector<std::size_t> leftmost;  // tokens that begin a lookbehind alternative
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& token = tokens[i];
    if (token.kind == token_kind::group_open) {
      open.push_back(i);
      if (is_lookbehind(token)) leftmost.push_back(i + 1);
    } else if (token.kind == token_kind::group_close) {
      open.pop_back();
    } else if (token.kind == token_kind::alternative && !open.empty() && is_lookbehind(tokens[open.back()])) {
      leftmost.push_back(i + 1);
    }
  }
  // Each group is entered from at most one leftmost chain, so this stays linear.
  while (!leftmost.empty()) {
    std::size_t first = leftmost.back();
    leftmost.pop_back();
    while (first < tokens.size()) {
      const auto& atom = tokens[first];
      std::size_t last = first;
      const bool group = atom.kind == token_kind::group_open;
      if (group) {
        if (atom.group != group_kind::plain && atom.group != group_kind::capture) break;
        if (pattern.has_backref && (atom.group == group_kind::capture || atom.has_capture)) break;
        last = atom.value;
      } else if (atom.kind != token_kind::literal && atom.kind != token_kind::char_class &&
                 atom.kind != token_kind::backref) {
        break;
      }
      auto* quantifier = last + 1 < tokens.size() && tokens[last + 1].kind == token_kind::quantifier
                             ? &tokens[last + 1]
                             : nullptr;
      if (quantifier != nullptr) {
        quantifier->max = quantifier->value;
        quantifier->lazy = false;
      }
      if (group && (quantifier == nullptr || quantifier->value == 1)) {
        leftmost.push_back(first + 1);
        for (std::size_t i = first + 1; i < last; ++i) {
          if (tokens[i].kind == token_kind::group_open) i = tokens[i].value;
          else if (tokens[i].kind == token_kind::alternative) leftmost.push_back(i + 1);
        }
      }
      if (quantifier == nullptr || quantifier->value != 0) break;
      first = last + 2;
    }
  }
}

/// A translated pattern, with the way back to offsets in the original.
struct pcre2_pattern {
  std::string text;
  /// (offset in `text`, offset in the ECMA-262 pattern), ascending.
  std::vector<std::pair<std::size_t, std::size_t>> origins;

  std::size_t source_offset(std::size_t text_offset) const noexcept {
    const auto after = std::upper_bound(origins.begin(), origins.end(), text_offset,
                                        [](std::size_t off, const auto& origin) { return off < origin.first; });
    return after == origins.begin() ? 0 : std::prev(after)->second;
  }
};

inline void append_hex_escape(std::string& out, char32_t cp) {
  constexpr std::string_view digits = "0123456789ABCDEF";
  char buffer[8];
  std::size_t n = 0;
  do {
    buffer[n++] = digits[cp & 0xF];
    cp >>= 4;
  } while (cp != 0);
  out += "\\x{";
  while (n > 0) out += buffer[--n];
  out += '}';
}

// Classes that match nothing and anything. PCRE2's own `[]` and `[^]`
// (PCRE2_ALLOW_EMPTY_CLASS) are avoided: 10.42 fails `a[]*b` on "ab".
inline constexpr std::string_view pcre2_nothing = "[^\\x{0}-\\x{10FFFF}]";
inline constexpr std::string_view pcre2_anything = "[\\x{0}-\\x{10FFFF}]";

inline void append_literal(std::string& out, char32_t cp) {
  const bool alnum = (cp >= '0' && cp <= '9') || (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z');
  if (alnum) {
    out += static_cast<char>(cp);
  } else if (cp >= 0xD800 && cp <= 0xDFFF) {
    out += pcre2_nothing;  // a lone surrogate, which no UTF-8 subject holds
  } else {
    append_hex_escape(out, cp);
  }
}

inline void append_class(std::string& out, const char_class& cls) {
  const auto& r = cls.ranges;
  if (!cls.negated && cls.properties.empty() && r.size() == 1 && r[0].first == r[0].last) {
    append_literal(out, r[0].first);
    return;
  }
  const bool one_property = !cls.properties.empty() && cls.properties.find('}') == cls.properties.size() - 1;
  if (!cls.negated && r.empty() && one_property) {
    out += cls.properties;
    return;
  }
  if (r.empty() && cls.properties.empty()) {
    out += cls.negated ? pcre2_anything : pcre2_nothing;
    return;
  }
  out += cls.negated ? "[^" : "[";
  for (const auto range : r) {
    append_hex_escape(out, range.first);
    if (range.last != range.first) {
      out += '-';
      append_hex_escape(out, range.last);
    }
  }
  out += cls.properties;
  out += ']';
}

/// Writes `pattern` in PCRE2 syntax, for compiling with PCRE2_UTF,
/// PCRE2_ALLOW_EMPTY_CLASS and PCRE2_DOLLAR_ENDONLY and without PCRE2_UCP.
/// Every escape is resolved here (literals go out as `\x{..}`), so PCRE2 sees
/// none of its own escape dialect and needs no PCRE2_ALT_BSUX.
inline pcre2_pattern to_pcre2(const parsed_pattern& pattern) {
  pcre2_pattern out;
  out.text.reserve(pattern.tokens.size() * 4);
  out.origins.reserve(pattern.tokens.size());
  for (const auto& token : pattern.tokens) {
    out.origins.emplace_back(out.text.size(), token.offset);
    auto& text = out.text;
    switch (token.kind) {
      case token_kind::literal: append_literal(text, token.value); break;
      case token_kind::char_class: append_class(text, pattern.classes[token.value]); break;
      case token_kind::backref:
        text += "\\g{" + std::to_string(token.value) + "}";
        break;
      case token_kind::line_start: text += '^'; break;
      case token_kind::line_end: text += '$'; break;
      case token_kind::word_boundary: text += "\\b"; break;
      case token_kind::not_word_boundary: text += "\\B"; break;
      case token_kind::group_open:
        switch (token.group) {
          case group_kind::capture: text += '('; break;
          case group_kind::plain: text += "(?:"; break;
          case group_kind::lookahead: text += "(?="; break;
          case group_kind::negative_lookahead: text += "(?!"; break;
          case group_kind::lookbehind: text += "(?<="; break;
          case group_kind::negative_lookbehind: text += "(?<!"; break;
        }
        break;
      case token_kind::group_close: text += ')'; break;
      case token_kind::alternative: text += '|'; break;
      case token_kind::quantifier:
        if (token.value == 0 && token.max == unbounded) {
          text += '*';
        } else if (token.value == 1 && token.max == unbounded) {
          text += '+';
        } else if (token.value == 0 && token.max == 1) {
          text += '?';
        } else {
          text += '{' + std::to_string(token.value);
          if (token.max != token.value) text += token.max == unbounded ? "," : "," + std::to_string(token.max);
          text += '}';
        }
        if (token.lazy) text += '?';
        break;
    }
  }
  return out;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
