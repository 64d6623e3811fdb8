// SPDX-License-Identifier: MIT
// Reads the object assertions: minProperties, maxProperties, required and dependentRequired.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/impl/schema_compiler.ipp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline bool schema_compiler::read_object_assertions(schema_site& site) {
  node& n = site.n;
  const std::pair<std::string_view, std::uint64_t*> object_counts[] = {
      {"minProperties", &n.min_properties}, {"maxProperties", &n.max_properties}};
  for (const auto& [keyword, count] : object_counts) {
    if (const auto* v = site.get(keyword)) {
      if (!read_count(site.doc, site.at, keyword, *v, *count)) return false;
      n.flags |= has_object_keywords;
    }
  }
  if (const auto* v = site.get("required")) {
    std::vector<std::string> names;
    if (!read_string_array(site.doc, site.at + "/required", *v, names)) return false;
    for (auto& name : names) n.required.emplace_back(presence_bit(site.keys, n, name), std::move(name));
    if (!n.required.empty()) n.flags |= has_object_keywords;
  }
  if (const auto* v = site.get("dependentRequired")) {
    if (!v->is_object()) return invalid(site, "dependentRequired", "dependentRequired must be an object");
    for (const auto& [trigger, names_value] : v->get_object()) {
      const std::string_view trigger_name(trigger.data(), trigger.size());
      std::string where = site.at + "/dependentRequired";
      append_pointer_token(where, trigger_name);
      std::vector<std::string> names;
      if (!read_string_array(site.doc, where, names_value, names)) return false;
      add_dependent_required(site.keys, n, trigger_name, names);
    }
  }
  return true;
}

inline void schema_compiler::add_dependent_required(key_table& keys, node& n, std::string_view trigger,
                                                    const std::vector<std::string>& names) {
  dependent_required_rule rule{presence_bit(keys, n, trigger), std::string(trigger), {}};
  for (const auto& name : names) rule.required.emplace_back(presence_bit(keys, n, name), name);
  n.dependent_required.push_back(std::move(rule));
  n.flags |= has_object_keywords;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
