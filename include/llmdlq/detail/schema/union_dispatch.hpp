// SPDX-License-Identifier: MIT
// Tagged unions: an anyOf or oneOf whose branches each require their own
// string at one property ({"type": {"const": "Point"}}), found when the
// schema is compiled. An object that carries the tag is judged against the
// one branch the tag names, not against every branch in turn: each other
// branch fails at that property's const whatever else it says. And unions
// whose branches admit disjoint kinds ({"oneOf": [{"type": "string"},
// {"type": "array"}]}): a value is judged against the one branch of its kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/schema/instance.hpp"
#include "llmdlq/detail/schema/schema_program.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Unions of fewer branches are tried in turn: finding the tag costs about
/// what failing a branch at its first property does.
inline constexpr std::uint32_t min_dispatched_branches = 3;

/// How many of the first branch's tagged properties are tried as the tag,
/// and how many `$ref`s are followed from a branch to its properties.
inline constexpr std::size_t max_tag_candidates = 4;
inline constexpr int max_dispatch_ref_hops = 8;

/// What dispatched_branch() answers besides a branch's index.
inline constexpr std::uint32_t no_branch = no_index;         ///< the tag is no branch's: none can match
inline constexpr std::uint32_t every_branch = no_index - 1;  ///< no tag: try them all

/// The string const that `n`, or a node its `$ref`s apply in place, sets
/// for property `name`; empty (null data) when there is none.
[[nodiscard]] inline std::string_view tag_of(const program& prog, const node* n, std::string_view name) {
  for (int hops = 0; n != nullptr && hops <= max_dispatch_ref_hops; ++hops) {
    if ((n->flags & has_object_keywords) && n->keys != no_index) {
      const key_table::entry* e = prog.key_tables[n->keys].find(name);
      if (e != nullptr && e->schema_node != nullptr && (e->schema_node->flags & has_const)) {
        const boost::json::value& tag = prog.values[e->schema_node->const_value];
        if (tag.is_string()) return {tag.get_string().data(), tag.get_string().size()};
      }
    }
    n = (n->flags & has_ref) ? &prog.nodes[n->ref] : nullptr;
  }
  return {};
}

/// Up to max_tag_candidates property names `n` (or its `$ref`s) tags with a string const.
[[nodiscard]] inline std::vector<std::string_view> tag_candidates(const program& prog, const node* n) {
  std::vector<std::string_view> names;
  for (int hops = 0; n != nullptr && hops <= max_dispatch_ref_hops; ++hops) {
    if ((n->flags & has_object_keywords) && n->keys != no_index) {
      for (const auto& e : prog.key_tables[n->keys].entries()) {
        if (names.size() == max_tag_candidates) return names;
        if (e.schema_node != nullptr && (e.schema_node->flags & has_const) &&
            prog.values[e.schema_node->const_value].is_string()) {
          names.push_back(e.name);
        }
      }
    }
    n = (n->flags & has_ref) ? &prog.nodes[n->ref] : nullptr;
  }
  return names;
}

/// The dispatch of the union `span`, if one property tags each of its
/// branches with a string no other branch uses.
[[nodiscard]] inline std::optional<union_dispatch> find_dispatch(const program& prog, node_span span) {
  if (span.count < min_dispatched_branches) return std::nullopt;
  const auto branch_node = [&](std::uint32_t i) { return &prog.nodes[prog.children[span.begin + i]]; };
  for (const std::string_view name : tag_candidates(prog, branch_node(0))) {
    std::unordered_set<std::string_view> seen;
    union_dispatch d;
    d.property = name;
    for (std::uint32_t i = 0; i < span.count; ++i) {
      const std::string_view tag = tag_of(prog, branch_node(i), name);
      if (tag.data() == nullptr || !seen.insert(tag).second) break;
      d.tags.add(tag);
      d.branch.push_back(i);
    }
    if (d.branch.size() != span.count) continue;
    d.tags.seal();
    return d;
  }
  return std::nullopt;
}

/// Finds the tagged unions of a complete program (key tables resolved).
/// Linear: each union's branches are read a bounded number of times.
inline void plan_union_dispatch(program& prog) {
  for (node& n : prog.nodes) {
    for (auto [span, dispatch] : {std::pair{n.any_of, &n.any_of_dispatch}, {n.one_of, &n.one_of_dispatch}}) {
      if (auto d = find_dispatch(prog, span)) {
        *dispatch = static_cast<std::uint32_t>(prog.dispatches.size());
        prog.dispatches.push_back(std::move(*d));
      }
    }
  }
}

/// For a node that is only an anyOf or a oneOf, the branch each kind of value
/// can match, when no two branches admit the same kind: then the union's
/// verdict is that branch's (none: it fails), for anyOf and oneOf alike.
[[nodiscard]] inline std::optional<kind_dispatch> find_kind_dispatch(const program& prog, const node& n) {
  if ((n.flags & ~(annotates_properties | annotates_items)) != has_combinators) return std::nullopt;
  if ((n.any_of.count == 0) == (n.one_of.count == 0) || n.all_of.count != 0 || n.not_schema != no_node ||
      n.if_schema != no_node) {
    return std::nullopt;
  }
  const node_span span = n.any_of.count != 0 ? n.any_of : n.one_of;
  kind_dispatch by_kind;
  by_kind.fill(no_node);
  for (std::uint32_t i = 0; i < span.count; ++i) {
    const node_id branch = prog.children[span.begin + i];
    for (std::size_t k = 0; k < by_kind.size(); ++k) {
      if ((prog.nodes[branch].admits & kind_bits[k]) == 0) continue;
      if (by_kind[k] != no_node) return std::nullopt;
      by_kind[k] = branch;
    }
  }
  return by_kind;
}

/// Flags the unions find_kind_dispatch() settles. Not in a schema with a
/// defect (a defective node admits nothing, yet reaching it must fail the
/// validation) nor with dynamic scope (evaluating the node may enter a resource).
/// Such a union admits no kind that no branch does, even where bounding
/// node::admits stopped before it learned so: a kind it admits has a branch.
inline void plan_kind_dispatch(program& prog) {
  if (!prog.defects.empty() || prog.uses_dynamic_scope) return;
  for (node& n : prog.nodes) {
    if (auto by_kind = find_kind_dispatch(prog, n)) {
      for (std::size_t k = 0; k < by_kind->size(); ++k) {
        if ((*by_kind)[k] == no_node) n.admits &= static_cast<std::uint8_t>(~kind_bits[k]);
      }
      n.flags |= kind_dispatched;
      n.kind_dispatch = static_cast<std::uint32_t>(prog.kind_dispatches.size());
      prog.kind_dispatches.push_back(*by_kind);
    }
  }
}

/// The branch of union `d` the object `v` can match: its index in the
/// union, no_branch when `v`'s tag is no branch's (or not a string), or
/// every_branch when `v` has no tag.
template <class View>
[[nodiscard]] LLMDLQ_ALWAYS_INLINE std::uint32_t dispatched_branch(const union_dispatch& d, typename View::value v) {
  std::uint32_t chosen = every_branch;
  View::for_each_member(v, [&](std::size_t, std::string_view key, typename View::value member) {
    if (key != d.property) return true;
    chosen = no_branch;
    if (View::kind(member) == instance_kind::string) {
      if (const key_table::entry* e = d.tags.find(View::string(member))) {
        chosen = d.branch[static_cast<std::size_t>(e - d.tags.entries().data())];
      }
    }
    return false;
  });
  return chosen;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
