// SPDX-License-Identifier: MIT
// Definitions for store_spec.hpp.
#pragma once

#include <algorithm>
#include <charconv>
#include <iterator>
#include <system_error>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/store_spec.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail {

inline bool is_spec_identifier(std::string_view name) {
  return !name.empty() && !(name[0] >= '0' && name[0] <= '9') && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Splits a trailing `#[SCHEMA.]TABLE` off `location` when what follows the
// last `#` is one (a `#` elsewhere, in a password say, stays where it is).
inline void split_table(store_spec& spec, bool schema_allowed) {
  const auto hash = spec.location.rfind('#');
  if (hash == std::string::npos) return;
  const std::string_view name = std::string_view(spec.location).substr(hash + 1);
  const auto dot = name.find('.');
  if (dot == std::string_view::npos) {
    if (!is_spec_identifier(name)) return;
    spec.table = std::string(name);
  } else {
    if (!schema_allowed || !is_spec_identifier(name.substr(0, dot)) || !is_spec_identifier(name.substr(dot + 1))) {
      return;
    }
    spec.schema = std::string(name.substr(0, dot));
    spec.table = std::string(name.substr(dot + 1));
  }
  spec.location.resize(hash);
}

// `BROKERS/TOPIC` into the spec; false when it is not that.
inline bool split_topic(store_spec& spec, std::string_view rest) {
  const auto slash = rest.rfind('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == rest.size()) return false;
  spec.location = std::string(rest.substr(0, slash));
  spec.topic = std::string(rest.substr(slash + 1));
  return true;
}

// `HOST:PORT/STREAM` into the spec; false when it is not that.
inline bool split_stream(store_spec& spec, std::string_view rest) {
  if (!split_topic(spec, rest)) return false;
  const auto colon = spec.location.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  const std::string_view port = std::string_view(spec.location).substr(colon + 1);
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), spec.port);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || spec.port <= 0) return false;
  spec.location.resize(colon);
  return true;
}

// The rest of a spec after its prefix into `spec`; false when it does not fit the form.
inline bool read_location(store_spec& spec, std::string_view rest) {
  switch (spec.kind) {
    case store_kind::kafka: return split_topic(spec, rest);
    case store_kind::redis: return split_stream(spec, rest);
    case store_kind::sqlite:
    case store_kind::postgres:
      spec.location = std::string(rest);
      split_table(spec, spec.kind == store_kind::postgres);
      return true;
    case store_kind::jsonl: spec.location = std::string(rest); return true;
  }
  return false;
}

inline constexpr store_kind spec_kinds[] = {store_kind::sqlite, store_kind::postgres, store_kind::kafka,
                                            store_kind::jsonl, store_kind::redis};

// The kind whose prefix (`sqlite:`) `text` starts with, if any.
inline const store_kind* prefix_kind(std::string_view text) {
  const auto* found = std::find_if(std::begin(spec_kinds), std::end(spec_kinds), [&](store_kind kind) {
    const std::string_view name = to_string(kind);
    return text.size() > name.size() && text.starts_with(name) && text[name.size()] == ':';
  });
  return found == std::end(spec_kinds) ? nullptr : found;
}

inline unexpected<store_spec_error> spec_failure(store_spec_errc code, std::string message) {
  return unexpected(store_spec_error{code, std::move(message)});
}

}  // namespace detail

LLMDLQ_INLINE std::string store_forms(store_kinds kinds) {
  std::string text;
  for (const store_kind kind : detail::spec_kinds) {
    if (!kinds.contains(kind)) continue;
    if (!text.empty()) text += " | ";
    text += store_form(kind);
    if (kind == store_kind::kafka && kinds.contains(store_kind::sqlite)) text += " (read only)";
  }
  return text;
}

LLMDLQ_INLINE expected<store_spec, store_spec_error> parse_store_spec(std::string_view text, store_kinds kinds) {
  const store_kind* kind = detail::prefix_kind(text);
  if (kind == nullptr || !kinds.contains(*kind)) {
    return detail::spec_failure(kind == nullptr ? store_spec_errc::unknown_kind : store_spec_errc::kind_not_accepted,
                                fmt::format("no store '{}': give {}", text, store_forms(kinds)));
  }
  store_spec spec;
  spec.kind = *kind;
  if (!detail::read_location(spec, text.substr(to_string(*kind).size() + 1))) {
    return detail::spec_failure(store_spec_errc::malformed, fmt::format("'{}' is not {}", text, store_form(*kind)));
  }
  if (spec.location.empty()) {
    return detail::spec_failure(store_spec_errc::no_location,
                                fmt::format("'{}' names no store: give {}", text, store_forms(kinds)));
  }
  return spec;
}

LLMDLQ_INLINE std::string display_name(const store_spec& spec) {
  switch (spec.kind) {
    case store_kind::kafka: return "kafka:" + spec.location + "/" + spec.topic;
    case store_kind::redis: return fmt::format("redis:{}:{}/{}", spec.location, spec.port, spec.topic);
    case store_kind::jsonl: return spec.location;
    case store_kind::sqlite:
    case store_kind::postgres: break;
  }
  std::string name = spec.kind == store_kind::sqlite ? spec.location : "postgres";
  if (!spec.table.empty()) name += "#" + (spec.schema.empty() ? spec.table : spec.schema + "." + spec.table);
  return name;
}

LLMDLQ_END_NAMESPACE
