// SPDX-License-Identifier: MIT
// What the forward pass can judge, decided once per schema when it is
// compiled: the kinds of value each node can accept, and whether any object
// or array can meet a keyword that the pass leaves to the tape evaluator.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/schema/instance.hpp"
#include "llmdlq/detail/schema/schema_program.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Keywords the forward pass does not judge on an object or array: they
/// look at a container more than once, or compare it whole.
inline constexpr std::uint32_t container_tape_flags = has_const | has_enum | has_dynamic_ref | has_combinators |
                                                      has_unevaluated_items | has_unevaluated_properties;

/// An object's keywords the forward pass does not judge either.
[[nodiscard]] inline bool object_left_to_tape(const node& n) noexcept {
  return !n.pattern_properties.empty() || !n.dependent_schemas.empty();
}

/// An array's keywords the forward pass does not judge either.
[[nodiscard]] inline bool array_left_to_tape(const node& n) noexcept { return n.contains != no_node || n.unique_items; }

/// How many `$ref`s the forward pass follows from one value before it
/// leaves the value to the tape evaluator.
inline constexpr int max_forward_ref_hops = 64;

/// The kind of a JSON value, as a type_bit.
[[nodiscard]] inline std::uint8_t kind_of(const boost::json::value& v) noexcept {
  switch (v.kind()) {
    case boost::json::kind::null: return null_bit;
    case boost::json::kind::bool_: return boolean_bit;
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_: return number_bit;
    case boost::json::kind::string: return string_bit;
    case boost::json::kind::array: return array_bit;
    case boost::json::kind::object: return object_bit;
  }
  return every_kind;
}

/// The kinds `n` accepts, from its own keywords and what its in-place
/// subschemas accepted so far.
[[nodiscard]] inline std::uint8_t admitted_kinds(const program& prog, const node& n) {
  if (n.flags & always_false) return 0;
  std::uint8_t kinds = every_kind;
  if (n.flags & has_type) kinds &= (n.types & every_kind) | ((n.types & integer_bit) ? number_bit : 0);
  if (n.flags & has_const) kinds &= kind_of(prog.values[n.const_value]);
  if (n.flags & has_enum) {
    std::uint8_t listed = 0;
    for (const auto& v : prog.enums[n.enum_set].values) listed |= kind_of(v);
    kinds &= listed;
  }
  if (n.flags & has_ref) kinds &= prog.nodes[n.ref].admits;
  for (std::uint32_t i = 0; i < n.all_of.count; ++i) kinds &= prog.nodes[prog.children[n.all_of.begin + i]].admits;
  for (const node_span span : {n.any_of, n.one_of}) {
    if (span.count == 0) continue;
    std::uint8_t some = 0;
    for (std::uint32_t i = 0; i < span.count; ++i) some |= prog.nodes[prog.children[span.begin + i]].admits;
    kinds &= some;
  }
  if (n.if_schema != no_node) {
    const std::uint8_t then_kinds = n.then_schema == no_node ? every_kind : prog.nodes[n.then_schema].admits;
    const std::uint8_t else_kinds = n.else_schema == no_node ? every_kind : prog.nodes[n.else_schema].admits;
    kinds &= then_kinds | else_kinds;
  }
  return kinds;
}

/// Sets node::admits. Starting from every kind and only ever removing one,
/// each pass leaves a superset of what the nodes accept (references may
/// loop), so the passes can stop at any point; they stop when nothing
/// changes, which for subschemas numbered after their parents (as the
/// compiler numbers them) is the second pass, or after a few.
inline void bound_admitted_kinds(program& prog) {
  constexpr int max_passes = 8;
  for (int pass = 0; pass < max_passes; ++pass) {
    bool changed = false;
    for (std::size_t i = prog.nodes.size(); i-- > 0;) {
      node& n = prog.nodes[i];
      const std::uint8_t kinds = n.admits & admitted_kinds(prog, n);
      changed = changed || kinds != n.admits;
      n.admits = kinds;
    }
    if (!changed) return;
  }
}

/// Whether the forward pass decides every object and array it can meet
/// (short of texts that are not JSON or nest too deep): no container
/// reaches, through properties, additionalProperties, prefixItems, items
/// and `$ref`, a node it would leave to the tape evaluator. Linear in the
/// program: each node is looked at once.
[[nodiscard]] inline bool forward_pass_decides(const program& prog) {
  if (prog.uses_dynamic_scope) return false;
  std::vector<bool> seen(prog.nodes.size(), false);
  std::vector<node_id> pending{prog.root};
  seen[prog.root] = true;
  auto visit = [&](node_id id) {
    if (id == no_node || seen[id]) return;
    seen[id] = true;
    pending.push_back(id);
  };
  while (!pending.empty()) {
    const node_id id = pending.back();
    pending.pop_back();
    for (const instance_kind container : {instance_kind::object, instance_kind::array}) {
      const std::uint8_t kind = kind_bits[static_cast<std::size_t>(container)];
      const std::uint32_t own = container == instance_kind::object ? has_object_keywords : has_array_keywords;
      // As forward_evaluator::governing follows a container of this kind.
      const node* n = &prog.nodes[id];
      for (int hops = 0;; ++hops) {
        if (!(n->admits & kind)) break;  // a container of this kind fails here
        if (n->flags & kind_dispatched) {
          if (hops == max_forward_ref_hops) return false;
          n = &prog.nodes[prog.kind_dispatches[n->kind_dispatch][static_cast<std::size_t>(container)]];
          continue;
        }
        if (n->flags & container_tape_flags) return false;
        if (!(n->flags & has_ref)) break;
        if ((n->flags & own) || hops == max_forward_ref_hops) return false;
        n = &prog.nodes[n->ref];
      }
      if (!(n->admits & kind) || !(n->flags & own)) continue;
      if (kind == object_bit) {
        if (object_left_to_tape(*n)) return false;
        if (n->keys != no_index) {
          for (const auto& e : prog.key_tables[n->keys].entries()) visit(e.schema);
        }
        visit(n->additional_properties);
      } else {
        if (array_left_to_tape(*n)) return false;
        for (std::uint32_t i = 0; i < n->prefix_items.count; ++i) visit(prog.children[n->prefix_items.begin + i]);
        visit(n->items);
      }
    }
  }
  return true;
}

/// Whether schema::is_valid_text starts with the forward pass: once the
/// program is complete, with node::admits bounded and the unions settled
/// by kind (union_dispatch.hpp) planned.
inline void plan_forward_pass(program& prog) { prog.forward_pass = prog.root != no_node && forward_pass_decides(prog); }

}  // namespace detail
LLMDLQ_END_NAMESPACE
