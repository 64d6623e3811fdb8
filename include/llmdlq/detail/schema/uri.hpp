// SPDX-License-Identifier: MIT
// RFC 3986 reference resolution and JSON Pointer helpers for schema identifiers.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// The five components of a URI reference (RFC 3986 section 3); absent
/// components are std::nullopt, present-but-empty ones are empty views.
struct uri_reference {
  std::optional<std::string_view> scheme;
  std::optional<std::string_view> authority;
  std::string_view path;
  std::optional<std::string_view> query;
  std::optional<std::string_view> fragment;
};

inline bool is_scheme(std::string_view text) noexcept {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (text.empty() || !alpha(text[0])) return false;
  for (const char c : text) {
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

/// Splits `text` into its components (RFC 3986 appendix B); never fails.
inline uri_reference split_uri(std::string_view text) noexcept {
  uri_reference parts;
  if (const auto hash = text.find('#'); hash != std::string_view::npos) {
    parts.fragment = text.substr(hash + 1);
    text = text.substr(0, hash);
  }
  if (const auto question = text.find('?'); question != std::string_view::npos) {
    parts.query = text.substr(question + 1);
    text = text.substr(0, question);
  }
  if (const auto colon = text.find(':'); colon != std::string_view::npos && is_scheme(text.substr(0, colon))) {
    parts.scheme = text.substr(0, colon);
    text = text.substr(colon + 1);
  }
  if (text.starts_with("//")) {
    text.remove_prefix(2);
    const auto slash = text.find('/');
    parts.authority = text.substr(0, slash);
    text = slash == std::string_view::npos ? std::string_view() : text.substr(slash);
  }
  parts.path = text;
  return parts;
}

/// RFC 3986 section 5.2.4.
inline std::string remove_dot_segments(std::string_view input) {
  std::string output;
  while (!input.empty()) {
    if (input.starts_with("../")) {
      input.remove_prefix(3);
    } else if (input.starts_with("./")) {
      input.remove_prefix(2);
    } else if (input.starts_with("/./")) {
      input.remove_prefix(2);
    } else if (input == "/.") {
      input = "/";
    } else if (input.starts_with("/../") || input == "/..") {
      input = input.size() == 3 ? std::string_view("/") : input.substr(3);
      const auto slash = output.rfind('/');
      output.erase(slash == std::string::npos ? 0 : slash);
    } else if (input == "." || input == "..") {
      input = {};
    } else {
      const auto next = input.find('/', 1);
      output.append(input.substr(0, next));
      input = next == std::string_view::npos ? std::string_view() : input.substr(next);
    }
  }
  return output;
}

inline std::string recompose(const uri_reference& parts, std::string_view path) {
  std::string out;
  if (parts.scheme) out.append(*parts.scheme).push_back(':');
  if (parts.authority) out.append("//").append(*parts.authority);
  out.append(path);
  if (parts.query) out.append("?").append(*parts.query);
  if (parts.fragment) out.append("#").append(*parts.fragment);
  return out;
}

/// Resolves `ref` against `base` (RFC 3986 section 5.2.2). A relative or
/// empty base is allowed: the result is then relative too, which lets a
/// schema without `$id` refer to itself by fragment.
inline std::string resolve_uri(std::string_view base_text, std::string_view ref_text) {
  const uri_reference ref = split_uri(ref_text);
  const uri_reference base = split_uri(base_text);
  uri_reference target;
  std::string path;
  if (ref.scheme) {
    target = ref;
    path = remove_dot_segments(ref.path);
  } else {
    target.scheme = base.scheme;
    if (ref.authority) {
      target.authority = ref.authority;
      path = remove_dot_segments(ref.path);
      target.query = ref.query;
    } else {
      target.authority = base.authority;
      if (ref.path.empty()) {
        path = std::string(base.path);
        target.query = ref.query ? ref.query : base.query;
      } else {
        if (ref.path.starts_with('/')) {
          path = remove_dot_segments(ref.path);
        } else {
          std::string merged;
          if (base.authority && base.path.empty()) {
            merged = "/";
          } else if (const auto slash = base.path.rfind('/'); slash != std::string_view::npos) {
            merged = std::string(base.path.substr(0, slash + 1));
          }
          merged.append(ref.path);
          path = remove_dot_segments(merged);
        }
        target.query = ref.query;
      }
    }
  }
  target.fragment = ref.fragment;
  return recompose(target, path);
}

/// `uri` without its fragment (and without the '#').
inline std::string_view without_fragment(std::string_view uri) noexcept {
  return uri.substr(0, uri.find('#'));
}

/// Decodes %XX escapes; nothing when an escape is malformed.
inline std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int hi = hex(text[i + 1]), lo = hex(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

/// Appends `token` to a JSON Pointer, escaping '~' and '/' (RFC 6901).
inline void append_pointer_token(std::string& pointer, std::string_view token) {
  pointer.push_back('/');
  if (token.find_first_of("~/") == std::string_view::npos) {
    pointer.append(token);
    return;
  }
  for (const char c : token) {
    if (c == '~') {
      pointer.append("~0");
    } else if (c == '/') {
      pointer.append("~1");
    } else {
      pointer.push_back(c);
    }
  }
}

inline void append_pointer_token(std::string& pointer, std::size_t index) {
  pointer.push_back('/');
  pointer.append(std::to_string(index));
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
