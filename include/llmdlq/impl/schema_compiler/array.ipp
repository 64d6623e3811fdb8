// SPDX-License-Identifier: MIT
// Reads the array assertions: minItems, maxItems, uniqueItems, minContains and maxContains.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "llmdlq/config.hpp"
#include "llmdlq/impl/schema_compiler.ipp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline bool schema_compiler::read_array_assertions(schema_site& site) {
  node& n = site.n;
  const std::pair<std::string_view, std::uint64_t*> array_counts[] = {
      {"minItems", &n.min_items}, {"maxItems", &n.max_items}};
  for (const auto& [keyword, count] : array_counts) {
    if (const auto* v = site.get(keyword)) {
      if (!read_count(site.doc, site.at, keyword, *v, *count)) return false;
      n.flags |= has_array_keywords;
    }
  }
  if (const auto* v = site.get("uniqueItems")) {
    if (!v->is_bool()) return invalid(site, "uniqueItems", "uniqueItems must be a boolean");
    n.unique_items = v->get_bool();
    if (n.unique_items) n.flags |= has_array_keywords;
  }
  if (const auto* v = site.get("minContains")) {
    if (!read_count(site.doc, site.at, "minContains", *v, n.min_contains)) return false;
  }
  if (const auto* v = site.get("maxContains")) {
    if (!read_count(site.doc, site.at, "maxContains", *v, n.max_contains)) return false;
  }
  return true;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
