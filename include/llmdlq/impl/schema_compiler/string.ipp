// SPDX-License-Identifier: MIT
// Reads the string assertions: minLength, maxLength, pattern and format.
#pragma once

#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/format.hpp"
#include "llmdlq/impl/schema_compiler.ipp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline bool schema_compiler::read_string_assertions(schema_site& site) {
  node& n = site.n;
  if (const auto* v = site.get("minLength")) {
    if (!read_count(site.doc, site.at, "minLength", *v, n.min_length)) return false;
    n.flags |= has_string_keywords;
  }
  if (const auto* v = site.get("maxLength")) {
    if (!read_count(site.doc, site.at, "maxLength", *v, n.max_length)) return false;
    n.flags |= has_string_keywords;
  }
  if (const auto* v = site.get("pattern")) {
    if (!v->is_string()) return invalid(site, "pattern", "pattern must be a string");
    const auto regex = compile_regex(site.doc, site.at + "/pattern", std::string_view(v->get_string()));
    if (!regex) return false;
    n.pattern = *regex;
    n.flags |= has_string_keywords;
  }
  return true;
}

// Read only when formats assert, by option or by the format-assertion
// vocabulary; otherwise `format` is an annotation.
inline bool schema_compiler::read_format(schema_site& site) {
  node& n = site.n;
  if (const auto* v = site.get("format")) {
    if (!v->is_string()) return invalid(site, "format", "format must be a string");
    n.format = format_from_name(std::string_view(v->get_string()));
    if (n.format != format_kind::unknown) n.flags |= has_string_keywords;
  }
  return true;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
