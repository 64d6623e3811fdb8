// SPDX-License-Identifier: MIT
// Compiles JSON Schema documents into a detail::program: finds each schema
// resource's draft, indexes identifiers (id/$id, $anchor, $dynamicAnchor,
// $recursiveAnchor), resolves references, checks every keyword's value and
// lays the subschemas out as nodes, each compiled once. The keywords are read
// by family, one file each in impl/schema_compiler/, included at the end.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/detail/schema/forward_plan.hpp"
#include "llmdlq/detail/schema/metaschemas.hpp"
#include "llmdlq/detail/schema/metaschemas_drafts.hpp"
#include "llmdlq/detail/redaction/pii_annotations.hpp"
#include "llmdlq/detail/schema/schema_catalog.hpp"
#include "llmdlq/detail/schema/schema_program.hpp"
#include "llmdlq/detail/schema/union_dispatch.hpp"
#include "llmdlq/detail/schema/uri.hpp"
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
inline constexpr std::uint8_t default_vocabularies = applicator_vocabulary | unevaluated_vocabulary |
                                                     validation_vocabulary;

/// Whether `keyword` is one of draft `d`'s: keywords of other drafts are
/// unknown keywords there, ignored as annotations.
inline bool keyword_in_dialect(std::string_view keyword, dialect d) noexcept {
  const auto from = [&](dialect first) { return d >= first; };
  if (keyword == "const" || keyword == "contains" || keyword == "propertyNames") return from(dialect::draft6);
  if (keyword == "if" || keyword == "then" || keyword == "else") return from(dialect::draft7);
  if (keyword == "$anchor" || keyword == "unevaluatedItems" || keyword == "unevaluatedProperties" ||
      keyword == "dependentRequired" || keyword == "dependentSchemas" || keyword == "minContains" ||
      keyword == "maxContains") {
    return from(dialect::draft2019_09);
  }
  if (keyword == "$recursiveRef" || keyword == "$recursiveAnchor") return d == dialect::draft2019_09;
  if (keyword == "prefixItems" || keyword == "$dynamicRef" || keyword == "$dynamicAnchor") {
    return from(dialect::draft2020_12);
  }
  if (keyword == "additionalItems") return d <= dialect::draft2019_09;
  // `dependencies` split into dependentRequired and dependentSchemas in 2019-09; schemas moving to
  // the newer drafts keep writing it, so it keeps its meaning there (the suites' optional compatibility).
  return true;
}

/// Up to draft 7, a `$ref` replaces the schema that holds it: its siblings are ignored.
inline bool ref_overrides_siblings(dialect d) noexcept { return d <= dialect::draft7; }

/// The keyword that names a schema resource: `id` in draft 4, `$id` after.
inline std::string_view id_keyword(dialect d) noexcept { return d == dialect::draft4 ? "id" : "$id"; }

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
    prog_->root_dialect = scope_at(doc, "").draft;
    if (!error_) prog_->root = compile_with_references(doc, "");
    finish_dynamic_anchors();
    finish_recursive_anchors();
    if (!error_) mark_annotating_nodes();
    if (!error_) check_in_place_cycles();
    if (!error_) mark_leaf_item_arrays();
    for (auto& keys : prog_->key_tables) keys.resolve(prog_->nodes);
    if (!error_) bound_admitted_kinds(*prog_);
    if (!error_) plan_union_dispatch(*prog_);
    if (!error_) plan_kind_dispatch(*prog_);
    if (!error_) plan_forward_pass(*prog_);
    prog_->dynamic_anchor_names = static_cast<std::uint32_t>(anchor_names_.size());
    if (error_) return unexpected(std::move(*error_));
    return std::shared_ptr<const program>(std::move(prog_));
  }

 private:
  struct document {
    std::string uri;
    boost::json::value json;
  };
  // What is in force at a location: its base URI, its draft and vocabularies.
  struct scope {
    std::string base;
    dialect draft = dialect::draft2020_12;
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
    docs_.push_back(document{uri, std::move(json)});
    resources_.emplace(uri, location{doc, ""});
    std::string pointer;
    index(doc, docs_[doc].json, pointer, scope{uri, options_.default_dialect, default_vocabularies}, 0);
    return doc;
  }

  // The draft and vocabularies of a schema resource whose `$schema` is `meta`
  // (at `pointer`, for errors); `inherited` for a resource without one.
  scope read_dialect(std::uint32_t doc, const std::string& pointer, const boost::json::value* meta, scope inherited) {
    if (!meta) return inherited;
    if (!meta->is_string()) {
      set_error(schema_errc::invalid_keyword, doc, pointer + "/$schema", "$schema must be a URI string");
      return inherited;
    }
    const std::string meta_uri{without_fragment(std::string_view(meta->get_string()))};
    if (const auto known = dialect_of_meta_schema(meta_uri)) {
      inherited.draft = *known;
      inherited.vocabularies = default_vocabularies;
      return inherited;
    }
    // A meta-schema of one's own: its own `$schema` gives the draft, its `$vocabulary` the vocabularies.
    const auto found = resources_.find(meta_uri);
    const auto meta_doc = found != resources_.end() ? std::optional<std::uint32_t>(found->second.doc) : load(meta_uri);
    if (error_) return inherited;
    if (!meta_doc) {
      if (!options_.allow_unknown_dialect) {
        set_error(schema_errc::unknown_dialect, doc, pointer + "/$schema",
                  fmt::format("$schema names {}, which is no JSON Schema draft and no document registered "
                              "or resolved (compile_options::allow_unknown_dialect compiles it as {})",
                              meta_uri, to_string(options_.default_dialect)));
      } else {
        prog_->warnings.push_back(fmt::format("{}: $schema names the unknown meta-schema {}; compiled as {}",
                                              describe_location(doc, pointer + "/$schema"), meta_uri,
                                              to_string(options_.default_dialect)));
      }
      return inherited;
    }
    inherited.draft = scope_at(*meta_doc, "").draft;
    inherited.vocabularies = default_vocabularies;
    const auto* meta_object = docs_[*meta_doc].json.if_object();
    const auto vocab = meta_object ? meta_object->find("$vocabulary") : nullptr;
    if (!meta_object || vocab == meta_object->end() || !vocab->value().is_object() ||
        inherited.draft < dialect::draft2019_09) {
      return inherited;
    }
    std::uint8_t mask = 0;
    for (const auto& [name, required] : vocab->value().get_object()) {
      const std::string_view uri(name.data(), name.size());
      std::string_view known;
      for (const std::string_view prefix :
           {"https://json-schema.org/draft/2020-12/vocab/", "https://json-schema.org/draft/2019-09/vocab/"}) {
        if (uri.starts_with(prefix)) known = uri.substr(prefix.size());
      }
      if (known == "applicator") {
        mask |= applicator_vocabulary;
      } else if (known == "unevaluated") {
        mask |= unevaluated_vocabulary;
      } else if (known == "validation") {
        mask |= validation_vocabulary;
      } else if (known == "format-assertion") {
        mask |= format_assertion_vocabulary;
      } else if (known.empty() && required.is_bool() && required.get_bool()) {
        set_error(schema_errc::unsupported_vocabulary, doc, pointer + "/$schema",
                  fmt::format("the meta-schema requires the unknown vocabulary {}", uri));
        return inherited;
      }
    }
    // 2019-09 has no vocabulary of its own for the unevaluated keywords: the applicator one holds them.
    if (inherited.draft == dialect::draft2019_09 && (mask & applicator_vocabulary)) mask |= unevaluated_vocabulary;
    inherited.vocabularies = mask;
    return inherited;
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
    if (!text) text = catalog_.find(uri);
    if (!text) {
      for (const auto& builtin : builtin_schemas) {
        if (builtin.uri == uri) text = std::string(builtin.json);
      }
      for (const auto& builtin : draft_builtin_schemas) {
        if (builtin.uri == uri) text = std::string(builtin.json);
      }
    }
    if (!text) return std::nullopt;
    auto parsed = parse_value(*text);
    if (!parsed) {
      error_ = schema_error{schema_errc::invalid_json, uri,
                            fmt::format("the schema {} is not JSON: {}", uri, parsed.error().message), parsed.error()};
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

  // Records identifiers, base URIs and drafts of every subschema reachable
  // through applicator keywords (not through unknown keywords, `const` or `enum`).
  void index(std::uint32_t doc, const boost::json::value& schema, std::string& pointer, scope in_force,
             std::size_t depth) {
    const auto* object = schema.if_object();
    if (!object || error_) return;
    if (depth > options_.max_nesting) {
      set_error(schema_errc::too_complex, doc, pointer,
                fmt::format("subschemas nest deeper than {}", options_.max_nesting));
      return;
    }
    const auto member = [&](std::string_view keyword) -> const boost::json::value* {
      const auto it = object->find(keyword);
      return it == object->end() ? nullptr : &it->value();
    };
    // `$schema` where a resource starts: the document's root, or a subschema with its own identifier.
    const auto* meta = member("$schema");
    if (meta && (depth == 0 || member("$id") || member("id"))) in_force = read_dialect(doc, pointer, meta, in_force);
    if (error_) return;
    const dialect d = in_force.draft;
    const auto* id = member(id_keyword(d));
    if (id && id->is_string() && !(ref_overrides_siblings(d) && member("$ref"))) {
      const std::string resolved = resolve_uri(in_force.base, std::string_view(id->get_string()));
      const auto hash = resolved.find('#');
      const bool named = hash != std::string::npos && hash + 1 != resolved.size();
      if (named && d >= dialect::draft2019_09) {
        set_error(schema_errc::invalid_keyword, doc, pointer + "/" + std::string(id_keyword(d)),
                  "$id must not have a fragment; use $anchor to name a subschema");
        return;
      }
      const std::string base{without_fragment(resolved)};
      // Up to draft 7, an identifier with a fragment ("#name") names the subschema, as $anchor does later.
      if (named) anchors_[base + resolved.substr(hash)].where = location{doc, pointer};
      if (!named || base != in_force.base) {
        in_force.base = base;
        resources_.insert_or_assign(base, location{doc, pointer});
      }
    }
    scopes_.emplace(location_key(doc, pointer), in_force);
    const std::string& base = in_force.base;
    for (const std::string_view keyword : {"$anchor", "$dynamicAnchor"}) {
      if (!keyword_in_dialect(keyword, d)) continue;
      const auto* value = member(keyword);
      if (!value || !value->is_string()) continue;
      const std::string name(value->get_string());
      const bool dynamic = keyword == "$dynamicAnchor";
      auto& entry = anchors_[base + "#" + name];
      entry.where = location{doc, pointer};
      entry.dynamic = entry.dynamic || dynamic;
      if (dynamic) dynamic_anchors_.push_back({base, name, location{doc, pointer}});
    }
    if (const auto* value = member("$recursiveAnchor");
        value && keyword_in_dialect("$recursiveAnchor", d) && *value == true) {
      recursive_anchors_.push_back({base, {}, location{doc, pointer}});
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
          index(doc, array[i], pointer, in_force, depth + 1);
          pointer.resize(inner);
        }
      } else if (is_schema_keyword(keyword)) {
        index(doc, value, pointer, in_force, depth + 1);
      } else if (is_schema_map_keyword(keyword) && value.is_object()) {
        for (const auto& [name, subschema] : value.get_object()) {
          const std::size_t inner = pointer.size();
          append_pointer_token(pointer, std::string_view(name.data(), name.size()));
          index(doc, subschema, pointer, in_force, depth + 1);
          pointer.resize(inner);
        }
      }
      pointer.resize(mark);
    }
  }

  static bool is_schema_keyword(std::string_view k) {
    return k == "additionalProperties" || k == "propertyNames" || k == "items" || k == "contains" || k == "not" ||
           k == "if" || k == "then" || k == "else" || k == "unevaluatedItems" || k == "unevaluatedProperties" ||
           k == "additionalItems" || k == "contentSchema";
  }
  static bool is_schema_map_keyword(std::string_view k) {
    return k == "properties" || k == "patternProperties" || k == "$defs" || k == "definitions" ||
           k == "dependentSchemas" || k == "dependencies";
  }
  static bool is_schema_array_keyword(std::string_view k) {
    return k == "allOf" || k == "anyOf" || k == "oneOf" || k == "prefixItems" || k == "items";
  }

  // What is in force at a location: recorded by index(), or that of the
  // nearest indexed ancestor (for locations inside unknown keywords).
  scope scope_at(std::uint32_t doc, std::string pointer) const {
    for (;;) {
      if (const auto it = scopes_.find(location_key(doc, pointer)); it != scopes_.end()) return it->second;
      const auto slash = pointer.rfind('/');
      if (slash == std::string::npos) return scope{docs_[doc].uri, options_.default_dialect, default_vocabularies};
      pointer.resize(slash);
    }
  }
  std::string base_at(std::uint32_t doc, const std::string& pointer) const { return scope_at(doc, pointer).base; }

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
    std::string fragment;    // empty, a JSON Pointer, or an anchor name
    std::string unresolved;  // why the target does not exist; empty when it does
  };

  // Resolves `ref`, the value of `keyword` at `at`, against the base URI there
  // (references.ipp).
  std::optional<resolved_target> resolve_reference(std::uint32_t doc, const std::string& at, std::string_view keyword,
                                                   std::string_view ref);

  // ---- keyword values, shared by the readers ---------------------------------

  bool read_count(std::uint32_t doc, const std::string& at, std::string_view keyword, const boost::json::value& v,
                  std::uint64_t& out) {
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

  std::optional<std::uint32_t> compile_regex(std::uint32_t doc, const std::string& where, std::string_view pattern) {
    if (const auto it = regex_ids_.find(std::string(pattern)); it != regex_ids_.end()) return it->second;
    auto regex = ecma_regex::compile(pattern, options_.pattern_syntax);
    if (!regex) {
      set_error(schema_errc::invalid_pattern, doc, where,
                fmt::format("invalid regular expression {} (at offset {}): {}", pattern, regex.error().offset,
                            regex.error().message));
      return std::nullopt;
    }
    const auto id = static_cast<std::uint32_t>(prog_->regexes.size());
    prog_->regexes.push_back(std::move(*regex));
    regex_ids_.emplace(std::string(pattern), id);
    return id;
  }

  // ---- nodes -----------------------------------------------------------------

  node_id compile_child(std::uint32_t doc, const std::string& at, std::string_view keyword, std::size_t depth) {
    std::string pointer = at;
    append_pointer_token(pointer, keyword);
    return compile_at(doc, pointer, depth + 1);
  }

  template <class Token>
  node_id compile_child(std::uint32_t doc, const std::string& at, std::string_view keyword, const Token& token,
                        std::size_t depth) {
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

  // The subschema at `pointer` and, from the work list, every reference
  // target it leads to: the way into the compiler.
  node_id compile_with_references(std::uint32_t doc, const std::string& pointer) {
    const node_id id = compile_at(doc, pointer, 0);
    while (!pending_.empty() && !error_) {
      const pending_reference next = std::move(pending_.front());
      pending_.pop_front();
      compile_node(next.id, next.doc, next.pointer, 0);
    }
    return id;
  }

  // A reference's target: linked now, compiled later from the work list, so
  // references chained to any length compile without recursion. A target
  // compiled or queued already is linked as it is: each compiles once.
  node_id compile_later(std::uint32_t doc, const std::string& pointer) {
    if (error_) return no_node;
    const std::string key = location_key(doc, pointer);
    if (const auto it = compiled_.find(key); it != compiled_.end()) return it->second;
    const node_id id = reserve_node(doc, pointer, key);
    if (id != no_node) pending_.push_back({doc, pointer, id});
    return id;
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
    const node_id id = reserve_node(doc, pointer, key);
    if (id != no_node) compile_node(id, doc, pointer, depth);
    return id;
  }

  node_id reserve_node(std::uint32_t doc, const std::string& pointer, const std::string& key) {
    if (prog_->nodes.size() >= options_.max_nodes) {
      set_error(schema_errc::too_complex, doc, pointer,
                fmt::format("the schema compiles to more than {} nodes", options_.max_nodes));
      return no_node;
    }
    const auto id = static_cast<node_id>(prog_->nodes.size());
    prog_->nodes.emplace_back();
    compiled_.emplace(key, id);
    return id;
  }

  // A node that stands where the schema cannot be evaluated: every instance
  // that reaches it fails with the defect, and the schema's warnings name it.
  node_id defective_node(schema_defect kind, std::string_view keyword, std::string location, std::string why,
                         std::uint32_t resource) {
    if (prog_->nodes.size() >= options_.max_nodes) {
      error_ = schema_error{schema_errc::too_complex, location,
                            fmt::format("the schema compiles to more than {} nodes", options_.max_nodes), std::nullopt};
      return no_node;
    }
    prog_->warnings.push_back(fmt::format("{}: {}; an instance that reaches it fails ({})", location, why,
                                          to_string(kind)));
    node n;
    n.flags = always_false | broken_reference;
    n.resource = resource;
    n.defect = static_cast<std::uint32_t>(prog_->defects.size());
    prog_->defects.push_back(reference_defect{kind, std::string(keyword), std::move(location), std::move(why)});
    prog_->nodes.push_back(std::move(n));
    return static_cast<node_id>(prog_->nodes.size() - 1);
  }

  void compile_node(node_id id, std::uint32_t doc, const std::string& pointer, std::size_t depth) {
    boost::json::error_code ec;
    const boost::json::value* found = docs_[doc].json.find_pointer(pointer, ec);
    if (!found) {
      set_error(schema_errc::unresolved_reference, doc, pointer, "no schema at this location");
      return;
    }
    const boost::json::value& schema = *found;
    node n;
    const scope in_force = scope_at(doc, pointer);
    n.resource = resource_index(in_force.base);
    if (schema.is_bool()) {
      n.flags = schema.get_bool() ? 0u : std::uint32_t{always_false};
    } else if (!schema.is_object()) {
      set_error(schema_errc::invalid_keyword, doc, pointer, "a schema must be an object or a boolean");
    } else {
      compile_object(doc, pointer, schema.get_object(), in_force, n, depth);
    }
    prog_->nodes[id] = std::move(n);
  }

  // The schema object compile_object() reads, and the node it fills in.
  struct schema_site {
    std::uint32_t doc;
    const std::string& at;
    const boost::json::object& schema;
    node& n;
    key_table& keys;
    std::size_t depth;
    dialect draft;

    // The keyword's value, when the schema has it and it is one of the draft's keywords.
    const boost::json::value* get(std::string_view keyword) const {
      const auto it = schema.find(keyword);
      return it == schema.end() || !keyword_in_dialect(keyword, draft) ? nullptr : &it->value();
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
                      const scope& in_force, node& n, std::size_t depth) {
    const std::uint8_t vocab = in_force.vocabularies;
    const bool applicators = vocab & applicator_vocabulary;
    const bool validation = vocab & validation_vocabulary;
    const bool unevaluated = vocab & unevaluated_vocabulary;
    const bool assert_format = options_.format_assertion || (vocab & format_assertion_vocabulary);

    // Properties enter the key table first, in the schema's order: documents
    // follow that order, and the evaluator's lookup tries the next entry first.
    key_table keys;
    schema_site site{doc, at, schema, n, keys, depth, in_force.draft};
    if (ref_overrides_siblings(site.draft) && site.get("$ref")) {
      read_references(site);
      return;
    }
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
  // A reference whose target does not exist: a compile error with
  // refuse_broken_references, else a defective node and a warning.
  node_id unresolved_reference(const schema_site& site, std::string_view keyword, std::string why);
  bool read_type_enum_const(schema_site& site);  // type_enum_const.ipp
  bool read_numeric(schema_site& site);          // numeric.ipp
  bool read_number(std::uint32_t doc, const std::string& at, std::string_view keyword, const boost::json::value& v,
                   json_number& out);
  static void set_interval(node& n);
  bool read_string_assertions(schema_site& site);  // string.ipp
  bool read_format(schema_site& site);
  bool read_array_assertions(schema_site& site);   // array.ipp
  bool read_object_assertions(schema_site& site);  // object.ipp
  void add_dependent_required(key_table& keys, node& n, std::string_view trigger,
                              const std::vector<std::string>& names);
  bool read_content_rules(schema_site& site);  // content_rules.ipp: x-dlq-rule
  bool read_applicators(schema_site& site);    // applicator.ipp
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
      const node_id target = compile_with_references(entry.where.doc, entry.where.pointer);
      if (error_) return;
      const std::uint32_t resource = resource_index(entry.resource);
      prog_->resources[resource].dynamic_anchors.emplace_back(anchor_name_id(entry.name), target);
    }
  }

  // Compiles every resource root with `"$recursiveAnchor": true`, where a
  // `$recursiveRef` may land at run time.
  void finish_recursive_anchors() {
    if (!prog_->uses_dynamic_scope) return;
    for (std::size_t i = 0; i < recursive_anchors_.size() && !error_; ++i) {
      const auto entry = recursive_anchors_[i];
      const auto root = resources_.find(entry.resource);  // only a resource's root anchors
      if (root == resources_.end() || root->second.doc != entry.where.doc ||
          root->second.pointer != entry.where.pointer) {
        continue;
      }
      const node_id target = compile_with_references(entry.where.doc, entry.where.pointer);
      if (error_) return;
      prog_->resources[resource_index(entry.resource)].recursive_anchor = target;
    }
  }

  // Each subschema `n` applies in place, as the slot that holds it and the
  // keyword that names it; `Node` is `node` to change the slots, else const.
  template <class Node, class Children, class F>
  static void visit_in_place(Node& n, Children& children, F&& f) {
    if (n.ref != no_node) f(n.ref, "$ref");
    if (n.dynamic_ref != no_node) f(n.dynamic_ref, n.recursive_ref ? "$recursiveRef" : "$dynamicRef");
    for (const auto& [span, keyword] : {std::pair{n.all_of, "allOf"}, {n.any_of, "anyOf"}, {n.one_of, "oneOf"}}) {
      for (std::uint32_t i = 0; i < span.count; ++i) f(children[span.begin + i], keyword);
    }
    if (n.not_schema != no_node) f(n.not_schema, "not");
    if (n.if_schema != no_node) f(n.if_schema, "if");
    if (n.then_schema != no_node) f(n.then_schema, "then");
    if (n.else_schema != no_node) f(n.else_schema, "else");
    for (auto& rule : n.dependent_schemas) {
      f(rule.schema, n.spelling & dependencies_keyword ? "dependencies" : "dependentSchemas");
    }
  }

  template <class F>
  void for_each_in_place_child(const node& n, F&& f) const {
    visit_in_place(n, std::as_const(prog_->children), [&](node_id child, const char*) { f(child); });
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
      if (n.prefix_items.count || n.items != no_node || n.contains != no_node || n.unevaluated_items != no_node) {
        n.flags |= annotates_items;
      }
      if (n.dynamic_anchor != no_index || n.recursive_ref) n.flags |= annotates_properties | annotates_items;
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

  // Arrays checked by one leaf and nothing else: coordinates, tags, lists of ids.
  void mark_leaf_item_arrays() {
    auto& nodes = prog_->nodes;
    for (auto& n : nodes) {
      if ((n.flags & ~(leaf_flags | has_array_keywords | annotates_items)) != 0 || n.items == no_node) continue;
      if (n.prefix_items.count != 0 || n.contains != no_node || n.unique_items) continue;
      if ((nodes[n.items].flags & ~leaf_flags) == 0) n.flags |= leaf_items;
    }
  }

  // A cycle of in-place applications ({"$ref": "#"}) never consumes the
  // instance. Each edge that closes one, as a walk from the root meets it,
  // becomes a defective node (or, with refuse_broken_references, the schema
  // is refused), so evaluation never recurses until the depth limit.
  void check_in_place_cycles() {
    const auto& nodes = prog_->nodes;
    const std::size_t count = nodes.size();     // defective nodes added below are leaves
    std::vector<std::uint8_t> state(count, 0);  // 0 new, 1 on the stack, 2 done
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
    const node_id root = prog_->root < count ? prog_->root : 0;
    for (std::size_t k = 0; k < count && !error_; ++k) {
      // The root first (its place taken by node 0): a loop is broken where a walk from the root closes it.
      const node_id start = k == 0 ? root : static_cast<node_id>(k == root ? 0 : k);
      if (state[start]) continue;
      state[start] = 1;
      stack.emplace_back(start, children_of(start));
      while (!stack.empty() && !error_) {
        auto& [id, pending] = stack.back();
        if (pending.empty()) {
          state[id] = 2;
          stack.pop_back();
          continue;
        }
        const node_id next = pending.back();
        pending.pop_back();
        if (state[next] == 1) {
          std::erase(pending, next);
          break_cycle(stack, next);
          continue;
        }
        if (state[next] == 0) {
          state[next] = 1;
          stack.emplace_back(next, children_of(next));
        }
      }
    }
  }

  // `stack.back()` applies `next`, which is below it on `stack`, in place:
  // its slots that hold `next` become reference_loop nodes.
  void break_cycle(const std::vector<std::pair<node_id, std::vector<node_id>>>& stack, node_id next) {
    const node_id id = stack.back().first;
    std::size_t first = stack.size() - 1;
    while (first > 0 && stack[first].first != next) --first;
    std::string loop;
    constexpr std::size_t most_named = 8;
    for (std::size_t i = first; i < stack.size(); ++i) {
      if (i - first == most_named) {
        loop += fmt::format(" -> ... ({} more)", stack.size() - i);
        break;
      }
      loop += (i == first ? "" : " -> ") + where_compiled(stack[i].first);
    }
    loop += " -> " + where_compiled(next);
    const std::string why = "subschemas apply each other in place in a loop that never descends into the value: " +
                            loop;
    if (options_.refuse_broken_references) {
      error_ = schema_error{schema_errc::infinite_recursion, where_compiled(id), why, std::nullopt};
      return;
    }
    std::vector<const char*> keywords;  // the slots that hold `next`, in visiting order
    visit_in_place(std::as_const(prog_->nodes[id]), std::as_const(prog_->children),
                   [&](node_id slot, const char* keyword) {
                     if (slot == next) keywords.push_back(keyword);
                   });
    if (keywords.empty()) {  // the loop goes through a $dynamicAnchor the dynamic scope picks: no slot holds it
      error_ = schema_error{schema_errc::infinite_recursion, where_compiled(id), why, std::nullopt};
      return;
    }
    std::vector<node_id> defects;  // made first: making them moves the nodes
    for (const char* keyword : keywords) {
      defects.push_back(defective_node(schema_defect::reference_loop, keyword,
                                       where_compiled(id, false) + "/" + keyword, why, prog_->nodes[id].resource));
      if (error_) return;
    }
    std::size_t i = 0;
    visit_in_place(prog_->nodes[id], prog_->children, [&](node_id& slot, const char*) {
      if (slot == next) slot = defects[i++];
    });
  }

  // Where node `id` was compiled from: `#/pointer` in the root document, or
  // `uri#/pointer`; with `as_reference` false, as schema_error::location
  // writes it. Built on first use: only messages need it.
  std::string where_compiled(node_id id, bool as_reference = true) {
    if (compiled_from_.empty()) {
      compiled_from_.resize(prog_->nodes.size());
      for (const auto& [key, compiled] : compiled_) {
        const auto colon = key.find(':');
        std::uint32_t doc = 0;
        std::from_chars(key.data(), key.data() + colon, doc);
        if (compiled < compiled_from_.size()) compiled_from_[compiled] = {doc, key.substr(colon + 1)};
      }
    }
    if (id >= compiled_from_.size()) return as_reference ? "#" : "";
    const location& at = compiled_from_[id];
    return (as_reference && at.doc == 0 ? "#" : "") + describe_location(at.doc, at.pointer);
  }

  struct dynamic_anchor_entry {
    std::string resource;
    std::string name;
    location where;
  };

  const compile_options& options_;
  std::shared_ptr<program> prog_;
  std::optional<schema_error> error_;
  schema_catalog catalog_{options_.catalog_directory};
  std::deque<document> docs_;  // a deque: compiling holds references into documents while loading more
  std::unordered_map<std::string, location> resources_;
  std::unordered_map<std::string, anchor> anchors_;
  std::unordered_map<std::string, scope> scopes_;
  std::unordered_map<std::string, node_id> compiled_;
  std::vector<location> compiled_from_;  // compiled_ inverted, for where_compiled()
  struct pending_reference {
    std::uint32_t doc;
    std::string pointer;
    node_id id;
  };
  std::deque<pending_reference> pending_;  // reference targets linked, not yet compiled
  std::unordered_map<std::string, std::uint32_t> resource_ids_;
  std::unordered_map<std::string, std::uint32_t> anchor_names_;
  std::unordered_map<std::string, std::uint32_t> regex_ids_;
  std::vector<dynamic_anchor_entry> dynamic_anchors_;
  std::vector<dynamic_anchor_entry> recursive_anchors_;  // resources whose root has "$recursiveAnchor": true
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
