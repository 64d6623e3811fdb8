// SPDX-License-Identifier: MIT
// Definitions for repair.hpp: extraction of the JSON value from fences and
// prose.
#pragma once

#include <algorithm>
#include <span>

#include "llmdlq/detail/text_scan.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/repair.hpp"

namespace llmdlq {

LLMDLQ_INLINE std::string_view to_string(repair_tier tier) noexcept {
  switch (tier) {
    case repair_tier::lossless: return "lossless";
    case repair_tier::syntactic: return "syntactic";
    case repair_tier::lossy: return "lossy";
    case repair_tier::coercion: return "coercion";
  }
  return "lossless";
}

namespace detail {

/// A stretch of the raw text that may hold the JSON value.
struct json_candidate {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool complete = true;  ///< false: still open at the end of the text
  bool fenced = false;   ///< the content of a markdown code fence
};

inline bool is_blank(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

inline std::string_view trim_blank(std::string_view s) noexcept {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

/// The objects and arrays in `text` (offsets relative to `base`): one pass
/// with a stack of open brackets, string-aware inside a candidate, so the
/// cost is linear whatever the text. A closing bracket that does not match
/// abandons the candidate.
inline void scan_bracketed(std::string_view text, std::size_t base, std::vector<json_candidate>& out) {
  std::string open;
  std::size_t start = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (open.empty()) {
      // Prose: jump to the next bracket that could start a value.
      const auto brace = text.find('{', i), bracket = text.find('[', i);
      i = std::min(brace, bracket);
      if (i == std::string_view::npos) break;
      open.push_back(text[i]);
      start = i;
      continue;
    }
    if (in_string) i = skip_string_body(text, i);
    if (i >= text.size()) break;
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open.push_back(c);
    } else if (c == '}' || c == ']') {
      if ((c == '}') != (open.back() == '{')) {
        open.clear();  // mismatched: not a JSON value
        continue;
      }
      open.pop_back();
      if (open.empty()) out.push_back({base + start, base + i + 1, true, false});
    }
  }
  if (!open.empty()) out.push_back({base + start, base + text.size(), false, false});
}

/// Markdown code fences (```, optionally with a language word): the content
/// of each, trimmed; an unclosed fence runs to the end of the text.
inline std::vector<json_candidate> fenced_blocks(std::string_view text) {
  std::vector<json_candidate> blocks;
  std::size_t at = 0;
  while (true) {
    const std::size_t fence = text.find("```", at);
    if (fence == std::string_view::npos) break;
    std::size_t content = text.find('\n', fence);
    if (content == std::string_view::npos) break;
    ++content;
    const std::size_t close = text.find("```", content);
    const std::size_t content_end = close == std::string_view::npos ? text.size() : close;
    std::size_t b = content, e = content_end;
    while (b < e && is_blank(text[b])) ++b;
    while (e > b && is_blank(text[e - 1])) --e;
    if (b < e) blocks.push_back({b, e, close != std::string_view::npos, true});
    if (close == std::string_view::npos) break;
    at = close + 3;
  }
  return blocks;
}

inline std::string excerpt(std::string_view text, std::size_t limit = 80) {
  if (text.size() <= limit) return std::string(text);
  while (limit > 0 && (static_cast<unsigned char>(text[limit]) & 0xC0) == 0x80) --limit;
  return std::string(text.substr(0, limit)) + "...";
}

}  // namespace detail

namespace detail {

// repair() for text already known not to be strict JSON.
LLMDLQ_INLINE expected<repair_result, repair_error> extract_json(std::string_view raw, const repair_options& options) {
  parse_options strict;
  strict.max_size = options.max_bytes;

  std::vector<json_candidate> candidates;
  for (const auto& block : detail::fenced_blocks(raw)) {
    // Inside a fence, the content is the candidate when it is bracketed JSON.
    const std::string_view content = raw.substr(block.begin, block.end - block.begin);
    if (content.front() == '{' || content.front() == '[') {
      json_candidate c = block;
      if (!c.complete) {
        std::vector<json_candidate> inner;
        detail::scan_bracketed(content, block.begin, inner);
        if (!inner.empty()) c.complete = inner.front().complete && inner.size() == 1;
      }
      candidates.push_back(c);
    }
  }
  if (candidates.empty()) detail::scan_bracketed(raw, 0, candidates);
  if (candidates.empty()) {
    return unexpected(repair_error{repair_errc::no_json, 0, "the response holds no JSON object or array"});
  }

  // Prefer a candidate that is JSON as it stands; two different ones would
  // make any choice a guess (the same text twice is one: a model repeating
  // itself). With none, keep the first, or the one cut off at the end. A
  // lone candidate needs no check: the caller parses what comes back.
  const json_candidate* chosen = candidates.size() == 1 ? &candidates.front() : nullptr;
  for (const auto& c : chosen ? std::span<const json_candidate>() : std::span<const json_candidate>(candidates)) {
    const std::string_view text = raw.substr(c.begin, c.end - c.begin);
    if (!c.complete || check_syntax(text, strict)) continue;
    if (chosen && raw.substr(chosen->begin, chosen->end - chosen->begin) != text) {
      return unexpected(repair_error{repair_errc::ambiguous, c.begin,
                                     "the response holds more than one JSON value"});
    }
    if (!chosen) chosen = &c;
  }
  if (!chosen) {
    const auto open = std::find_if(candidates.begin(), candidates.end(), [](const auto& c) { return !c.complete; });
    chosen = open != candidates.end() ? &*open : &candidates.front();
  }
  const json_candidate& first = *chosen;

  repair_result result;
  result.json = std::string(raw.substr(first.begin, first.end - first.begin));
  result.truncated = !first.complete;
  const std::string_view code = first.fenced ? "markdown_fence" : "prose_around_json";
  if (first.begin > 0) {
    result.actions.push_back({std::string(code), repair_tier::lossless, 0, first.begin,
                              detail::excerpt(raw.substr(0, first.begin)), ""});
  }
  if (first.end < raw.size()) {
    result.actions.push_back({std::string(code), repair_tier::lossless, first.end, raw.size(),
                              detail::excerpt(raw.substr(first.end)), ""});
  }
  return result;
}

}  // namespace detail

LLMDLQ_INLINE expected<repair_result, repair_error> repair(std::string_view raw, const repair_options& options) {
  if (raw.size() > options.max_bytes) {
    return unexpected(repair_error{repair_errc::budget_exceeded, options.max_bytes,
                                   "the response is larger than the repair budget"});
  }
  parse_options strict;
  strict.max_size = options.max_bytes;
  if (!check_syntax(raw, strict)) return repair_result{std::string(raw), {}, false};
  return detail::extract_json(raw, options);
}

}  // namespace llmdlq
