// SPDX-License-Identifier: MIT
// Where a JSON Pointer's value sits in strict JSON text: byte spans for
// edits that keep the rest of the text as the model wrote it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/json/string_escape.hpp"
#include "llmdlq/detail/json/utf8.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// The value at a pointer and, when it is an object member, its key and the
/// separators around it.
struct located_value {
  std::size_t begin = 0, end = 0;  ///< the value
  bool is_member = false;
  std::size_t key_begin = 0;                       ///< the member's key (is_member)
  std::size_t comma_before = std::string_view::npos;  ///< the comma ending the previous member
  std::size_t comma_after = std::string_view::npos;   ///< the comma after this member
};

/// The reference tokens of a JSON Pointer (`/a~1b/0` → `a/b`, `0`).
inline std::vector<std::string> pointer_tokens(std::string_view pointer) {
  std::vector<std::string> tokens;
  std::size_t i = 0;
  while (i < pointer.size() && pointer[i] == '/') {
    std::string token;
    for (++i; i < pointer.size() && pointer[i] != '/'; ++i) {
      if (pointer[i] == '~' && i + 1 < pointer.size()) {
        token += pointer[++i] == '1' ? '/' : '~';
      } else {
        token += pointer[i];
      }
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

class json_locator {
 public:
  explicit json_locator(std::string_view json) noexcept : s_(json) {}

  /// The value at `pointer`, or nothing when there is none. Linear in the
  /// text; `json` must be strict JSON.
  [[nodiscard]] std::optional<located_value> find(std::string_view pointer) const {
    const auto tokens = pointer_tokens(pointer);
    located_value at;
    at.begin = skip_blank(0);
    for (const auto& token : tokens) {
      std::size_t i = at.begin;
      if (i >= s_.size()) return std::nullopt;
      if (s_[i] == '{') {
        auto member = find_member(i, token);
        if (!member) return std::nullopt;
        at = *member;
      } else if (s_[i] == '[') {
        auto element = find_element(i, token);
        if (!element) return std::nullopt;
        at = *element;
      } else {
        return std::nullopt;
      }
    }
    at.end = value_end(at.begin);
    return at;
  }

  /// The content of the JSON string at `begin`, unescaped; nothing when it
  /// is not a string or holds a faulty escape.
  [[nodiscard]] std::optional<std::string> string_at(std::size_t begin) const {
    if (begin >= s_.size() || s_[begin] != '"') return std::nullopt;
    std::string out;
    const std::size_t quote = decode_json_string(s_, begin + 1, out, true);
    if (quote >= s_.size()) return std::nullopt;
    return out;
  }

 private:
  std::string_view s_;

  [[nodiscard]] std::size_t skip_blank(std::size_t i) const noexcept {
    while (i < s_.size() && is_json_blank(s_[i])) ++i;
    return i;
  }

  [[nodiscard]] std::size_t string_end(std::size_t i) const noexcept {
    for (++i; i < s_.size(); ++i) {
      if (s_[i] == '\\') {
        ++i;
      } else if (s_[i] == '"') {
        return i + 1;
      }
    }
    return s_.size();
  }

  /// Just past the value starting at `i`.
  [[nodiscard]] std::size_t value_end(std::size_t i) const noexcept {
    if (i >= s_.size()) return i;
    if (s_[i] == '"') return string_end(i);
    if (s_[i] != '{' && s_[i] != '[') {
      while (i < s_.size() && s_[i] != ',' && s_[i] != '}' && s_[i] != ']' && s_[i] != ' ' && s_[i] != '\n' &&
             s_[i] != '\t' && s_[i] != '\r') {
        ++i;
      }
      return i;
    }
    std::size_t depth = 0;
    for (; i < s_.size(); ++i) {
      const char c = s_[i];
      if (c == '"') {
        i = string_end(i) - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        return i + 1;
      }
    }
    return s_.size();
  }

  [[nodiscard]] std::optional<located_value> find_member(std::size_t i, const std::string& name) const {
    std::size_t previous_comma = std::string_view::npos;
    i = skip_blank(i + 1);
    while (i < s_.size() && s_[i] == '"') {
      const std::size_t key = i;
      const auto key_text = string_at(key);
      i = skip_blank(string_end(key));
      i = skip_blank(i + 1);  // the colon
      const std::size_t value = i;
      const std::size_t end = value_end(value);
      const std::size_t next = skip_blank(end);
      const std::size_t comma = next < s_.size() && s_[next] == ',' ? next : std::string_view::npos;
      if (key_text && *key_text == name) {
        located_value v;
        v.begin = value;
        v.is_member = true;
        v.key_begin = key;
        v.comma_before = previous_comma;
        v.comma_after = comma;
        return v;
      }
      if (comma == std::string_view::npos) break;
      previous_comma = comma;
      i = skip_blank(comma + 1);
    }
    return std::nullopt;
  }

  [[nodiscard]] std::optional<located_value> find_element(std::size_t i, const std::string& token) const {
    if (token.empty() || token.size() > 18 || token.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    std::size_t index = std::stoull(token);
    i = skip_blank(i + 1);
    while (i < s_.size() && s_[i] != ']') {
      if (index == 0) {
        located_value v;
        v.begin = i;
        return v;
      }
      --index;
      i = skip_blank(value_end(i));
      if (i >= s_.size() || s_[i] != ',') return std::nullopt;
      i = skip_blank(i + 1);
    }
    return std::nullopt;
  }
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
