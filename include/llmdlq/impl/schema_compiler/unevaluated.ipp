// SPDX-License-Identifier: MIT
// Reads the unevaluated vocabulary: unevaluatedItems and unevaluatedProperties.
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/impl/schema_compiler.ipp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline void schema_compiler::read_unevaluated(schema_site& site) {
  node& n = site.n;
  if (site.get("unevaluatedItems")) {
    n.unevaluated_items = compile_child(site.doc, site.at, "unevaluatedItems", site.depth);
    n.flags |= has_unevaluated_items;
  }
  if (site.get("unevaluatedProperties")) {
    n.unevaluated_properties = compile_child(site.doc, site.at, "unevaluatedProperties", site.depth);
    n.flags |= has_unevaluated_properties;
  }
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
