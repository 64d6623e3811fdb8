// SPDX-License-Identifier: MIT
// Definitions for coerce.hpp. Each candidate edit is tried on the text and
// kept only when validation agrees it fixed the error without causing
// another: the schema decides, so no keyword's meaning is re-implemented.
#pragma once

#include <algorithm>
#include <cctype>
#include <optional>

#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "llmdlq/coerce.hpp"
#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/span_locator.hpp"
#include "llmdlq/detail/repair/repair_engine.hpp"
#include "llmdlq/detail/schema/schema_access.hpp"
#include "llmdlq/json_parser.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Exactly a JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
inline bool is_number_literal(std::string_view s) noexcept {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - from;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

/// An enum string as compared loosely: lower case (ASCII), without the
/// whitespace and punctuation around it.
inline std::string loose_enum_text(std::string_view s) {
  auto trimmed = [](unsigned char c) { return c <= ' ' || (c < 0x80 && std::ispunct(c)); };
  while (!s.empty() && trimmed(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && trimmed(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  std::string out(s);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

inline bool is_under(std::string_view path, std::string_view prefix) noexcept {
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

class coercer {
 public:
  coercer(std::string_view json, const schema& s, const coerce_options& options)
      : text_(json), schema_(s), attempts_left_(options.max_attempts) {
    rules_.now = options.now;
    rules_.max_errors = 1024;
  }

  expected<coerce_result, coerce_error> run() {
    auto errors = validate(text_);
    if (!errors) return coerce_result{std::move(text_), {}};
    errors_ = std::move(*errors);
    bool progress = true;
    while (progress && !errors_.empty() && attempts_left_ > 0) {
      progress = false;
      const auto snapshot = errors_;
      for (const auto& e : snapshot) {
        if (e.keyword != "type" && e.keyword != "enum") continue;
        auto fixed = fix(e);
        if (!fixed) return unexpected(std::move(fixed.error()));
        progress = progress || *fixed;
        if (*fixed) break;  // the errors changed: start over from the new list
      }
    }
    return coerce_result{std::move(text_), std::move(actions_)};
  }

 private:
  struct edit {
    std::size_t begin, old_size, new_size;
  };

  std::string text_;
  const schema& schema_;
  validate_options rules_;
  std::size_t attempts_left_;
  std::vector<validation_error> errors_;
  std::vector<repair_action> actions_;
  std::vector<edit> edits_;
  json_parser parser_;

  std::optional<std::vector<validation_error>> validate(std::string_view json) {
    auto doc = parser_.parse(json);
    if (!doc) return std::nullopt;
    return schema_.validate(*doc, rules_);
  }

  static std::size_t count_outside(const std::vector<validation_error>& errors, std::string_view path) {
    return static_cast<std::size_t>(std::count_if(errors.begin(), errors.end(), [&](const auto& e) {
      return !is_under(e.instance_path, path);
    }));
  }

  /// Whether replacing [begin, end) with `replacement` fixes the error at
  /// `path` and adds none elsewhere; kept when `commit`.
  bool attempt(const std::string& path, std::size_t begin, std::size_t end, std::string_view replacement,
               bool commit) {
    if (attempts_left_ == 0) return false;
    --attempts_left_;
    std::string candidate;
    candidate.reserve(text_.size() - (end - begin) + replacement.size());
    candidate.append(text_, 0, begin).append(replacement).append(text_, end);
    auto after = validate(candidate);
    if (!after) return false;
    for (const auto& e : *after) {
      if (e.instance_path == path && (e.keyword == "type" || e.keyword == "enum")) return false;
    }
    if (count_outside(*after, path) > count_outside(errors_, path)) return false;
    if (commit) {
      text_ = std::move(candidate);
      errors_ = std::move(*after);
    }
    return true;
  }

  /// A position in the text now, as an offset in the text coerce() was given.
  [[nodiscard]] std::size_t original_offset(std::size_t at) const noexcept {
    for (auto it = edits_.rbegin(); it != edits_.rend(); ++it) {
      if (at < it->begin) continue;
      at = at >= it->begin + it->new_size ? at - it->new_size + it->old_size : it->begin;
    }
    return at;
  }

  void record(std::string_view code, const std::string& path, std::size_t begin, std::size_t end,
              std::string before, std::string after) {
    actions_.push_back({code, repair_tier::coercion, original_offset(begin), original_offset(end),
                        excerpt(before), excerpt(after), path});
    edits_.push_back({begin, end - begin, after.size()});
  }

  bool commit(std::string_view code, const std::string& path, std::size_t begin, std::size_t end,
              const std::string& replacement) {
    std::string before = text_.substr(begin, end - begin);
    if (!attempt(path, begin, end, replacement, true)) return false;
    record(code, path, begin, end, std::move(before), replacement);
    return true;
  }

  /// Tries the coercions that fit the error; whether one was kept.
  expected<bool, coerce_error> fix(const validation_error& e) {
    const json_locator locator(text_);
    const auto at = locator.find(e.instance_path);
    if (!at) return false;
    const std::string_view value = std::string_view(text_).substr(at->begin, at->end - at->begin);
    const auto content = locator.string_at(at->begin);
    const std::string& path = e.instance_path;

    if (e.keyword == "enum") {
      if (!content) return false;
      return fix_enum(path, *at, *content);
    }
    if (content && (*content == "true" || *content == "false")) {
      if (commit("string_to_boolean", path, at->begin, at->end, *content)) return true;
    } else if (content && is_number_literal(*content)) {
      if (commit("string_to_number", path, at->begin, at->end, *content)) return true;
    }
    if (value == "null" && at->is_member) {
      // `"a": null,` goes with one of the commas around it.
      std::size_t b = at->key_begin, end = at->end;
      if (at->comma_before != std::string_view::npos) {
        b = at->comma_before;
      } else if (at->comma_after != std::string_view::npos) {
        end = at->comma_after + 1;
      }
      if (commit("drop_null_property", path, b, end, "")) return true;
    }
    if (!value.starts_with('[')) {
      std::string wrapped;
      wrapped.reserve(value.size() + 2);
      wrapped.append(1, '[').append(value).append(1, ']');
      if (commit("wrap_in_array", path, at->begin, at->end, wrapped)) return true;
    }
    return false;
  }

  expected<bool, coerce_error> fix_enum(const std::string& path, const located_value& at, const std::string& content) {
    const std::string loose = loose_enum_text(content);
    if (loose.empty()) return false;
    // Every enum string in the schema that matches loosely; validation says
    // which of them the enum at this place accepts.
    std::vector<std::string> options;
    for (const auto& set : schema_access::of(schema_).enums) {
      for (const auto& v : set.values) {
        if (!v.is_string()) continue;
        const std::string_view s(v.get_string().data(), v.get_string().size());
        if (s == content || loose_enum_text(s) != loose) continue;
        std::string json = boost::json::serialize(v);
        if (std::find(options.begin(), options.end(), json) == options.end()) options.push_back(std::move(json));
      }
    }
    std::vector<std::string> fitting;
    for (const auto& json : options) {
      if (attempt(path, at.begin, at.end, json, false)) fitting.push_back(json);
    }
    if (fitting.size() > 1) {
      return unexpected(coerce_error{path, fmt::format("\"{}\" matches more than one enum value ({}, {})",
                                                       excerpt(content, 40), fitting[0], fitting[1])});
    }
    if (fitting.empty()) return false;
    return commit("enum_spelling", path, at.begin, at.end, fitting.front());
  }
};

}  // namespace detail

LLMDLQ_INLINE expected<coerce_result, coerce_error> coerce(std::string_view json, const schema& schema,
                                                          const coerce_options& options) {
  return detail::coercer(json, schema, options).run();
}

LLMDLQ_END_NAMESPACE
