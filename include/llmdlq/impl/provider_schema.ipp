// SPDX-License-Identifier: MIT
// Definitions for provider_schema.hpp: a schema rewritten keyword by keyword
// under a provider's rules (detail/schema/provider_rules.hpp), checked
// against the same rules, and an answer's forced nulls found in one pass
// over its text.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <unordered_set>
#include <utility>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "llmdlq/detail/json/prefix_scanner.hpp"
#include "llmdlq/detail/json/string_escape.hpp"
#include "llmdlq/detail/schema/provider_rules.hpp"
#include "llmdlq/detail/schema/uri.hpp"
#include "llmdlq/provider_schema.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE std::string_view to_string(provider_profile profile) noexcept {
  switch (profile) {
    case provider_profile::full: return "full";
    case provider_profile::openai_strict: return "openai_strict";
    case provider_profile::gemini: return "gemini";
    case provider_profile::anthropic: return "anthropic";
    case provider_profile::ollama: return "ollama";
  }
  return "full";
}

LLMDLQ_INLINE std::optional<provider_profile> provider_profile_from(std::string_view name) noexcept {
  if (name == "openai") return provider_profile::openai_strict;
  for (const auto p : {provider_profile::full, provider_profile::openai_strict, provider_profile::gemini,
                       provider_profile::anthropic, provider_profile::ollama}) {
    if (to_string(p) == name) return p;
  }
  return std::nullopt;
}

LLMDLQ_INLINE std::string_view to_string(lowering_note::change what) noexcept {
  switch (what) {
    case lowering_note::change::dropped: return "dropped";
    case lowering_note::change::described: return "described";
    case lowering_note::change::rewritten: return "rewritten";
    case lowering_note::change::nullable: return "nullable";
    case lowering_note::change::closed: return "closed";
    case lowering_note::change::required: return "required";
  }
  return "dropped";
}

LLMDLQ_INLINE std::string lowered_schema::text() const { return boost::json::serialize(schema); }

namespace detail::provider {

// `at` with one more reference token.
inline std::string joined(std::string at, std::string_view token) {
  append_pointer_token(at, token);
  return at;
}

// Keywords whose value is one subschema, a map of them, a list of them.
inline bool holds_schema(std::string_view k) noexcept {
  return k == "additionalProperties" || k == "not" || k == "if" || k == "then" || k == "else" || k == "contains" ||
         k == "propertyNames" || k == "unevaluatedProperties" || k == "unevaluatedItems" || k == "additionalItems";
}
inline bool holds_schema_map(std::string_view k) noexcept {
  return k == "properties" || k == "patternProperties" || k == "$defs" || k == "definitions" || k == "dependentSchemas";
}
inline bool holds_schema_list(std::string_view k) noexcept {
  return k == "anyOf" || k == "oneOf" || k == "allOf" || k == "prefixItems";
}
// Annotations that constrain nothing: left out where the provider does not take them, without a note.
inline bool annotation(std::string_view k) noexcept {
  return k == "$schema" || k == "$id" || k == "$comment" || k == "examples" || k == "default" || k == "deprecated" ||
         k == "readOnly" || k == "writeOnly" || k == "$anchor" || k == "title" || k == "description";
}

inline bool has_type(const boost::json::object& o, std::string_view name) {
  const auto* t = o.if_contains("type");
  if (t == nullptr) return false;
  if (const auto* s = t->if_string()) return *s == name;
  if (const auto* a = t->if_array()) {
    return std::any_of(a->begin(), a->end(), [&](const auto& v) { return v.is_string() && v.get_string() == name; });
  }
  return false;
}

// Whether the schema takes null as it stands (a $ref is not followed: it is
// taken not to, and the property is wrapped).
inline bool allows_null(const boost::json::value& v) {
  if (v.is_bool()) return v.get_bool();
  const auto* o = v.if_object();
  if (o == nullptr) return false;
  if (o->contains("type")) return has_type(*o, "null");
  if (const auto* e = o->if_contains("enum"); e && e->is_array()) {
    return std::any_of(e->get_array().begin(), e->get_array().end(), [](const auto& x) { return x.is_null(); });
  }
  if (const auto* c = o->if_contains("const")) return c->is_null();
  if (const auto* a = o->if_contains("anyOf"); a && a->is_array()) {
    return std::any_of(a->get_array().begin(), a->get_array().end(), [](const auto& x) { return allows_null(x); });
  }
  return !o->contains("$ref") && !o->contains("allOf") && !o->contains("oneOf") && !o->contains("not");
}

// `v` made to take null too: a scalar type gains "null" (and its enum
// null); anything else becomes anyOf [v, {"type": "null"}].
inline boost::json::value with_null(boost::json::value v) {
  if (auto* o = v.if_object(); o && !o->contains("const")) {
    auto* t = o->if_contains("type");
    const bool scalar = t && ((t->is_string() && t->get_string() != "object" && t->get_string() != "array") ||
                              (t->is_array() && !has_type(*o, "object") && !has_type(*o, "array")));
    if (scalar) {
      if (t->is_string()) {
        *t = boost::json::array{t->get_string(), "null"};
      } else {
        t->get_array().emplace_back("null");
      }
      if (auto* e = o->if_contains("enum"); e && e->is_array()) e->get_array().emplace_back(nullptr);
      return v;
    }
  }
  return boost::json::object{{"anyOf", boost::json::array{std::move(v), boost::json::object{{"type", "null"}}}}};
}

// The strings of a `required` list.
inline std::unordered_set<std::string> names_in(const boost::json::array& list) {
  std::unordered_set<std::string> names;
  for (const auto& v : list) {
    if (v.is_string()) names.emplace(v.get_string());
  }
  return names;
}

inline std::string brief(const boost::json::value& v) {
  std::string text = boost::json::serialize(v);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

// The user's schema rewritten under one provider's rules.
class schema_lowerer {
 public:
  schema_lowerer(provider_profile profile, provider_rules rules) : profile_(profile), rules_(rules) {}

  boost::json::value run(const boost::json::value& root) {
    std::string at, out;
    return lower(root, at, out, 0);
  }

  std::vector<lowering_note> notes;
  std::set<std::string> forced;  // pointers into the lowered schema
  std::optional<lowering_error> inexpressible;

 private:
  static constexpr std::size_t max_depth = 256;

  void note(const std::string& at, std::string_view keyword, lowering_note::change what) {
    notes.push_back({joined(at, keyword), std::string(keyword), what});
  }
  void cannot(const std::string& at, std::string message) {
    if (!inexpressible) inexpressible = lowering_error{at, std::move(message)};
  }

  bool takes(std::string_view keyword) const { return provider::takes(rules_.keywords, keyword); }

  // The name a kept keyword goes by: definitions as $defs, oneOf as anyOf,
  // a tuple's items as prefixItems, where only the new name is taken.
  std::string_view renamed(std::string_view k, const boost::json::object& o) const {
    if (k == "definitions" && !takes(k) && takes("$defs") && !o.contains("$defs")) return "$defs";
    if (k == "oneOf" && rules_.one_of_as_any_of && !takes(k) && !o.contains("anyOf")) return "anyOf";
    if (k == "items" && o.at("items").is_array() && takes("prefixItems") && !o.contains("prefixItems")) {
      return "prefixItems";
    }
    return k;
  }

  boost::json::value lower(const boost::json::value& in, std::string& at, std::string& out_at, std::size_t depth) {
    if (depth > max_depth) {
      cannot(at, "the schema is nested too deeply");
      return in;
    }
    const auto* o = in.if_object();
    if (o == nullptr) return in;  // true, false
    boost::json::object result;
    std::string described;
    for (const auto& [key, value] : *o) {
      const std::string_view k = key;
      const std::string_view name = renamed(k, *o);
      if (!takes(name)) {
        if (annotation(k)) continue;
        if (rules_.describe_dropped && !holds_schema(k) && !holds_schema_map(k) && !holds_schema_list(k) &&
            k != "items") {
          described += fmt::format("{}{}: {}", described.empty() ? "" : ", ", k, brief(value));
          note(at, k, lowering_note::change::described);
        } else {
          note(at, k, lowering_note::change::dropped);
        }
        continue;
      }
      if (name != k) note(at, k, lowering_note::change::rewritten);
      const std::size_t at_size = at.size(), out_size = out_at.size();
      append_pointer_token(at, k);
      append_pointer_token(out_at, name);
      boost::json::value lowered = lower_keyword(k, value, at, out_at, depth);
      at.resize(at_size);
      out_at.resize(out_size);
      if (lowered.is_null() && k != "const" && k != "default") continue;  // the keyword is gone
      result[name] = std::move(lowered);
    }
    if (!described.empty()) {
      const auto* given = result.if_contains("description");
      std::string text = given && given->is_string() ? std::string(given->get_string()) : "";
      result["description"] = text + (text.empty() ? "" : " ") + "(" + described + ")";
    }
    shape_object(result, *o, at, out_at);
    return result;
  }

  boost::json::value lower_keyword(std::string_view k, const boost::json::value& value, std::string& at,
                                   std::string& out_at, std::size_t depth) {
    if (k == "format") {
      if (value.is_string() && provider::takes(rules_.formats, value.get_string())) return value;
      notes.push_back({at, "format", lowering_note::change::dropped});
      return nullptr;
    }
    if (k == "minItems" && value.is_number() && value.to_number<double>() > static_cast<double>(rules_.max_min_items)) {
      notes.push_back({at, "minItems",
                       rules_.describe_dropped ? lowering_note::change::described : lowering_note::change::dropped});
      return nullptr;
    }
    if (k == "$ref") {
      if (!value.is_string()) return value;
      std::string ref(value.get_string());
      if (profile_ != provider_profile::full && !ref.starts_with("#")) {
        cannot(at, fmt::format("\"$ref\": \"{}\" refers to another document", ref));
      }
      if (ref.starts_with("#/definitions/") && !takes("definitions") && takes("$defs")) {
        ref = "#/$defs/" + ref.substr(14);
      }
      return boost::json::value(ref);
    }
    if (holds_schema(k)) return lower(value, at, out_at, depth + 1);
    if (holds_schema_map(k) && value.is_object()) {
      boost::json::object map;
      for (const auto& [name, sub] : value.get_object()) {
        const std::size_t at_size = at.size(), out_size = out_at.size();
        append_pointer_token(at, name);
        append_pointer_token(out_at, name);
        map[name] = lower(sub, at, out_at, depth + 1);
        at.resize(at_size);
        out_at.resize(out_size);
      }
      return map;
    }
    if ((holds_schema_list(k) || k == "items") && value.is_array()) {
      boost::json::array list;
      for (std::size_t i = 0; i < value.get_array().size(); ++i) {
        const std::size_t at_size = at.size(), out_size = out_at.size();
        at += "/" + std::to_string(i);
        out_at += "/" + std::to_string(i);
        list.push_back(lower(value.get_array()[i], at, out_at, depth + 1));
        at.resize(at_size);
        out_at.resize(out_size);
      }
      return list;
    }
    if (k == "items") return lower(value, at, out_at, depth + 1);
    return value;
  }

  // What an object schema needs for the provider: a type, closed, every
  // property required.
  void shape_object(boost::json::object& result, const boost::json::object& original, const std::string& at,
                    const std::string& out_at) {
    const bool object = has_type(result, "object") || (!result.contains("type") && result.contains("properties"));
    if (!object) return;
    if (rules_.typed && !result.contains("type")) {
      result["type"] = "object";
      note(at, "type", lowering_note::change::required);
    }
    const auto* properties = result.if_contains("properties");
    const bool named = properties && properties->is_object() && !properties->get_object().empty();
    if (rules_.closed_objects) {
      const auto* extra = result.if_contains("additionalProperties");
      const bool closed = extra && extra->is_bool() && !extra->get_bool();
      if (!closed && (named || !extra || extra->is_bool()) && !original.contains("patternProperties")) {
        // Names beyond the listed ones are not written: the answer stays within the user's schema.
        result["additionalProperties"] = false;
        note(at, "additionalProperties", lowering_note::change::closed);
      } else if (!closed) {
        cannot(at, "an object whose names are not listed (additionalProperties or patternProperties) cannot be "
                   "closed without refusing every answer");
      }
    }
    if (!rules_.every_property_required || !named) return;
    boost::json::array required;
    if (const auto* r = result.if_contains("required"); r && r->is_array()) required = r->get_array();
    const std::unordered_set<std::string> listed = names_in(required);
    for (auto& [name, sub] : result.at("properties").get_object()) {
      if (listed.contains(std::string(name))) continue;
      required.emplace_back(name);
      const std::string property = joined(at + "/properties", name);
      notes.push_back({property, "required", lowering_note::change::nullable});
      if (allows_null(sub)) continue;  // the user's null: a null answer stays
      const std::string place = joined(out_at + "/properties", name);
      sub = with_null(std::move(sub));
      const auto* any = sub.as_object().if_contains("anyOf");
      if (any && any->is_array() && any->get_array().size() == 2 &&
          any->get_array()[1] == boost::json::object{{"type", "null"}}) {
        moved_into(place, place + "/anyOf/0");
      }
      forced.insert(place);
    }
    result["required"] = std::move(required);
  }

  // The forced nulls found under `from`, now under `to` (a schema wrapped in anyOf).
  void moved_into(const std::string& from, const std::string& to) {
    const std::string prefix = from + "/";
    auto it = forced.lower_bound(prefix);
    std::vector<std::string> moved;
    while (it != forced.end() && it->starts_with(prefix)) {
      moved.push_back(to + it->substr(from.size()));
      it = forced.erase(it);
    }
    forced.insert(moved.begin(), moved.end());
  }

  provider_profile profile_;
  provider_rules rules_;
};

// The first rule of the provider's a schema breaks, walking it once; $ref
// targets are followed once each, for cycles.
class provider_checker {
 public:
  provider_checker(const boost::json::value& root, provider_profile profile)
      : root_(root), profile_(profile), rules_(rules_of(profile)) {}

  std::optional<provider_refusal> run() {
    if (profile_ == provider_profile::full) return std::nullopt;
    if (rules_.object_root) {
      const auto* o = root_.if_object();
      if (o == nullptr || !has_type(*o, "object"))
        return refuse("", "schema must be a JSON Schema of 'type: \"object\"'");
      if (o->contains("anyOf")) return refuse("", "the root schema must not be 'anyOf'");
    }
    std::string at;
    walk(root_, at, 0, 0);
    if (refusal_) return refusal_;
    if (rules_.max_properties && properties_ > rules_.max_properties) {
      return refuse("",
                    fmt::format("{} object properties exceeds the limit of {}", properties_, rules_.max_properties));
    }
    if (rules_.max_enum_values && enum_values_ > rules_.max_enum_values) {
      return refuse("", fmt::format("{} enum values exceeds the limit of {}", enum_values_, rules_.max_enum_values));
    }
    if (rules_.max_string_length && string_length_ > rules_.max_string_length) {
      return refuse("", fmt::format("the total string length of property names, enum and const values ({}) exceeds "
                                    "the limit of {}",
                                    string_length_, rules_.max_string_length));
    }
    if (rules_.max_optional && optional_ > rules_.max_optional) {
      return refuse("", fmt::format("{} optional parameters exceeds the limit of {}", optional_, rules_.max_optional));
    }
    if (rules_.max_unions && unions_ > rules_.max_unions) {
      return refuse("",
                    fmt::format("{} parameters with union types exceeds the limit of {}", unions_, rules_.max_unions));
    }
    if (!rules_.recursion && recursive()) return refuse("", "recursive schemas are not supported");
    return std::nullopt;
  }

 private:
  // Whether the provider refuses keywords it does not take, or ignores them.
  bool refuses_unknown() const noexcept {
    return profile_ == provider_profile::openai_strict || profile_ == provider_profile::anthropic;
  }

  std::optional<provider_refusal> refuse(const std::string& at, std::string message) {
    if (!refusal_) refusal_ = provider_refusal{at, std::move(message)};
    return refusal_;
  }

  void walk(const boost::json::value& v, std::string& at, std::size_t nesting, std::size_t depth) {
    if (refusal_ || depth > 512) return;
    const auto* o = v.if_object();
    if (o == nullptr) {
      if (rules_.typed) refuse(at, "a schema must be an object that says its type, not a boolean");
      return;
    }
    const bool object = has_type(*o, "object");
    if (object && rules_.max_nesting && nesting + 1 > rules_.max_nesting) {
      refuse(at, fmt::format("{} levels of nesting exceeds limit of {}", nesting + 1, rules_.max_nesting));
      return;
    }
    if (rules_.typed && !o->contains("type") && !o->contains("enum") && !o->contains("const") &&
        !o->contains("anyOf") && !o->contains("$ref") && !o->contains("allOf")) {
      refuse(at, "a schema must have a 'type' (or enum, const, anyOf or $ref)");
      return;
    }
    if (const auto* t = o->if_contains("type"); t && t->is_array() && t->get_array().size() > 1) ++unions_;
    if (o->contains("anyOf")) ++unions_;
    for (const auto& [key, value] : *o) {
      const std::string_view k = key;
      const std::size_t size = at.size();
      append_pointer_token(at, k);
      check_keyword(*o, k, value, at, object ? nesting + 1 : nesting, depth);
      at.resize(size);
      if (refusal_) return;
    }
    if (object) check_object(*o, at);
  }

  void check_keyword(const boost::json::object& o, std::string_view k, const boost::json::value& value, std::string& at,
                     std::size_t nesting, std::size_t depth) {
    if (!takes(rules_.keywords, k)) {
      if (refuses_unknown()) refuse(at, fmt::format("'{}' is not permitted", k));
      return;  // ignored
    }
    if (k == "format" && value.is_string() && !takes(rules_.formats, value.get_string()) && refuses_unknown()) {
      refuse(at, fmt::format("format '{}' is not supported", std::string(value.get_string())));
    } else if (k == "minItems" && value.is_number() &&
               value.to_number<double>() > static_cast<double>(rules_.max_min_items)) {
      refuse(at, fmt::format("minItems values other than 0 or {} are not supported", rules_.max_min_items));
    } else if (k == "$ref") {
      if (!value.is_string() || !value.get_string().starts_with("#") || !resolve(value.get_string())) {
        refuse(at, fmt::format("reference {} cannot be resolved within the schema", brief(value)));
      }
    } else if (k == "enum" && value.is_array()) {
      enum_values_ += value.get_array().size();
      std::size_t length = 0;
      for (const auto& e : value.get_array()) {
        if (e.is_string()) length += e.get_string().size();
        if (!e.is_string() && !e.is_number() && !e.is_bool() && !e.is_null() && refuses_unknown()) {
          refuse(at, "enum values must be strings, numbers, booleans or null");
        }
      }
      string_length_ += length;
      if (rules_.large_enum && value.get_array().size() > rules_.large_enum && length > rules_.large_enum_length) {
        refuse(at, fmt::format("an enum of {} values has {} characters, over the limit of {}", value.get_array().size(),
                               length, rules_.large_enum_length));
      }
    } else if (k == "const" && value.is_string()) {
      string_length_ += value.get_string().size();
    } else if (k == "additionalProperties" && rules_.closed_objects && !(value.is_bool() && !value.get_bool())) {
      refuse(at, "'additionalProperties' is required to be supplied and to be false");
    } else if (holds_schema(k)) {
      if (k == "additionalProperties" && value.is_bool()) return;  // false, or the provider's own rule said
      walk(value, at, nesting, depth + 1);
    } else if (holds_schema_map(k) && value.is_object()) {
      if (k == "properties") {
        properties_ += value.get_object().size();
        for (const auto& [name, sub] : value.get_object()) string_length_ += name.size();
      }
      for (const auto& [name, sub] : value.get_object()) {
        const std::size_t size = at.size();
        append_pointer_token(at, name);
        walk(sub, at, nesting, depth + 1);
        at.resize(size);
      }
    } else if ((holds_schema_list(k) || k == "items") && value.is_array()) {
      for (std::size_t i = 0; i < value.get_array().size(); ++i) {
        const std::size_t size = at.size();
        at += "/" + std::to_string(i);
        walk(value.get_array()[i], at, nesting, depth + 1);
        at.resize(size);
      }
    } else if (k == "items") {
      walk(value, at, nesting, depth + 1);
    }
    (void)o;
  }

  void check_object(const boost::json::object& o, const std::string& at) {
    const auto* properties = o.if_contains("properties");
    const auto* required = o.if_contains("required");
    if (rules_.closed_objects && !o.contains("additionalProperties")) {
      refuse(at, "'additionalProperties' is required to be supplied and to be false");
      return;
    }
    if (properties == nullptr || !properties->is_object()) return;
    const std::unordered_set<std::string> listed = required && required->is_array() ? names_in(required->get_array())
                                                                                    : std::unordered_set<std::string>();
    for (const auto& [name, sub] : properties->get_object()) {
      if (listed.contains(std::string(name))) continue;
      ++optional_;
      if (rules_.every_property_required) {
        refuse(at, fmt::format("'required' is required to be supplied and to be an array including every key in "
                               "properties. Missing '{}'",
                               std::string(name)));
        return;
      }
    }
  }

  const boost::json::value* resolve(std::string_view ref) const {
    boost::system::error_code ec;
    const auto* target = root_.find_pointer(ref.substr(1), ec);
    return ec ? nullptr : target;
  }

  // Whether a $ref leads back to a schema it is inside of.
  bool recursive() {
    std::unordered_set<const boost::json::value*> done, open;
    return cycles(root_, done, open, 0);
  }
  bool cycles(const boost::json::value& v, std::unordered_set<const boost::json::value*>& done,
              std::unordered_set<const boost::json::value*>& open, std::size_t depth) {
    if (depth > 512) return false;
    if (const auto* a = v.if_array()) {
      for (const auto& e : *a) {
        if (cycles(e, done, open, depth + 1)) return true;
      }
      return false;
    }
    const auto* o = v.if_object();
    if (o == nullptr) return false;
    for (const auto& [key, value] : *o) {
      if (key == "$ref" && value.is_string() && value.get_string().starts_with("#")) {
        const auto* target = resolve(value.get_string());
        if (target == nullptr) continue;
        if (open.contains(target)) return true;
        if (done.contains(target)) continue;
        open.insert(target);
        if (cycles(*target, done, open, depth + 1)) return true;
        open.erase(target);
        done.insert(target);
      } else if (key != "enum" && key != "const" && key != "$defs" && key != "definitions" &&
                 (value.is_object() || value.is_array())) {
        if (cycles(value, done, open, depth + 1)) return true;
      }
    }
    return false;
  }

  const boost::json::value& root_;
  provider_profile profile_;
  provider_rules rules_;
  std::optional<provider_refusal> refusal_;
  std::size_t properties_ = 0, enum_values_ = 0, string_length_ = 0, optional_ = 0, unions_ = 0;
};

}  // namespace detail::provider

LLMDLQ_INLINE expected<lowered_schema, lowering_error> lower_schema(const boost::json::value& user_schema,
                                                                    provider_profile profile,
                                                                    const lowering_options& options) {
  lowered_schema out;
  out.profile = profile;
  if (profile == provider_profile::full) {
    out.schema = user_schema;
    return out;
  }
  detail::provider::schema_lowerer lowerer(profile, detail::provider::rules_of(profile));
  out.schema = lowerer.run(user_schema);
  out.notes = std::move(lowerer.notes);
  std::optional<provider_refusal> refused;
  if (lowerer.inexpressible) {
    refused = provider_refusal{lowerer.inexpressible->pointer, lowerer.inexpressible->message};
  } else {
    refused = check_provider_schema(out.schema, profile);
  }
  if (refused) {
    if (options.refuse_non_strict) return unexpected(lowering_error{refused->pointer, refused->message});
    out.strict = false;
    out.reason = refused->pointer.empty() ? refused->message : refused->pointer + ": " + refused->message;
  }
  if (!lowerer.forced.empty()) {
    auto nulls = std::make_shared<forced_nulls>();
    nulls->lowered = out.schema;
    nulls->properties = std::move(lowerer.forced);
    out.nulls = std::move(nulls);
  }
  return out;
}

LLMDLQ_INLINE expected<lowered_schema, lowering_error> lower_schema(std::string_view user_schema,
                                                                    provider_profile profile,
                                                                    const lowering_options& options) {
  boost::system::error_code ec;
  boost::json::value parsed = boost::json::parse(user_schema, ec);
  if (ec) return unexpected(lowering_error{"", "the schema is not JSON: " + ec.message()});
  return lower_schema(parsed, profile, options);
}

LLMDLQ_INLINE provider_error provider_error_for(provider_profile profile, const provider_refusal& refusal) {
  const std::string where = refusal.pointer.empty() ? std::string("(root)") : refusal.pointer;
  boost::json::object body;
  switch (profile) {
    case provider_profile::anthropic:
      body = {{"type", "error"},
              {"error", {{"type", "invalid_request_error"}, {"message", "output_format.schema: " + refusal.message}}}};
      break;
    case provider_profile::gemini:
      body = {{"error",
               {{"code", 400},
                {"message", "Invalid JSON payload received. generation_config.response_json_schema at " + where + ": " +
                                refusal.message},
                {"status", "INVALID_ARGUMENT"}}}};
      break;
    case provider_profile::ollama: body = {{"error", "invalid format: " + refusal.message}}; break;
    case provider_profile::full:
    case provider_profile::openai_strict:
      body = {{"error",
               {{"message", fmt::format("Invalid schema for response_format 'response': In context={}, {}.", where,
                                        refusal.message)},
                {"type", "invalid_request_error"},
                {"param", "response_format"},
                {"code", nullptr}}}};
      break;
  }
  return {400, boost::json::serialize(body)};
}

LLMDLQ_INLINE std::optional<boost::json::value> strict_schema_of_request(provider_profile profile,
                                                                         const boost::json::value& request_body) {
  boost::system::error_code ec;
  const auto at = [&](std::string_view pointer) { return request_body.find_pointer(pointer, ec); };
  switch (profile) {
    case provider_profile::gemini: {
      const auto* s = at("/generationConfig/responseJsonSchema");
      return s ? std::optional<boost::json::value>(*s) : std::nullopt;
    }
    case provider_profile::anthropic: {
      const auto* s = at("/output_format/schema");
      return s ? std::optional<boost::json::value>(*s) : std::nullopt;
    }
    case provider_profile::ollama: {
      const auto* s = at("/format");
      return s && s->is_object() ? std::optional<boost::json::value>(*s) : std::nullopt;
    }
    case provider_profile::full:
    case provider_profile::openai_strict: {
      const auto* strict = at("/response_format/json_schema/strict");
      const auto* s = at("/response_format/json_schema/schema");
      const bool on = strict && strict->is_bool() && strict->get_bool();
      return on && s ? std::optional<boost::json::value>(*s) : std::nullopt;
    }
  }
  return std::nullopt;
}

LLMDLQ_INLINE std::optional<provider_refusal> check_provider_schema(const boost::json::value& schema,
                                                                    provider_profile profile) {
  return detail::provider::provider_checker(schema, profile).run();
}

namespace detail::provider {

// json_prefix's listener for map_forced_nulls: the lowered schema followed
// down the answer (properties, items, prefixItems, additionalProperties,
// $ref and anyOf), and each object's members kept until it closes, when
// those with a forced null are cut out with the separators between them.
class forced_null_finder {
 public:
  struct cut {
    std::size_t begin = 0, end = 0;
    std::string path;
  };

  forced_null_finder(std::string_view text, const forced_nulls& nulls) : text_(text), nulls_(nulls) {
    pending_.clear();
    add(pending_, &nulls_.lowered, "");
  }

  std::vector<cut> cuts;

  bool value_begins(stream::value_kind kind, std::size_t) {
    if (kind == stream::value_kind::object || kind == stream::value_kind::array) {
      if (depth_ == frames_.size()) frames_.emplace_back();
      frame& f = frames_[depth_];
      f.schemas.swap(pending_);
      f.object = kind == stream::value_kind::object;
      f.members.clear();
      f.count = 0;
      f.path = depth_ == 0 ? std::string() : child_path();
      ++depth_;
    }
    pending_.clear();
    return true;
  }

  bool element_begins(std::size_t) {
    frame& f = frames_[depth_ - 1];
    const std::size_t index = f.count++;
    pending_.clear();
    for (const auto& [schema, at] : f.schemas) {
      const auto& o = schema->get_object();
      if (const auto* prefix = o.if_contains("prefixItems");
          prefix && prefix->is_array() && index < prefix->get_array().size()) {
        add(pending_, &prefix->get_array()[index], at + "/prefixItems/" + std::to_string(index));
      } else if (const auto* items = o.if_contains("items"); items && items->is_object()) {
        add(pending_, items, at + "/items");
      }
    }
    return true;
  }

  bool key_begins(std::size_t at) {
    frames_[depth_ - 1].members.push_back({at, at, false, {}});
    return true;
  }

  bool key_ends(std::size_t begin, std::size_t end) {
    frame& f = frames_[depth_ - 1];
    member& m = f.members.back();
    m.name = key_text(begin, end);
    pending_.clear();
    bool forced = false, kept = false;
    for (const auto& [schema, at] : f.schemas) {
      const auto& o = schema->get_object();
      const auto* properties = o.if_contains("properties");
      const auto* sub = properties && properties->is_object() ? properties->get_object().if_contains(m.name) : nullptr;
      if (sub != nullptr) {
        const std::string place = joined(at + "/properties", m.name);
        (nulls_.properties.contains(place) ? forced : kept) = true;
        add(pending_, sub, place);
      } else if (const auto* extra = o.if_contains("additionalProperties"); extra && extra->is_object()) {
        kept = true;
        add(pending_, extra, at + "/additionalProperties");
      } else if (has_type(o, "object") || properties != nullptr) {
        kept = true;  // an object schema that does not name it; one for other values (a null branch) says nothing
      }
    }
    m.forced = forced && !kept;
    return true;
  }

  bool leaf_ends(stream::value_kind kind, std::size_t, std::size_t end) {
    if (depth_ > 0 && frames_[depth_ - 1].object) {
      member& m = frames_[depth_ - 1].members.back();
      m.end = end;
      m.forced = m.forced && kind == stream::value_kind::null;
    }
    pending_.clear();
    return true;
  }

  bool container_ends(std::size_t at) {
    frame& f = frames_[--depth_];
    if (f.object) cut_members(f);
    if (depth_ > 0 && frames_[depth_ - 1].object) {
      member& m = frames_[depth_ - 1].members.back();
      m.end = at + 1;
      m.forced = false;  // an object or array is no forced null
    }
    return true;
  }

 private:
  struct member {
    std::size_t begin = 0, end = 0;  // the key's quote to the value's end
    bool forced = false;
    std::string name;
  };
  struct frame {
    std::vector<std::pair<const boost::json::value*, std::string>> schemas;
    bool object = false;
    std::vector<member> members;
    std::size_t count = 0;
    std::string path;  // the instance's JSON Pointer
  };

  static constexpr std::size_t max_schemas = 64;
  static constexpr std::size_t max_visits = 256;  // schemas looked at for one value, $refs and branches followed

  // `v` and what it stands for: the target of its $ref, its anyOf branches.
  void add(std::vector<std::pair<const boost::json::value*, std::string>>& set, const boost::json::value* v,
           std::string at) {
    // A work list with each schema visited once: a $ref or an anyOf branch
    // may lead back to where it started.
    std::vector<std::pair<const boost::json::value*, std::string>> todo{{v, std::move(at)}};
    std::vector<const boost::json::value*> seen;
    while (!todo.empty() && set.size() < max_schemas && seen.size() < max_visits) {
      auto [next, place] = std::move(todo.back());
      todo.pop_back();
      const auto* o = next == nullptr ? nullptr : next->if_object();
      if (o == nullptr || std::find(seen.begin(), seen.end(), next) != seen.end()) continue;
      seen.push_back(next);
      if (const auto* any = o->if_contains("anyOf"); any && any->is_array()) {
        for (std::size_t i = 0; i < any->get_array().size(); ++i) {
          todo.emplace_back(&any->get_array()[i], place + "/anyOf/" + std::to_string(i));
        }
      }
      const auto* ref = o->if_contains("$ref");
      if (ref == nullptr || !ref->is_string() || !ref->get_string().starts_with("#")) {
        set.emplace_back(next, std::move(place));
        continue;
      }
      std::string target(std::string_view(ref->get_string()).substr(1));
      boost::system::error_code ec;
      const auto* resolved = nulls_.lowered.find_pointer(target, ec);
      if (!ec) todo.emplace_back(resolved, std::move(target));
    }
  }

  // The path of the container that begins, inside the one open.
  std::string child_path() const {
    const frame& parent = frames_[depth_ - 1];
    return parent.object ? joined(parent.path, parent.members.back().name)
                         : joined(parent.path, std::to_string(parent.count - 1));
  }

  std::string key_text(std::size_t begin, std::size_t end) const {
    std::string name;
    if (!unescape_json_string(text_.substr(begin + 1, end - begin - 2), name)) name.clear();
    return name;
  }

  // Each forced member's bytes, with the separator that goes with it: up to
  // the next member kept, else from the member kept before it.
  void cut_members(const frame& f) {
    const auto& ms = f.members;
    for (std::size_t i = 0; i < ms.size(); ++i) {
      if (!ms[i].forced) continue;
      std::size_t next = i + 1;
      while (next < ms.size() && ms[next].forced) ++next;
      std::size_t begin = ms[i].begin, end = ms[i].end;
      if (next < ms.size()) {
        end = ms[i + 1].begin;
      } else if (std::any_of(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(i),
                             [](const member& m) { return !m.forced; })) {
        begin = ms[i - 1].end;  // the last kept, or the forced one before (cut to its end already)
      } else if (i + 1 < ms.size()) {
        end = ms[i + 1].begin;
      }
      cuts.push_back({begin, end, joined(f.path, ms[i].name)});
    }
  }

  std::string_view text_;
  const forced_nulls& nulls_;
  std::vector<frame> frames_;
  std::size_t depth_ = 0;
  std::vector<std::pair<const boost::json::value*, std::string>> pending_;
};

}  // namespace detail::provider

LLMDLQ_INLINE repair_result map_forced_nulls(std::string_view json, const forced_nulls& nulls) {
  repair_result result;
  detail::provider::forced_null_finder finder(json, nulls);
  detail::stream::json_prefix reader;
  reader.feed(json, 0, finder);
  if (reader.state() != detail::stream::json_prefix::standing::open || finder.cuts.empty()) {
    result.json = std::string(json);
    return result;
  }
  auto& cuts = finder.cuts;
  std::sort(cuts.begin(), cuts.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
  std::size_t copied = 0;
  for (auto& c : cuts) {
    result.json.append(json.substr(copied, c.begin - copied));
    copied = c.end;
    result.actions.push_back({"forced_null", repair_tier::lossless, c.begin, c.end,
                              std::string(json.substr(c.begin, c.end - c.begin)), "", std::move(c.path)});
  }
  result.json.append(json.substr(copied));
  return result;
}

LLMDLQ_END_NAMESPACE
