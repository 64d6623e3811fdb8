// SPDX-License-Identifier: MIT
// Compiles JSON Schema documents into a detail::program: indexes identifiers
// ($id, $anchor, $dynamicAnchor), resolves references, checks every keyword's
// value and lays the subschemas out as nodes. The keywords are read by family,
// one file each in impl/schema_compiler/, included at the end.
#pragma once

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/detail/metaschemas.hpp"
#include "llmdlq/detail/pii_annotations.hpp"
#include "llmdlq/detail/schema_program.hpp"
#include "llmdlq/detail/uri.hpp"
#include "llmdlq/schema.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// The vocabularies in force for a document, from its meta-schema.
enum vocabulary : std::uint8_t {
  applicator_vocabulary = 1,
  unevaluated_vocabulary = 2,
  validation_vocabulary = 4,
  format_assertion_vocabulary = 8,
};
inline constexpr std::uint8_t default_vocabularies =
    applicator_vocabulary | unevaluated_vocabulary | validation_vocabulary;

inline constexpr std::string_view draft_2020_12 = "https://json-schema.org/draft/2020-12/schema";

class schema_compiler {
 public:
  explicit schema_compiler(const compile_options& options) : options_(options) {
    prog_ = std::make_shared<program>();
    prog_->options = options;
  }

  expected<std::shared_ptr<const program>, schema_error> run(boost::json::value root) {
    const std::string root_uri{without_fragment(options_.base_uri)};
    prog_->fingerprint = sha256_hex(boost::json::serialize(root));
    prog_->pii_paths = pii_annotated_paths(root);
    const std::uint32_t doc = add_document(root_uri, std::move(root));
    if (!error_) prog_->root = compile_at(doc, "", 0);
    finish_dynamic_anchors();
    if (!error_) mark_annotating_nodes();
    if (!error_) check_in_place_cycles();
    for (auto& keys : prog_->key_tables) keys.resolve(prog_->nodes);
    if (error_) return unexpected(std::move(*error_));
    return std::shared_ptr<const program>(std::move(prog_));
  }

 private:
  struct document {
    std::string uri;
    boost::json::value json;
    std::uint8_t vocabularies = default_vocabularies;
  };
  struct location {
    std::uint32_t doc = 0;
    std::string pointer;
  };
  struct anchor {
    location where;
    bool dynamic = false;
  };

  // ---- errors ------------------------------------------------------------

  std::string describe_location(std::uint32_t doc, std::string_view pointer) const {
    if (doc == 0) return std::string(pointer);
    return docs_[doc].uri + "#" + std::string(pointer);
  }

  void set_error(schema_errc code, std::uint32_t doc, std::string_view pointer, std::string message) {
    if (error_) return;
    error_ = schema_error{code, describe_location(doc, pointer), std::move(message), std::nullopt};
  }

  // ---- documents and identifiers -----------------------------------------

  std::uint32_t add_document(std::string uri, boost::json::value json) {
    const auto doc = static_cast<std::uint32_t>(docs_.size());
    docs_.push_back(document{uri, std::move(json), default_vocabularies});
    resources_.emplace(uri, location{doc, ""});
    read_dialect(doc);
    std::string pointer;
    index(doc, docs_[doc].json, pointer, uri, 0);
    return doc;
  }

  // Sets the document's vocabularies from its `$schema`.
  void read_dialect(std::uint32_t doc) {
    const auto* object = docs_[doc].json.if_object();
    if (!object) return;
    const auto it = object->find("$schema");
    if (it == object->end()) return;
    if (!it->value().is_string()) {
      set_error(schema_errc::invalid_keyword, doc, "/$schema", "$schema must be a URI string");
      return;
    }
    const std::string meta_uri{without_fragment(std::string_view(it->value().get_string()))};
    if (meta_uri == draft_2020_12 || is_older_draft(meta_uri)) return;
    const auto meta = resources_.find(meta_uri) != resources_.end() ? std::optional<std::uint32_t>(resources_[meta_uri].doc)
                                                                    : load(meta_uri);
    if (!meta) return;  // an unknown meta-schema: assume the standard vocabularies
    const auto* meta_object = docs_[*meta].json.if_object();
    if (!meta_object) return;
    const auto vocab = meta_object->find("$vocabulary");
    if (vocab == meta_object->end() || !vocab->value().is_object()) return;
    std::uint8_t mask = 0;
    for (const auto& [name, required] : vocab->value().get_object()) {
      const std::string_view uri(name.data(), name.size());
      const std::string_view prefix = "https://json-schema.org/draft/2020-12/vocab/";
      const std::string_view known = uri.starts_with(prefix) ? uri.substr(prefix.size()) : std::string_view();
      if (known == "applicator") {
        mask |= applicator_vocabulary;
      } else if (known == "unevaluated") {
        mask |= unevaluated_vocabulary;
      } else if (known == "validation") {
        mask |= validation_vocabulary;
      } else if (known == "format-assertion") {
        mask |= format_assertion_vocabulary;
      } else if (known.empty() && required.is_bool() && required.get_bool()) {
        set_error(schema_errc::unsupported_vocabulary, doc, "/$schema",
                  fmt::format("the meta-schema requires the unknown vocabulary {}", uri));
        return;
      }
    }
    docs_[doc].vocabularies = mask;
  }

  static bool is_older_draft(std::string_view uri) {
    return uri == "https://json-schema.org/draft/2019-09/schema" ||
           uri == "http://json-schema.org/draft-07/schema" ||
           uri == "http://json-schema.org/draft-06/schema" ||
           uri == "http://json-schema.org/draft-04/schema";
  }

  // Finds a document by URI: registered remotes, the resolver, then the
  // built-in meta-schemas.
  std::optional<std::uint32_t> load(const std::string& uri) {
    if (const auto it = resources_.find(uri); it != resources_.end()) return it->second.doc;
    std::optional<std::string> text;
    if (const auto it = options_.remotes.find(uri); it != options_.remotes.end()) {
      text = it->second;
    } else if (options_.resolver) {
      text = options_.resolver(uri);
    }
    if (!text) {
      for (const auto& builtin : builtin_schemas) {
        if (builtin.uri == uri) text = std::string(builtin.json);
      }
    }
    if (!text) return std::nullopt;
    auto parsed = parse_value(*text);
    if (!parsed) {
      error_ = schema_error{schema_errc::invalid_json, uri,
                            fmt::format("the schema {} is not JSON: {}", uri, parsed.error().message),
                            parsed.error()};
      return std::nullopt;
    }
    return add_document(uri, std::move(*parsed));
  }

  std::string location_key(std::uint32_t doc, std::string_view pointer) const {
    std::string key = std::to_string(doc);
    key.push_back(':');
    key.append(pointer);
    return key;
  }

  // Records identifiers and base URIs of every subschema reachable through
  // applicator keywords (not through unknown keywords, `const` or `enum`).
  void index(std::uint32_t doc, const boost::json::value& schema, std::string& pointer,
             std::string base, std::size_t depth) {
    const auto* object = schema.if_object();
    if (!object || error_) return;
    if (depth > options_.max_nesting) {
      set_error(schema_errc::too_complex, doc, pointer,
                fmt::format("subschemas nest deeper than {}", options_.max_nesting));
      return;
    }
    if (const auto it = object->find("$id"); it != object->end() && it->value().is_string()) {
      const std::string_view id(it->value().get_string());
      const std::string resolved = resolve_uri(base, id);
      if (const auto hash = resolved.find('#'); hash != std::string::npos && hash + 1 != resolved.size()) {
        set_error(schema_errc::invalid_keyword, doc, pointer + "/$id",
                  "$id must not have a fragment; use $anchor to name a subschema");
        return;
      }
      base = std::string(without_fragment(resolved));
      resources_.insert_or_assign(base, location{doc, pointer});
    }
    bases_.emplace(location_key(doc, pointer), base);
    for (const std::string_view keyword : {"$anchor", "$dynamicAnchor"}) {
      const auto it = object->find(keyword);
      if (it == object->end() || !it->value().is_string()) continue;
      const std::string name(it->value().get_string());
      const bool dynamic = keyword == "$dynamicAnchor";
      auto& entry = anchors_[base + "#" + name];
      entry.where = location{doc, pointer};
      entry.dynamic = entry.dynamic || dynamic;
      if (dynamic) dynamic_anchors_.push_back({base, name, location{doc, pointer}});
    }

    const std::size_t mark = pointer.size();
    for (const auto& [key, value] : *object) {
      const std::string_view keyword(key.data(), key.size());
      append_pointer_token(pointer, keyword);
      if (is_schema_array_keyword(keyword) && value.is_array()) {
        const auto& array = value.get_array();
        for (std::size_t i = 0; i < array.size(); ++i) {
          const std::size_t inner = pointer.size();
          append_pointer_token(pointer, i);
          index(doc, array[i], pointer, base, depth + 1);
          pointer.resize(inner);
        }
      } else if (is_schema_keyword(keyword)) {
        index(doc, value, pointer, base, depth + 1);
      } else if (is_schema_map_keyword(keyword) && value.is_object()) {
        for (const auto& [name, subschema] : value.get_object()) {
          const std::size_t inner = pointer.size();
          append_pointer_token(pointer, std::string_view(name.data(), name.size()));
          index(doc, subschema, pointer, base, depth + 1);
          pointer.resize(inner);
        }
      }
      pointer.resize(mark);
    }
  }

  static bool is_schema_keyword(std::string_view k) {
    return k == "additionalProperties" || k == "propertyNames" || k == "items" || k == "contains" ||
           k == "not" || k == "if" || k == "then" || k == "else" || k == "unevaluatedItems" ||
           k == "unevaluatedProperties" || k == "additionalItems" || k == "contentSchema";
  }
  static bool is_schema_map_keyword(std::string_view k) {
    return k == "properties" || k == "patternProperties" || k == "$defs" || k == "definitions" ||
           k == "dependentSchemas" || k == "dependencies";
  }
  static bool is_schema_array_keyword(std::string_view k) {
    return k == "allOf" || k == "anyOf" || k == "oneOf" || k == "prefixItems" || k == "items";
  }

  // The base URI in force at a location: recorded by index(), or that of the
  // nearest indexed ancestor (for locations inside unknown keywords).
  std::string base_at(std::uint32_t doc, std::string pointer) const {
    for (;;) {
      if (const auto it = bases_.find(location_key(doc, pointer)); it != bases_.end()) return it->second;
      const auto slash = pointer.rfind('/');
      if (slash == std::string::npos) return docs_[doc].uri;
      pointer.resize(slash);
    }
  }

  std::uint32_t resource_index(const std::string& uri) {
    const auto [it, inserted] = resource_ids_.emplace(uri, static_cast<std::uint32_t>(prog_->resources.size()));
    if (inserted) prog_->resources.push_back(schema_resource{uri, {}});
    return it->second;
  }

  std::uint32_t anchor_name_id(const std::string& name) {
    return anchor_names_.emplace(name, static_cast<std::uint32_t>(anchor_names_.size())).first->second;
  }

  // ---- references ----------------------------------------------------------

  struct resolved_target {
    location where;
    std::string resource_uri;
    std::string fragment;  // empty, a JSON Pointer, or an anchor name
  };

  // Resolves `ref`, the value of `keyword` at `at`, against the base URI there
  // (references.ipp).
  std::optional<resolved_target> resolve_reference(std::uint32_t doc, const std::string& at,
                                                   std::string_view keyword, std::string_view ref);

  // ---- keyword values, shared by the readers ---------------------------------

  bool read_count(std::uint32_t doc, const std::string& at, std::string_view keyword,
                  const boost::json::value& v, std::uint64_t& out) {
    const std::string where = at + "/" + std::string(keyword);
    if (v.is_int64() && v.get_int64() >= 0) return out = static_cast<std::uint64_t>(v.get_int64()), true;
    if (v.is_uint64()) return out = v.get_uint64(), true;
    if (v.is_double() && v.get_double() >= 0 && std::trunc(v.get_double()) == v.get_double()) {
      out = v.get_double() >= 1.8e19 ? no_limit : static_cast<std::uint64_t>(v.get_double());
      return true;
    }
    set_error(schema_errc::invalid_keyword, doc, where, fmt::format("{} must be a non-negative integer", keyword));
    return false;
  }

  // The presence bit for `name` in the node's key table.
  std::uint32_t presence_bit(key_table& keys, node& n, std::string_view name) {
    auto& entry = keys.at(name);
    if (entry.bit == no_index) entry.bit = n.presence_bits++;
    return entry.bit;
  }

  bool read_string_array(std::uint32_t doc, const std::string& where, const boost::json::value& v,
                         std::vector<std::string>& out) {
    if (!v.is_array()) {
      set_error(schema_errc::invalid_keyword, doc, where, "must be an array of strings");
      return false;
    }
    for (const auto& item : v.get_array()) {
      if (!item.is_string()) {
        set_error(schema_errc::invalid_keyword, doc, where, "must be an array of strings");
        return false;
      }
      std::string name(item.get_string());
      if (std::find(out.begin(), out.end(), name) != out.end()) {
        set_error(schema_errc::invalid_keyword, doc, where, fmt::format("lists '{}' twice", name));
        return false;
      }
      out.push_back(std::move(name));
    }
    return true;
  }

  std::optional<std::uint32_t> compile_regex(std::uint32_t doc, const std::string& where,
                                             std::string_view pattern) {
    if (const auto it = regex_ids_.find(std::string(pattern)); it != regex_ids_.end()) return it->second;
    auto regex = ecma_regex::compile(pattern);
    if (!regex) {
      set_error(schema_errc::invalid_pattern, doc, where,
                fmt::format("invalid regular expression {} (at offset {}): {}", pattern,
                            regex.error().offset, regex.error().message));
      return std::nullopt;
    }
    const auto id = static_cast<std::uint32_t>(prog_->regexes.size());
    prog_->regexes.push_back(std::move(*regex));
    regex_ids_.emplace(std::string(pattern), id);
    return id;
  }

  // ---- nodes -----------------------------------------------------------------

  node_id compile_child(std::uint32_t doc, const std::string& at, std::string_view keyword,
                        std::size_t depth) {
    std::string pointer = at;
    append_pointer_token(pointer, keyword);
    return compile_at(doc, pointer, depth + 1);
  }

  template <class Token>
  node_id compile_child(std::uint32_t doc, const std::string& at, std::string_view keyword,
                        const Token& token, std::size_t depth) {
    std::string pointer = at;
    append_pointer_token(pointer, keyword);
    append_pointer_token(pointer, token);
    return compile_at(doc, pointer, depth + 1);
  }

  node_span compile_list(std::uint32_t doc, const std::string& at, std::string_view keyword,
                         const boost::json::value& v, std::size_t depth) {
    if (!v.is_array() || v.get_array().empty()) {
      set_error(schema_errc::invalid_keyword, doc, at + "/" + std::string(keyword),
                fmt::format("{} must be a non-empty array of schemas", keyword));
      return {};
    }
    std::vector<node_id> ids;
    for (std::size_t i = 0; i < v.get_array().size() && !error_; ++i) {
      ids.push_back(compile_child(doc, at, keyword, i, depth));
    }
    node_span span{static_cast<std::uint32_t>(prog_->children.size()), static_cast<std::uint32_t>(ids.size())};
    prog_->children.insert(prog_->children.end(), ids.begin(), ids.end());
    return span;
  }

  node_id compile_at(std::uint32_t doc, const std::string& pointer, std::size_t depth) {
    if (error_) return no_node;
    const std::string key = location_key(doc, pointer);
    if (const auto it = compiled_.find(key); it != compiled_.end()) return it->second;
    if (depth > options_.max_nesting) {
      set_error(schema_errc::too_complex, doc, pointer,
                fmt::format("subschemas nest deeper than {}", options_.max_nesting));
      return no_node;
    }
    boost::json::error_code ec;
    const boost::json::value* found = docs_[doc].json.find_pointer(pointer, ec);
    if (!found) {
      set_error(schema_errc::unresolved_reference, doc, pointer, "no schema at this location");
      return no_node;
    }
    const boost::json::value& schema = *found;
    const auto id = static_cast<node_id>(prog_->nodes.size());
    prog_->nodes.emplace_back();
    compiled_.emplace(key, id);
    node n;
    n.resource = resource_index(base_at(doc, pointer));
    if (schema.is_bool()) {
      n.flags = schema.get_bool() ? 0u : std::uint32_t{always_false};
    } else if (!schema.is_object()) {
      set_error(schema_errc::invalid_keyword, doc, pointer, "a schema must be an object or a boolean");
    } else {
      compile_object(doc, pointer, schema.get_object(), n, depth);
    }
    prog_->nodes[id] = std::move(n);
    return id;
  }

  // The schema object compile_object() reads, and the node it fills in.
  struct schema_site {
    std::uint32_t doc;
    const std::string& at;
    const boost::json::object& schema;
    node& n;
    key_table& keys;
    std::size_t depth;

    const boost::json::value* get(std::string_view keyword) const {
      const auto it = schema.find(keyword);
      return it == schema.end() ? nullptr : &it->value();
    }
  };

  // Sets an invalid_keyword error at `keyword`; returns false, for the reader to return.
  bool invalid(const schema_site& site, std::string_view keyword, std::string message) {
    set_error(schema_errc::invalid_keyword, site.doc, site.at + "/" + std::string(keyword), std::move(message));
    return false;
  }

  // Reads the keywords of the vocabularies in force, family by family, and
  // stops at the first error. The order is fixed: it decides the node and
  // regex numbering, the presence bits and which error is reported.
  void compile_object(std::uint32_t doc, const std::string& at, const boost::json::object& schema,
                      node& n, std::size_t depth) {
    const std::uint8_t vocab = docs_[doc].vocabularies;
    const bool applicators = vocab & applicator_vocabulary;
    const bool validation = vocab & validation_vocabulary;
    const bool unevaluated = vocab & unevaluated_vocabulary;
    const bool assert_format = options_.format_assertion || (vocab & format_assertion_vocabulary);

    // Properties enter the key table first, in the schema's order: documents
    // follow that order, and the evaluator's lookup tries the next entry first.
    key_table keys;
    schema_site site{doc, at, schema, n, keys, depth};
    if (const auto* v = site.get("properties"); v && v->is_object() && applicators) {
      for (const auto& member : v->get_object()) keys.at(std::string_view(member.key().data(), member.key().size()));
    }

    if (!read_references(site)) return;
    if (validation && !(read_type_enum_const(site) && read_numeric(site) && read_string_assertions(site) &&
                        read_array_assertions(site) && read_object_assertions(site))) {
      return;
    }
    if (!read_content_rules(site)) return;
    if (assert_format && !read_format(site)) return;
    if (applicators && !read_applicators(site)) return;
    if (unevaluated) read_unevaluated(site);

    if (n.presence_bits <= 64) {
      for (const auto& [bit, name] : n.required) n.required_mask |= std::uint64_t(1) << bit;
    }
    if (!keys.empty()) {
      keys.seal();
      n.keys = static_cast<std::uint32_t>(prog_->key_tables.size());
      prog_->key_tables.push_back(std::move(keys));
    }
  }

  // ---- keyword readers, one file per family in impl/schema_compiler/ ---------
  // Each reads its keywords at `site` into the node; false means an error is
  // set and compile_object() stops.

  bool read_references(schema_site& site);  // references.ipp: $ref, $dynamicRef
  bool read_type_enum_const(schema_site& site);  // type_enum_const.ipp
  bool read_numeric(schema_site& site);  // numeric.ipp
  bool read_number(std::uint32_t doc, const std::string& at, std::string_view keyword,
                   const boost::json::value& v, json_number& out);
  static void set_interval(node& n);
  bool read_string_assertions(schema_site& site);  // string.ipp
  bool read_format(schema_site& site);
  bool read_array_assertions(schema_site& site);  // array.ipp
  bool read_object_assertions(schema_site& site);  // object.ipp
  void add_dependent_required(key_table& keys, node& n, std::string_view trigger,
                              const std::vector<std::string>& names);
  bool read_content_rules(schema_site& site);  // content_rules.ipp: x-dlq-rule
  bool read_applicators(schema_site& site);  // applicator.ipp
  bool read_object_applicators(schema_site& site);
  bool read_array_applicators(schema_site& site);
  void read_in_place_applicators(schema_site& site);
  void read_unevaluated(schema_site& site);  // unevaluated.ipp

  // ---- finishing passes --------------------------------------------------------

  // Compiles every `$dynamicAnchor` of every resource, so that a
  // `$dynamicRef` can land on any of them at run time.
  void finish_dynamic_anchors() {
    if (!prog_->uses_dynamic_scope) return;
    for (std::size_t i = 0; i < dynamic_anchors_.size() && !error_; ++i) {
      const auto entry = dynamic_anchors_[i];  // compiling may load documents and grow the list
      const node_id target = compile_at(entry.where.doc, entry.where.pointer, 0);
      if (error_) return;
      const std::uint32_t resource = resource_index(entry.resource);
      prog_->resources[resource].dynamic_anchors.emplace_back(anchor_name_id(entry.name), target);
    }
  }

  template <class F>
  void for_each_in_place_child(const node& n, F&& f) const {
    if (n.ref != no_node) f(n.ref);
    if (n.dynamic_ref != no_node) f(n.dynamic_ref);
    for (const node_span span : {n.all_of, n.any_of, n.one_of}) {
      for (std::uint32_t i = 0; i < span.count; ++i) f(prog_->children[span.begin + i]);
    }
    for (const node_id child : {n.not_schema, n.if_schema, n.then_schema, n.else_schema}) {
      if (child != no_node) f(child);
    }
    for (const auto& rule : n.dependent_schemas) f(rule.schema);
  }

  // Flags the nodes whose evaluation records evaluated members or items,
  // themselves or through subschemas applied in place; the evaluator tracks
  // annotations only where they can matter.
  void mark_annotating_nodes() {
    auto& nodes = prog_->nodes;
    for (auto& n : nodes) {
      if (n.keys != no_index || !n.pattern_properties.empty() || n.additional_properties != no_node ||
          n.unevaluated_properties != no_node) {
        n.flags |= annotates_properties;
      }
      if (n.prefix_items.count || n.items != no_node || n.contains != no_node ||
          n.unevaluated_items != no_node) {
        n.flags |= annotates_items;
      }
      if (n.dynamic_anchor != no_index) n.flags |= annotates_properties | annotates_items;
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& n : nodes) {
        std::uint32_t inherited = 0;
        for_each_in_place_child(n, [&](node_id child) {
          inherited |= nodes[child].flags & (annotates_properties | annotates_items);
        });
        if ((n.flags | inherited) != n.flags) {
          n.flags |= inherited;
          changed = true;
        }
      }
    }
  }

  // A cycle of in-place applications ({"$ref": "#"}) would never consume
  // the instance: reject it instead of recursing until the depth limit.
  void check_in_place_cycles() {
    const auto& nodes = prog_->nodes;
    std::vector<std::uint8_t> state(nodes.size(), 0);  // 0 new, 1 on the stack, 2 done
    std::vector<std::pair<node_id, std::vector<node_id>>> stack;
    auto children_of = [&](node_id id) {
      std::vector<node_id> out;
      for_each_in_place_child(nodes[id], [&](node_id child) { out.push_back(child); });
      if (nodes[id].dynamic_anchor != no_index) {
        for (const auto& resource : prog_->resources) {
          for (const auto& [name, target] : resource.dynamic_anchors) {
            if (name == nodes[id].dynamic_anchor) out.push_back(target);
          }
        }
      }
      return out;
    };
    for (node_id start = 0; start < nodes.size(); ++start) {
      if (state[start]) continue;
      state[start] = 1;
      stack.emplace_back(start, children_of(start));
      while (!stack.empty()) {
        auto& [id, pending] = stack.back();
        if (pending.empty()) {
          state[id] = 2;
          stack.pop_back();
          continue;
        }
        const node_id next = pending.back();
        pending.pop_back();
        if (state[next] == 1) {
          error_ = schema_error{schema_errc::infinite_recursion, "",
                                "subschemas refer to each other in place, in a loop that never "
                                "descends into the instance",
                                std::nullopt};
          return;
        }
        if (state[next] == 0) {
          state[next] = 1;
          stack.emplace_back(next, children_of(next));
        }
      }
    }
  }

  struct dynamic_anchor_entry {
    std::string resource;
    std::string name;
    location where;
  };

  const compile_options& options_;
  std::shared_ptr<program> prog_;
  std::optional<schema_error> error_;
  std::deque<document> docs_;  // a deque: compiling holds references into documents while loading more
  std::unordered_map<std::string, location> resources_;
  std::unordered_map<std::string, anchor> anchors_;
  std::unordered_map<std::string, std::string> bases_;
  std::unordered_map<std::string, node_id> compiled_;
  std::unordered_map<std::string, std::uint32_t> resource_ids_;
  std::unordered_map<std::string, std::uint32_t> anchor_names_;
  std::unordered_map<std::string, std::uint32_t> regex_ids_;
  std::vector<dynamic_anchor_entry> dynamic_anchors_;
};

}  // namespace detail
LLMDLQ_END_NAMESPACE

#include "llmdlq/impl/schema_compiler/applicator.ipp"
#include "llmdlq/impl/schema_compiler/array.ipp"
#include "llmdlq/impl/schema_compiler/content_rules.ipp"
#include "llmdlq/impl/schema_compiler/numeric.ipp"
#include "llmdlq/impl/schema_compiler/object.ipp"
#include "llmdlq/impl/schema_compiler/references.ipp"
#include "llmdlq/impl/schema_compiler/string.ipp"
#include "llmdlq/impl/schema_compiler/type_enum_const.ipp"
#include "llmdlq/impl/schema_compiler/unevaluated.ipp"
