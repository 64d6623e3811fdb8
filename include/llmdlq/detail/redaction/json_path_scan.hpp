// SPDX-License-Identifier: MIT
// Finds the values at pointer patterns (`/lines/*/card`) in a JSON text that
// may be broken: truncated, fenced, wrapped in prose, with stray commas. A
// lexical walk follows object keys and array positions, so it needs no
// parse and never fails; one pass, linear in the text.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/number_grammar.hpp"
#include "llmdlq/detail/json/span_locator.hpp"
#include "llmdlq/detail/redaction/placeholder_shape.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// A compiled pointer pattern: its tokens, `*` matching any key or index.
struct pointer_pattern {
  std::vector<std::string> tokens;
  std::uint32_t label = 0;  ///< the caller's index for what it is
  std::string pointer;      ///< as written, for reports
};

/// A value the walk found at a pattern: [begin, end) in the text.
struct pattern_match {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::uint32_t pattern = 0;  ///< index into the patterns
  bool is_string = false;     ///< the span is a quoted string
};

/// A span of the text read as one word whatever it holds: a detected value
/// the redactor will replace, so that the walk reads the text as it will
/// read the redacted one, where a placeholder stands instead.
struct opaque_span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

class json_path_scan {
 public:
  /// `opaque` is ordered and not overlapping.
  json_path_scan(std::string_view text, const std::vector<pointer_pattern>& patterns,
                 std::span<const opaque_span> opaque = {}) noexcept
      : s_(text), patterns_(patterns), opaque_(opaque) {}

  /// The unquoted value in a container that the opaque span `i` stood for,
  /// after run(): all of it (a card number written as a number), or a
  /// number it is part of (`4111111111111111.5e3`). Its replacement covers
  /// that value and is quoted, for the text to stay JSON. Empty (0, 0) when
  /// the span stood elsewhere.
  [[nodiscard]] opaque_span standalone(std::size_t i) const noexcept {
    return i < standalone_.size() ? standalone_[i] : opaque_span{};
  }

  /// The outermost matches, in order.
  std::vector<pattern_match> run() {
    std::vector<pattern_match> out;
    if (patterns_.empty() && opaque_.empty()) return out;
    standalone_.assign(opaque_.size(), opaque_span{});
    out_ = &out;
    const std::size_t n = s_.size();
    // A text that starts as a string does is that string: its brackets are text.
    std::size_t i = std::min(s_.find_first_not_of(" \t\r\n"), n);
    if (i < n && s_[i] == '"') i = std::min(closing_quote(i) + 1, n);
    while (i < n) {
      if (const std::size_t e = atom_end(i)) {
        i = stack_.empty() ? e : scalar(i);
        continue;
      }
      const char c = s_[i];
      if (stack_.empty() && c != '{' && c != '[') {  // prose around the document
        ++i;
        continue;
      }
      switch (c) {
        case '{':
        case '[': open(c, i++); break;
        case '}':
        case ']': close(i++); break;
        case '"':
        case '\'':  // single quotes, as models write them in broken JSON
          i = string(i);
          break;
        case ':': ++i; break;
        case ',':
          if (stack_.back().object) {
            stack_.back().expect_key = true;
          } else {
            ++stack_.back().index;
          }
          ++i;
          break;
        case ' ':
        case '\t':
        case '\r':
        case '\n': ++i; break;
        default: i = scalar(i);
      }
    }
    // A truncated document: a matched container runs to the end.
    for (const auto& f : stack_) {
      if (f.match >= 0) {
        out.push_back({f.start, n, static_cast<std::uint32_t>(f.match), false});
        break;
      }
    }
    return out;
  }

 private:
  struct frame {
    bool object = false;
    bool expect_key = true;
    std::size_t index = 0;
    std::string_view key;
    std::size_t start = 0;
    int match = -1;
  };

  // The pattern the value about to start matches, or -1; nothing inside a match.
  [[nodiscard]] int match_here() const noexcept {
    if (inside_match_ > 0 || stack_.empty()) return -1;
    for (std::size_t p = 0; p < patterns_.size(); ++p) {
      const auto& tokens = patterns_[p].tokens;
      if (tokens.size() != stack_.size()) continue;
      bool equal = true;
      for (std::size_t d = 0; d < tokens.size() && equal; ++d) equal = token_matches(tokens[d], stack_[d]);
      if (equal) return static_cast<int>(p);
    }
    return -1;
  }

  static bool token_matches(const std::string& token, const frame& f) noexcept {
    if (token == "*") return true;
    if (f.object) return token == f.key;
    std::size_t index = 0;
    if (token.empty() || token.size() > 9) return false;
    for (const char c : token) {
      if (c < '0' || c > '9') return false;
      index = index * 10 + std::size_t(c - '0');
    }
    return index == f.index;
  }

  void open(char c, std::size_t at) {
    int m = -1;
    if (!stack_.empty() && stack_.back().object && stack_.back().expect_key) {
      // A container where a key belongs (broken JSON) is read as the key
      // it stands in for, as a placeholder replacing it would be.
      stack_.back().key = {};
      stack_.back().expect_key = false;
    } else {
      m = match_here();
    }
    if (m >= 0) ++inside_match_;
    stack_.push_back({c == '{', true, 0, {}, at, m});
  }

  void close(std::size_t at) {
    if (stack_.empty()) return;
    const frame f = stack_.back();
    stack_.pop_back();
    if (f.match >= 0) {
      --inside_match_;
      out_->push_back({f.start, at + 1, static_cast<std::uint32_t>(f.match), false});
    }
  }

  // The closing quote of the string whose opening one is at `at`, or the text's size.
  [[nodiscard]] std::size_t closing_quote(std::size_t at) const noexcept {
    std::size_t j = at + 1;
    while (j < s_.size() && s_[j] != s_[at]) j += s_[j] == '\\' ? 2 : 1;
    return std::min(j, s_.size());
  }

  std::size_t string(std::size_t at) {
    const std::size_t close = closing_quote(at);
    const std::size_t end = std::min(close + 1, s_.size());
    frame& top = stack_.back();
    if (top.object && top.expect_key) {
      top.key = s_.substr(at + 1, close - at - 1);
      top.expect_key = false;
    } else if (const int m = match_here(); m >= 0) {
      out_->push_back({at, end, static_cast<std::uint32_t>(m), true});
    }
    return end;
  }

  // An unquoted value or key, to a delimiter. Placeholders and opaque spans
  // are parts of it, though they hold colons or brackets: each stands for
  // what the other pass reads there.
  std::size_t scalar(std::size_t at) {
    std::size_t j = at;
    while (j < s_.size()) {
      if (const std::size_t e = atom_end(j)) {
        j = e;
        continue;
      }
      const char c = s_[j];
      if (c == ',' || c == '}' || c == ']' || c == ':' || c == '"' || c == '\'' || c == '{' || c == '[' || c == ' ' ||
          c == '\t' || c == '\r' || c == '\n') {
        break;
      }
      ++j;
    }
    if (j == at) return at + 1;
    value(at, j);
    return j;
  }

  // Where the placeholder or the opaque span that holds `j` ends, or 0.
  std::size_t atom_end(std::size_t j) noexcept {
    while (next_opaque_ < opaque_.size() && opaque_[next_opaque_].end <= j) ++next_opaque_;
    if (next_opaque_ < opaque_.size() && opaque_[next_opaque_].begin <= j) return opaque_[next_opaque_].end;
    return s_[j] == '<' ? placeholder_end(s_, j) : 0;
  }

  // The unquoted value or key [at, end).
  void value(std::size_t at, std::size_t end) {
    if (frame& top = stack_.back(); top.object && top.expect_key) {  // an unquoted key
      top.key = s_.substr(at, end - at);
      top.expect_key = false;
      return;
    }
    auto inside = std::lower_bound(opaque_.begin(), opaque_.end(), at,
                                   [](const opaque_span& o, std::size_t begin) { return o.begin < begin; });
    if (inside != opaque_.end() && inside->end <= end) {  // a detected value in it
      const bool whole = inside->begin == at && inside->end == end;
      if (whole || is_json_number(s_.substr(at, end - at))) {
        for (; inside != opaque_.end() && inside->end <= end; ++inside) {
          standalone_[static_cast<std::size_t>(inside - opaque_.begin())] = {at, end};
        }
      }
    }
    if (const int m = match_here(); m >= 0) out_->push_back({at, end, static_cast<std::uint32_t>(m), false});
  }

  std::string_view s_;
  const std::vector<pointer_pattern>& patterns_;
  std::vector<frame> stack_;
  std::span<const opaque_span> opaque_;
  std::size_t next_opaque_ = 0;  // the first opaque span not behind the walk
  std::vector<pattern_match>* out_ = nullptr;
  int inside_match_ = 0;
  std::vector<opaque_span> standalone_;
};

/// Compiles `pointer` (with `*` for any key or index) for json_path_scan.
inline pointer_pattern compile_pointer_pattern(std::string_view pointer, std::uint32_t label) {
  return {pointer_tokens(pointer), label, std::string(pointer)};
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
