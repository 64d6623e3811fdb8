// SPDX-License-Identifier: MIT
// Finds the properties a schema marks `x-llmdlq-pii`, as pointer patterns
// into the documents it describes.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/span_locator.hpp"
#include "llmdlq/pii_path.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

class pii_annotation_walk {
 public:
  explicit pii_annotation_walk(const boost::json::value& root) : root_(root) {}

  std::vector<pii_path> run() {
    // A schema that marks nothing (most) is not walked; one that does is
    // walked for at most a fixed number of visits per schema object in it:
    // references that fan out (two `{"$ref": "#"}` in one schema) would
    // otherwise give exponentially many paths.
    const std::size_t objects = marked_objects(root_);
    if (found_marks_ == 0) return {};
    visits_left_ = visits_per_object * objects + visits_per_object;
    walk();
    return std::move(found_);
  }

 private:
  // Subschemas nest and `$ref`s chain at most this deep (a cycle stops here too).
  static constexpr int max_depth = 48;
  static constexpr std::size_t visits_per_object = 16;

  // The objects in `v`, counting the `x-llmdlq-pii` marks on the way (iteratively: no recursion on input).
  std::size_t marked_objects(const boost::json::value& v) {
    std::size_t objects = 0;
    std::vector<const boost::json::value*> pending{&v};
    while (!pending.empty()) {
      const auto* at = pending.back();
      pending.pop_back();
      if (const auto* o = at->if_object()) {
        ++objects;
        found_marks_ += o->contains("x-llmdlq-pii");
        for (const auto& member : *o) pending.push_back(&member.value());
      } else if (const auto* a = at->if_array()) {
        for (const auto& element : *a) pending.push_back(&element);
      }
    }
    return objects;
  }

  // Breadth first, so that a bounded walk finds the marks nearest the root.
  void walk() {
    std::deque<step> pending{{&root_, "", 0}};
    while (!pending.empty() && visits_left_ > 0) {
      const step s = std::move(pending.front());
      pending.pop_front();
      const auto* o = s.schema->if_object();
      if (!o || s.depth > max_depth) continue;
      --visits_left_;
      const auto next = [&](const boost::json::value& sub, std::string at) {
        pending.push_back({&sub, std::move(at), s.depth + 1});
      };
      if (const auto* mark = o->if_contains("x-llmdlq-pii")) {
        if (mark->is_string() && !mark->get_string().empty()) {
          add(s.at, std::string(mark->get_string()));
        } else if (mark->is_bool() && mark->get_bool()) {
          add(s.at, "pii");
        }
        if (!s.at.empty() && (mark->is_string() || (mark->is_bool() && mark->get_bool()))) continue;
      }
      if (const auto* properties = o->if_contains("properties"); properties && properties->is_object()) {
        for (const auto& [name, sub] : properties->get_object()) next(sub, s.at + "/" + escape(name));
      }
      for (std::string_view any : {"additionalProperties", "patternProperties", "items", "prefixItems"}) {
        const auto* sub = o->if_contains(any);
        if (!sub) continue;
        if (any == "patternProperties" && sub->is_object()) {
          for (const auto& [pattern, each] : sub->get_object()) next(each, s.at + "/*");
        } else if (any == "prefixItems" && sub->is_array()) {
          for (const auto& each : sub->get_array()) next(each, s.at + "/*");
        } else {
          next(*sub, s.at + "/*");
        }
      }
      for (std::string_view combined : {"allOf", "anyOf", "oneOf"}) {
        if (const auto* list = o->if_contains(combined); list && list->is_array()) {
          for (const auto& each : list->get_array()) next(each, s.at);
        }
      }
      for (std::string_view branch : {"if", "then", "else", "not"}) {
        if (const auto* each = o->if_contains(branch)) next(*each, s.at);
      }
      if (const auto* ref = o->if_contains("$ref"); ref && ref->is_string()) {
        const std::string_view target = ref->get_string();
        if (target.starts_with("#")) {
          if (const auto* resolved = resolve(target.substr(1))) next(*resolved, s.at);
        }
      }
    }
  }

  struct step {
    const boost::json::value* schema;
    std::string at;
    int depth;
  };

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
    if (!pointers_.insert(pointer).second) return;
    found_.push_back({pointer, std::move(label)});
  }

  const boost::json::value& root_;
  std::vector<pii_path> found_;
  std::unordered_set<std::string> pointers_;  // of found_
  std::size_t found_marks_ = 0;
  std::size_t visits_left_ = 0;
};

/// The pointer patterns of the properties `schema` marks with `x-llmdlq-pii`.
inline std::vector<pii_path> pii_annotated_paths(const boost::json::value& schema) {
  return pii_annotation_walk(schema).run();
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
