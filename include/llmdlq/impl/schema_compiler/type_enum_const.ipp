// SPDX-License-Identifier: MIT
// Reads the validation keywords for any instance type: type, const and enum.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/impl/schema_compiler.ipp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline bool schema_compiler::read_type_enum_const(schema_site& site) {
  node& n = site.n;
  if (const auto* v = site.get("type")) {
    auto bit_of = [](std::string_view name) -> std::uint8_t {
      if (name == "null") return null_bit;
      if (name == "boolean") return boolean_bit;
      if (name == "object") return object_bit;
      if (name == "array") return array_bit;
      if (name == "number") return number_bit;
      if (name == "string") return string_bit;
      if (name == "integer") return integer_bit;
      return 0;
    };
    const auto bad = "type must be a type name or an array of distinct type names";
    if (v->is_string()) {
      n.types = bit_of(std::string_view(v->get_string()));
      if (!n.types) return invalid(site, "type", fmt::format("unknown type '{}'", std::string_view(v->get_string())));
    } else if (v->is_array() && !v->get_array().empty()) {
      for (const auto& t : v->get_array()) {
        const std::uint8_t bit = t.is_string() ? bit_of(std::string_view(t.get_string())) : 0;
        if (!bit || (n.types & bit)) return invalid(site, "type", bad);
        n.types |= bit;
      }
    } else {
      return invalid(site, "type", bad);
    }
    n.flags |= has_type;
  }
  if (const auto* v = site.get("const")) {
    n.const_value = static_cast<std::uint32_t>(prog_->values.size());
    prog_->values.push_back(*v);
    n.flags |= has_const;
  }
  if (const auto* v = site.get("enum")) {
    if (!v->is_array()) return invalid(site, "enum", "enum must be an array");
    enum_values e;
    e.values.assign(v->get_array().begin(), v->get_array().end());
    e.all_strings = std::all_of(e.values.begin(), e.values.end(), [](const auto& x) { return x.is_string(); });
    if (e.all_strings) {
      for (const auto& x : e.values) e.strings.at(std::string_view(x.get_string()));
    }
    e.strings.seal();
    n.enum_set = static_cast<std::uint32_t>(prog_->enums.size());
    prog_->enums.push_back(std::move(e));
    n.flags |= has_enum;
  }
  return true;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
