// SPDX-License-Identifier: MIT
// Reads x-dlq-rule, the content rules (not-future, not-past) judged against
// the time validation is given.
#pragma once

#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/impl/schema_compiler.ipp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline bool schema_compiler::read_content_rules(schema_site& site) {
  node& n = site.n;
  if (const auto* v = site.get("x-dlq-rule")) {
    auto add_rule = [&](const boost::json::value& name) {
      const std::string_view text = name.is_string() ? std::string_view(name.get_string()) : std::string_view();
      if (text == "not-future") {
        n.content_rules.push_back(content_rule::not_future);
      } else if (text == "not-past") {
        n.content_rules.push_back(content_rule::not_past);
      } else {
        return invalid(site, "x-dlq-rule", "x-dlq-rule names not-future or not-past (a string or an array of them)");
      }
      return true;
    };
    if (v->is_array()) {
      for (const auto& name : v->get_array()) {
        if (!add_rule(name)) return false;
      }
    } else if (!add_rule(*v)) {
      return false;
    }
    if (!n.content_rules.empty()) n.flags |= has_content_rules;
  }
  return true;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
