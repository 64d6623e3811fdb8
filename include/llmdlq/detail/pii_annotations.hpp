// SPDX-License-Identifier: MIT
// Finds the properties a schema marks `x-llmdlq-pii`, as pointer patterns
// into the documents it describes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json_locate.hpp"
#include "llmdlq/pii_path.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

class pii_annotation_walk {
 public:
  explicit pii_annotation_walk(const boost::json::value& root) : root_(root) {}

  std::vector<pii_path> run() {
    visit(root_, "", 0);
    return std::move(found_);
  }

 private:
  // Subschemas nest and `$ref`s chain at most this deep (a cycle stops here too).
  static constexpr int max_depth = 48;

  void visit(const boost::json::value& schema, const std::string& at, int depth) {
    const auto* o = schema.if_object();
    if (!o || depth > max_depth) return;
    if (const auto* mark = o->if_contains("x-llmdlq-pii")) {
      if (mark->is_string() && !mark->get_string().empty()) {
        add(at, std::string(mark->get_string()));
      } else if (mark->is_bool() && mark->get_bool()) {
        add(at, "pii");
      }
      if (!at.empty() && (mark->is_string() || (mark->is_bool() && mark->get_bool()))) return;
    }
    if (const auto* properties = o->if_contains("properties"); properties && properties->is_object()) {
      for (const auto& [name, sub] : properties->get_object()) visit(sub, at + "/" + escape(name), depth + 1);
    }
    for (std::string_view any : {"additionalProperties", "patternProperties", "items", "prefixItems"}) {
      const auto* sub = o->if_contains(any);
      if (!sub) continue;
      if (any == "patternProperties" && sub->is_object()) {
        for (const auto& [pattern, s] : sub->get_object()) visit(s, at + "/*", depth + 1);
      } else if (any == "prefixItems" && sub->is_array()) {
        for (const auto& s : sub->get_array()) visit(s, at + "/*", depth + 1);
      } else {
        visit(*sub, at + "/*", depth + 1);
      }
    }
    for (std::string_view combined : {"allOf", "anyOf", "oneOf"}) {
      if (const auto* list = o->if_contains(combined); list && list->is_array()) {
        for (const auto& s : list->get_array()) visit(s, at, depth + 1);
      }
    }
    for (std::string_view branch : {"if", "then", "else", "not"}) {
      if (const auto* s = o->if_contains(branch)) visit(*s, at, depth + 1);
    }
    if (const auto* ref = o->if_contains("$ref"); ref && ref->is_string()) {
      const std::string_view target = ref->get_string();
      if (target.starts_with("#")) {
        if (const auto* resolved = resolve(target.substr(1))) visit(*resolved, at, depth + 1);
      }
    }
  }

  // A local reference's target (`#/$defs/card`), or nothing.
  [[nodiscard]] const boost::json::value* resolve(std::string_view pointer) const {
    if (pointer.empty()) return &root_;
    if (!pointer.starts_with("/")) return nullptr;
    const boost::json::value* at = &root_;
    for (const auto& token : pointer_tokens(pointer)) {
      const auto* o = at->if_object();
      if (!o) return nullptr;
      at = o->if_contains(token);
      if (!at) return nullptr;
    }
    return at;
  }

  static std::string escape(std::string_view name) {
    std::string out;
    for (const char c : name) {
      if (c == '~') {
        out += "~0";
      } else if (c == '/') {
        out += "~1";
      } else {
        out += c;
      }
    }
    return out;
  }

  void add(const std::string& pointer, std::string label) {
    if (pointer.empty()) return;  // the whole document: the detectors already cover it
    for (const auto& p : found_) {
      if (p.pointer == pointer) return;
    }
    found_.push_back({pointer, std::move(label)});
  }

  const boost::json::value& root_;
  std::vector<pii_path> found_;
};

/// The pointer patterns of the properties `schema` marks with `x-llmdlq-pii`.
inline std::vector<pii_path> pii_annotated_paths(const boost::json::value& schema) {
  return pii_annotation_walk(schema).run();
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
