// SPDX-License-Identifier: MIT
// Reads the core vocabulary's references, $ref and $dynamicRef, and resolves
// them against the indexed identifiers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/schema/uri.hpp"
#include "llmdlq/impl/schema_compiler.ipp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline std::optional<schema_compiler::resolved_target> schema_compiler::resolve_reference(
    std::uint32_t doc, const std::string& at, std::string_view keyword, std::string_view ref) {
  const std::string absolute = resolve_uri(base_at(doc, at), ref);
  const std::string resource{without_fragment(absolute)};
  const auto hash = absolute.find('#');
  const auto decoded = percent_decode(hash == std::string::npos ? std::string_view()
                                                                : std::string_view(absolute).substr(hash + 1));
  const std::string where = at + "/" + std::string(keyword);
  if (!decoded) {
    set_error(schema_errc::invalid_keyword, doc, where, fmt::format("malformed escape in {}", ref));
    return std::nullopt;
  }
  resolved_target target{{}, resource, *decoded, {}};
  if (resources_.find(resource) == resources_.end() && !load(resource)) {
    if (error_) return std::nullopt;
    if (catalog_.unread()) {  // perhaps there, but unreadable: the catalogue is broken, not the schema
      set_error(schema_errc::unresolved_reference, doc, where,
                fmt::format("cannot resolve {}: no schema is registered as {} ({})", ref, resource,
                            catalog_.unread()->message));
      return std::nullopt;
    }
    target.unresolved = fmt::format("cannot resolve {}: no schema is registered as {}", ref, resource);
    return target;
  }
  const location root = resources_.at(resource);
  target.where = root;
  if (decoded->empty()) return target;
  if ((*decoded)[0] == '/') {
    target.where.pointer = root.pointer + *decoded;
    boost::json::error_code ec;
    if (!docs_[root.doc].json.find_pointer(target.where.pointer, ec)) {
      target.unresolved = fmt::format("cannot resolve {}: {} has no {}", ref, resource, *decoded);
    }
    return target;
  }
  const auto it = anchors_.find(resource + "#" + *decoded);
  if (it == anchors_.end()) {
    target.unresolved = fmt::format("cannot resolve {}: {} has no anchor '{}'", ref, resource, *decoded);
    return target;
  }
  target.where = it->second.where;
  return target;
}

inline node_id schema_compiler::unresolved_reference(const schema_site& site, std::string_view keyword,
                                                     std::string why) {
  const std::string where = site.at + "/" + std::string(keyword);
  if (options_.refuse_broken_references) {
    set_error(schema_errc::unresolved_reference, site.doc, where, std::move(why));
    return no_node;
  }
  return defective_node(schema_defect::unresolved_reference, keyword, describe_location(site.doc, where),
                        std::move(why), site.n.resource);
}

inline bool schema_compiler::read_references(schema_site& site) {
  node& n = site.n;
  if (const auto* v = site.get("$ref")) {
    if (!v->is_string()) return invalid(site, "$ref", "$ref must be a URI reference string");
    const auto target = resolve_reference(site.doc, site.at, "$ref", std::string_view(v->get_string()));
    if (!target) return false;
    n.ref = target->unresolved.empty() ? compile_later(target->where.doc, target->where.pointer)
                                       : unresolved_reference(site, "$ref", target->unresolved);
    if (error_) return false;
    n.flags |= has_ref;
  }
  if (const auto* v = site.get("$dynamicRef")) {
    if (!v->is_string()) return invalid(site, "$dynamicRef", "$dynamicRef must be a URI reference string");
    const auto target = resolve_reference(site.doc, site.at, "$dynamicRef", std::string_view(v->get_string()));
    if (!target) return false;
    if (!target->unresolved.empty()) {
      n.dynamic_ref = unresolved_reference(site, "$dynamicRef", target->unresolved);
      n.flags |= has_dynamic_ref;
      return !error_;
    }
    n.dynamic_ref = compile_later(target->where.doc, target->where.pointer);
    n.flags |= has_dynamic_ref;
    const auto it = anchors_.find(target->resource_uri + "#" + target->fragment);
    if (!target->fragment.empty() && target->fragment[0] != '/' && it != anchors_.end() && it->second.dynamic) {
      n.dynamic_anchor = anchor_name_id(target->fragment);
      prog_->uses_dynamic_scope = true;
    }
  }
  // 2019-09's `$recursiveRef` ("#"): its target, unless that root has "$recursiveAnchor": true,
  // and then the outermost of the dynamic scope's innermost run of such roots.
  if (const auto* v = site.get("$recursiveRef")) {
    if (!v->is_string()) return invalid(site, "$recursiveRef", "$recursiveRef must be a URI reference string");
    const auto target = resolve_reference(site.doc, site.at, "$recursiveRef", std::string_view(v->get_string()));
    if (!target) return false;
    if (!target->unresolved.empty()) {
      n.dynamic_ref = unresolved_reference(site, "$recursiveRef", target->unresolved);
      n.flags |= has_dynamic_ref;
      return !error_;
    }
    n.dynamic_ref = compile_later(target->where.doc, target->where.pointer);
    n.flags |= has_dynamic_ref;
    n.recursive_ref = true;
    boost::json::error_code ec;
    if (const auto* root = docs_[target->where.doc].json.find_pointer(target->where.pointer, ec);
        root && root->is_object() && root->as_object().contains("$recursiveAnchor") &&
        root->as_object().at("$recursiveAnchor") == true) {
      prog_->uses_dynamic_scope = true;
    }
  }
  return true;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
