// SPDX-License-Identifier: MIT
// Reads the applicator vocabulary: the keywords that apply subschemas to an
// object's members, to an array's items, or in place to the instance itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/impl/schema_compiler.ipp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline bool schema_compiler::read_applicators(schema_site& site) {
  if (!read_object_applicators(site) || !read_array_applicators(site)) return false;
  read_in_place_applicators(site);
  return true;
}

inline bool schema_compiler::read_object_applicators(schema_site& site) {
  node& n = site.n;
  const std::uint32_t doc = site.doc;
  const std::string& at = site.at;
  const std::size_t depth = site.depth;
  if (const auto* v = site.get("properties")) {
    if (!v->is_object()) return invalid(site, "properties", "properties must be an object of schemas");
    for (const auto& [name, subschema] : v->get_object()) {
      const std::string_view property(name.data(), name.size());
      const node_id child = compile_child(doc, at, "properties", property, depth);
      if (error_) return false;
      site.keys.at(property).schema = child;
    }
    n.flags |= has_object_keywords;
  }
  if (const auto* v = site.get("patternProperties")) {
    if (!v->is_object()) return invalid(site, "patternProperties", "patternProperties must be an object of schemas");
    for (const auto& [pattern, subschema] : v->get_object()) {
      const std::string_view text(pattern.data(), pattern.size());
      std::string where = at + "/patternProperties";
      append_pointer_token(where, text);
      const auto regex = compile_regex(doc, where, text);
      if (!regex) return false;
      const node_id child = compile_child(doc, at, "patternProperties", text, depth);
      if (error_) return false;
      n.pattern_properties.emplace_back(*regex, child);
    }
    n.flags |= has_object_keywords;
  }
  if (site.get("additionalProperties")) {
    n.additional_properties = compile_child(doc, at, "additionalProperties", depth);
    n.flags |= has_object_keywords;
  }
  if (site.get("propertyNames")) {
    n.property_names = compile_child(doc, at, "propertyNames", depth);
    n.flags |= has_object_keywords;
  }
  if (const auto* v = site.get("dependentSchemas")) {
    if (!v->is_object()) return invalid(site, "dependentSchemas", "dependentSchemas must be an object of schemas");
    for (const auto& [trigger, subschema] : v->get_object()) {
      const std::string_view name(trigger.data(), trigger.size());
      const node_id child = compile_child(doc, at, "dependentSchemas", name, depth);
      if (error_) return false;
      n.dependent_schemas.push_back({presence_bit(site.keys, n, name), std::string(name), child});
    }
    n.flags |= has_object_keywords;
  }
  // `dependencies` (drafts 4 to 7) is read as dependentRequired or
  // dependentSchemas, value by value, for schemas written for older drafts.
  if (const auto* v = site.get("dependencies"); v && v->is_object()) {
    n.spelling |= dependencies_keyword;
    for (const auto& [trigger, dependency] : v->get_object()) {
      const std::string_view name(trigger.data(), trigger.size());
      if (dependency.is_array()) {
        std::string where = at + "/dependencies";
        append_pointer_token(where, name);
        std::vector<std::string> names;
        if (!read_string_array(doc, where, dependency, names)) return false;
        add_dependent_required(site.keys, n, name, names);
      } else {
        const node_id child = compile_child(doc, at, "dependencies", name, depth);
        if (error_) return false;
        n.dependent_schemas.push_back({presence_bit(site.keys, n, name), std::string(name), child});
      }
    }
    n.flags |= has_object_keywords;
  }
  return true;
}

inline bool schema_compiler::read_array_applicators(schema_site& site) {
  node& n = site.n;
  const std::uint32_t doc = site.doc;
  const std::string& at = site.at;
  const std::size_t depth = site.depth;
  if (const auto* v = site.get("prefixItems")) {
    n.prefix_items = compile_list(doc, at, "prefixItems", *v, depth);
    n.flags |= has_array_keywords;
  }
  if (const auto* v = site.get("items")) {
    if (v->is_array()) {
      // The array form of drafts 4 to 2019-09: prefixItems, and
      // additionalItems for the rest.
      n.prefix_items = compile_list(doc, at, "items", *v, depth);
      n.spelling |= items_array;
      if (site.get("additionalItems")) n.items = compile_child(doc, at, "additionalItems", depth);
    } else {
      n.items = compile_child(doc, at, "items", depth);
    }
    n.flags |= has_array_keywords;
  }
  if (site.get("contains")) {
    n.contains = compile_child(doc, at, "contains", depth);
    n.flags |= has_array_keywords;
  }
  return true;
}

inline void schema_compiler::read_in_place_applicators(schema_site& site) {
  node& n = site.n;
  const std::uint32_t doc = site.doc;
  const std::string& at = site.at;
  const std::size_t depth = site.depth;
  if (const auto* v = site.get("allOf")) n.all_of = compile_list(doc, at, "allOf", *v, depth);
  if (const auto* v = site.get("anyOf")) n.any_of = compile_list(doc, at, "anyOf", *v, depth);
  if (const auto* v = site.get("oneOf")) n.one_of = compile_list(doc, at, "oneOf", *v, depth);
  if (site.get("not")) n.not_schema = compile_child(doc, at, "not", depth);
  if (site.get("if")) {
    n.if_schema = compile_child(doc, at, "if", depth);
    if (site.get("then")) n.then_schema = compile_child(doc, at, "then", depth);
    if (site.get("else")) n.else_schema = compile_child(doc, at, "else", depth);
  }
  if (n.all_of.count || n.any_of.count || n.one_of.count || n.not_schema != no_node ||
      n.if_schema != no_node) {
    n.flags |= has_combinators;
  }
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
