// SPDX-License-Identifier: MIT
// Typed extraction: a struct described with Boost.Describe is its own schema,
// and an accepted response becomes an instance of it.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/describe.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>
#include <simdjson.h>

#include "llmdlq/config.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/schema_constraints.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail {

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
inline constexpr bool is_described_struct =
    boost::describe::has_describe_members<T>::value && std::is_class_v<T>;

template <class T>
boost::json::value schema_of();

template <class T>
concept has_schema_constraints = requires { std::string_view(schema_constraints<T>::json); };

// Adds the keywords of `extra` to `schema`; an `items` object goes into the
// elements' schema. `where` names the member, for errors.
inline void add_constraints(boost::json::object& schema, const boost::json::object& extra, const std::string& where) {
  for (const auto& [keyword, value] : extra) {
    const std::string_view k(keyword.data(), keyword.size());
    if (k == "type" || k == "properties" || k == "required" || k == "additionalProperties" || k == "$ref") {
      throw schema_constraint_error("llmdlq::schema_constraints: " + where + " may not replace '" + std::string(k) +
                                    "', which gives the member its C++ type's shape");
    }
    if (k == "items" && value.is_object() && schema.contains("items") && schema.at("items").is_object()) {
      add_constraints(schema.at("items").as_object(), value.get_object(), where + "/items");
      continue;
    }
    schema.insert_or_assign(keyword, value);
  }
}

// T's schema_constraints as a JSON object whose keys are all members of T.
template <class T>
boost::json::object constraints_of() {
  if constexpr (!has_schema_constraints<T>) {
    return {};
  } else {
    boost::json::error_code ec;
    auto parsed = boost::json::parse(std::string_view(schema_constraints<T>::json), ec);
    if (ec || !parsed.is_object()) {
      throw schema_constraint_error("llmdlq::schema_constraints: the json is not a JSON object" +
                                    (ec ? ": " + ec.message() : std::string()));
    }
    using members = boost::describe::describe_members<T, boost::describe::mod_public | boost::describe::mod_inherited>;
    for (const auto& [name, extra] : parsed.get_object()) {
      bool found = false;
      boost::mp11::mp_for_each<members>([&](auto member) { found = found || name == member.name; });
      if (!found) {
        throw schema_constraint_error("llmdlq::schema_constraints: '" + std::string(name) + "' is no member of the struct");
      }
      if (!extra.is_object()) {
        throw schema_constraint_error("llmdlq::schema_constraints: '" + std::string(name) +
                                      "' must map to an object of keywords");
      }
    }
    return std::move(parsed.get_object());
  }
}

template <class T>
boost::json::object object_schema() {
  boost::json::object properties;
  boost::json::array required;
  const boost::json::object constraints = constraints_of<T>();
  using members = boost::describe::describe_members<T, boost::describe::mod_public | boost::describe::mod_inherited>;
  boost::mp11::mp_for_each<members>([&](auto member) {
    using type = std::remove_cvref_t<decltype(std::declval<T&>().*member.pointer)>;
    const auto extra = constraints.find(member.name);
    const auto constrained = [&](boost::json::value schema) {
      if (extra != constraints.end()) add_constraints(schema.as_object(), extra->value().get_object(), member.name);
      return schema;
    };
    if constexpr (is_optional<type>::value) {
      // Optional members may be absent or null.
      properties.emplace(member.name, boost::json::object{{"anyOf", {constrained(schema_of<typename type::value_type>()),
                                                                     {{"type", "null"}}}}});
    } else {
      properties.emplace(member.name, constrained(schema_of<type>()));
      required.push_back(boost::json::string(member.name));
    }
  });
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)},
          {"additionalProperties", false}};
}

template <class T>
boost::json::value schema_of() {
  if constexpr (std::is_same_v<T, bool>) {
    return {{"type", "boolean"}};
  } else if constexpr (std::is_integral_v<T>) {
    return {{"type", "integer"}, {"minimum", std::numeric_limits<T>::min()}, {"maximum", std::numeric_limits<T>::max()}};
  } else if constexpr (std::is_floating_point_v<T>) {
    return {{"type", "number"}};
  } else if constexpr (std::is_same_v<T, std::string>) {
    return {{"type", "string"}};
  } else if constexpr (boost::describe::has_describe_enumerators<T>::value) {
    boost::json::array names;
    boost::mp11::mp_for_each<boost::describe::describe_enumerators<T>>([&](auto e) { names.push_back(boost::json::string(e.name)); });
    return {{"enum", std::move(names)}};
  } else if constexpr (is_vector<T>::value) {
    return {{"type", "array"}, {"items", schema_of<typename T::value_type>()}};
  } else if constexpr (is_described_struct<T>) {
    return object_schema<T>();
  } else {
    static_assert(sizeof(T) == 0, "llmdlq: describe this type with BOOST_DESCRIBE_STRUCT or BOOST_DESCRIBE_ENUM");
  }
}

/// Reads an instance of T from a document that passed T's schema.
template <class T>
expected<T, std::string> read_as(simdjson::dom::element v, const std::string& path) {
  auto wrong = [&](std::string_view what) { return unexpected(path + ": expected " + std::string(what)); };
  if constexpr (std::is_same_v<T, bool>) {
    auto b = v.get_bool();
    return b.error() ? wrong("a boolean") : expected<T, std::string>(b.value_unsafe());
  } else if constexpr (std::is_integral_v<T>) {
    if (v.is_double()) {  // 3.0 is an integer in JSON Schema's eyes
      const double d = v.get_double().value_unsafe();
      if (d != static_cast<double>(static_cast<T>(d))) return wrong("an integer in range");
      return static_cast<T>(d);
    }
    if constexpr (std::is_signed_v<T>) {
      auto n = v.get_int64();
      if (n.error() || n.value_unsafe() < std::numeric_limits<T>::min() || n.value_unsafe() > std::numeric_limits<T>::max()) {
        return wrong("an integer in range");
      }
      return static_cast<T>(n.value_unsafe());
    } else {
      auto n = v.get_uint64();
      if (n.error() || n.value_unsafe() > std::numeric_limits<T>::max()) return wrong("an integer in range");
      return static_cast<T>(n.value_unsafe());
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    auto d = v.get_double();
    return d.error() ? wrong("a number") : expected<T, std::string>(static_cast<T>(d.value_unsafe()));
  } else if constexpr (std::is_same_v<T, std::string>) {
    auto s = v.get_string();
    return s.error() ? wrong("a string") : expected<T, std::string>(std::string(s.value_unsafe()));
  } else if constexpr (boost::describe::has_describe_enumerators<T>::value) {
    auto s = v.get_string();
    if (s.error()) return wrong("a string");
    std::optional<T> found;
    boost::mp11::mp_for_each<boost::describe::describe_enumerators<T>>([&](auto e) {
      if (s.value_unsafe() == e.name) found = e.value;
    });
    if (!found) return wrong("one of the enum's names");
    return *found;
  } else if constexpr (is_vector<T>::value) {
    auto array = v.get_array();
    if (array.error()) return wrong("an array");
    T out;
    std::size_t i = 0;
    for (const auto element : array.value_unsafe()) {
      auto item = read_as<typename T::value_type>(element, path + "/" + std::to_string(i++));
      if (!item) return unexpected(std::move(item.error()));
      out.push_back(std::move(*item));
    }
    return out;
  } else if constexpr (is_described_struct<T>) {
    auto object = v.get_object();
    if (object.error()) return wrong("an object");
    T out{};
    std::optional<std::string> problem;
    using members = boost::describe::describe_members<T, boost::describe::mod_public | boost::describe::mod_inherited>;
    boost::mp11::mp_for_each<members>([&](auto member) {
      if (problem) return;
      using type = std::remove_cvref_t<decltype(out.*member.pointer)>;
      const std::string at = path + "/" + member.name;
      auto field = object.value_unsafe().at_key(member.name);
      if constexpr (is_optional<type>::value) {
        if (field.error() || field.value_unsafe().is_null()) return;
        auto value = read_as<typename type::value_type>(field.value_unsafe(), at);
        if (!value) return void(problem = std::move(value.error()));
        out.*member.pointer = std::move(*value);
      } else {
        if (field.error()) return void(problem = at + ": missing");
        auto value = read_as<type>(field.value_unsafe(), at);
        if (!value) return void(problem = std::move(value.error()));
        out.*member.pointer = std::move(*value);
      }
    });
    if (problem) return unexpected(std::move(*problem));
    return out;
  }
}

}  // namespace detail

/// T's JSON Schema (draft 2020-12): described structs are objects with
/// `additionalProperties: false` whose members are required unless they are
/// std::optional (then they may also be null); std::vector is an array;
/// described enums are their enumerator names; integers carry their type's
/// range. A struct's schema_constraints add their keywords to its members'
/// schemas; a faulty one throws schema_constraint_error on first use.
template <class T>
[[nodiscard]] const boost::json::value& json_schema_for() {
  static const boost::json::value schema = [] {
    boost::json::value s = detail::schema_of<T>();
    s.as_object().emplace("$schema", "https://json-schema.org/draft/2020-12/schema");
    return s;
  }();
  return schema;
}

/// T's schema, compiled once on first use (thread-safe). Throws
/// schema_constraint_error when T's schema_constraints make a schema that
/// does not compile (a keyword with a value JSON Schema does not allow).
template <class T>
[[nodiscard]] const schema& schema_for() {
  static const schema compiled = [] {
    auto s = schema::compile(json_schema_for<T>());
    if (!s) {
      throw schema_constraint_error("llmdlq::schema_constraints: the schema does not compile" +
                                    (s.error().location.empty() ? std::string() : " at " + s.error().location) +
                                    ": " + s.error().message);
    }
    return *std::move(s);
  }();
  return compiled;
}

namespace detail {

/// An accepted response and the T read from it.
template <class T>
struct typed_result {
  accepted response;
  T value;
};

/// Judges `raw` against schema_for<T>() and reads the accepted document as
/// a T while it is still parsed.
template <class T>
expected<typed_result<T>, envelope> process_typed(std::string_view raw, const request_context& context,
                                                  const process_config& config) {
  std::optional<T> value;
  auto result = process_response(raw, schema_for<T>(), context, config,
                                 [&](const json_document& doc) -> std::optional<std::string> {
                                   auto read = read_as<T>(doc.root(), "");
                                   if (!read) return std::move(read.error());
                                   value = std::move(*read);
                                   return std::nullopt;
                                 });
  if (!result) return unexpected(std::move(result.error()));
  return typed_result<T>{std::move(*result), std::move(*value)};
}

}  // namespace detail

/// process_llm_response for a described type: an accepted response comes
/// back as a T, read straight from the parsed document.
template <class T>
[[nodiscard]] expected<T, envelope> process_llm_response(std::string_view raw, const request_context& context,
                                                         const process_config& config = {}) {
  auto result = detail::process_typed<T>(raw, context, config);
  if (!result) return unexpected(std::move(result.error()));
  return std::move(result->value);
}

LLMDLQ_END_NAMESPACE
