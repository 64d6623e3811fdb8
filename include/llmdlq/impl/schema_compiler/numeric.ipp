// SPDX-License-Identifier: MIT
// Reads the numeric assertions: minimum, maximum, exclusiveMinimum,
// exclusiveMaximum and multipleOf.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/impl/schema_compiler.ipp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline bool schema_compiler::read_number(std::uint32_t doc, const std::string& at, std::string_view keyword,
                                         const boost::json::value& v, json_number& out) {
  switch (v.kind()) {
    case boost::json::kind::int64: out = json_number::of(v.get_int64()); return true;
    case boost::json::kind::uint64: out = json_number::of(v.get_uint64()); return true;
    case boost::json::kind::double_: out = json_number::of(v.get_double()); return true;
    default:
      set_error(schema_errc::invalid_keyword, doc, at + "/" + std::string(keyword),
                fmt::format("{} must be a number", keyword));
      return false;
  }
}

inline bool schema_compiler::read_numeric(schema_site& site) {
  node& n = site.n;
  const std::pair<std::string_view, number_bound*> bounds[] = {
      {"minimum", &n.minimum},
      {"maximum", &n.maximum},
      {"exclusiveMinimum", &n.exclusive_minimum},
      {"exclusiveMaximum", &n.exclusive_maximum}};
  const bool boolean_exclusive = site.draft == dialect::draft4;
  for (const auto& [keyword, bound] : bounds) {
    if (boolean_exclusive && keyword.starts_with("exclusive")) continue;
    if (const auto* v = site.get(keyword)) {
      if (!read_number(site.doc, site.at, keyword, *v, bound->value)) return false;
      bound->present = true;
      n.flags |= has_number_keywords;
    }
  }
  // Draft 4: "exclusiveMinimum": true makes `minimum` exclusive (and the same for the maximum).
  if (boolean_exclusive) {
    const std::tuple<std::string_view, number_bound*, number_bound*> exclusives[] = {
        {"exclusiveMinimum", &n.minimum, &n.exclusive_minimum},
        {"exclusiveMaximum", &n.maximum, &n.exclusive_maximum}};
    for (const auto& [keyword, inclusive, exclusive] : exclusives) {
      const auto* v = site.get(keyword);
      if (!v) continue;
      if (!v->is_bool()) return invalid(site, keyword, fmt::format("{} must be a boolean in draft 4", keyword));
      if (v->get_bool() && inclusive->present) std::swap(*inclusive, *exclusive);
    }
  }
  set_interval(n);
  if (const auto* v = site.get("multipleOf")) {
    if (!read_number(site.doc, site.at, "multipleOf", *v, n.multiple_of)) return false;
    if (compare(n.multiple_of, json_number::of(std::int64_t{0})) <= 0) {
      return invalid(site, "multipleOf", "multipleOf must be greater than 0");
    }
    n.multiple_of_decimal = to_decimal(n.multiple_of);
    if (n.multiple_of_decimal.mantissa == 1 && n.multiple_of_decimal.exponent < 0 &&
        n.multiple_of_decimal.exponent >= -22) {
      n.multiple_of_scale = -n.multiple_of_decimal.exponent;
    }
    n.has_multiple_of = true;
    n.flags |= has_number_keywords;
  }
  return true;
}

// Folds the numeric bounds into node::interval_low/high when doubles hold
// them exactly.
inline void schema_compiler::set_interval(node& n) {
  constexpr double infinity = std::numeric_limits<double>::infinity();
  double low = -infinity, high = infinity;
  const std::tuple<const number_bound&, bool, bool> bounds[] = {
      {n.minimum, true, false}, {n.exclusive_minimum, true, true},
      {n.maximum, false, false}, {n.exclusive_maximum, false, true}};
  for (const auto& [bound, lower, exclusive] : bounds) {
    if (!bound.present) continue;
    const double d = bound.value.to_double();
    if (compare(bound.value, json_number::of(d)) != 0) return;  // not exact: no interval
    if (lower) {
      low = std::max(low, exclusive ? std::nextafter(d, infinity) : d);
    } else {
      high = std::min(high, exclusive ? std::nextafter(d, -infinity) : d);
    }
  }
  n.has_interval = true;
  n.interval_low = low;
  n.interval_high = high;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
