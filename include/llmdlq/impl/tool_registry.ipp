// SPDX-License-Identifier: MIT
// Definitions for tool_registry.hpp: definitions read in each provider's
// shape, and lowered into it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include <boost/json/parse.hpp>
#include <fmt/format.h>

#include "llmdlq/detail/json/utf8_check.hpp"
#include "llmdlq/detail/schema/uri.hpp"
#include "llmdlq/tool_registry.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail::tools {

constexpr std::size_t max_name_bytes = 128;

// Why `name` cannot name a tool, or nothing.
inline std::optional<std::string> name_fault(std::string_view name) {
  if (name.empty()) return "a tool needs a name";
  if (name.size() > max_name_bytes) return fmt::format("a tool's name is at most {} bytes", max_name_bytes);
  if (detail::first_invalid_utf8(name) != name.size()) return "a tool's name must be UTF-8";
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "a tool's name has a control character";
  }
  return std::nullopt;
}

// Whether `profile`'s API takes `name` for a function (see lower_tools).
inline bool provider_takes_name(std::string_view name, provider_profile profile) {
  if (name.empty() || name.size() > 64) return false;
  const auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  };
  if (profile == provider_profile::gemini) {
    const char first = name.front();
    if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '_')) return false;
    for (const char c : name) {
      if (!plain(c) && c != '.') return false;
    }
    return true;
  }
  for (const char c : name) {
    if (!plain(c)) return false;
  }
  return true;
}

// The string member `key` of `o`, or empty.
inline std::string text_of(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// A function definition's parts, wherever its shape keeps them.
struct definition_parts {
  const boost::json::object* function = nullptr;  // where name and description are
  const boost::json::value* parameters = nullptr;
};

inline definition_parts parts_of(const boost::json::object& entry) {
  if (const auto* f = entry.if_contains("function"); f && f->is_object()) {  // OpenAI, Ollama
    return {&f->get_object(), f->get_object().if_contains("parameters")};
  }
  if (const auto* s = entry.if_contains("input_schema")) return {&entry, s};          // Anthropic
  if (const auto* s = entry.if_contains("parametersJsonSchema")) return {&entry, s};  // Gemini
  return {&entry, entry.if_contains("parameters")};
}

}  // namespace detail::tools

LLMDLQ_INLINE expected<void, tool_registry_error> tool_registry::add(std::string name, boost::json::value parameters,
                                                                     std::string description,
                                                                     const compile_options& options) {
  if (auto fault = detail::tools::name_fault(name)) return unexpected(tool_registry_error{"/name", *fault});
  if (find(name))
    return unexpected(tool_registry_error{name, fmt::format("a tool named '{}' is already registered", name)});
  auto compiled = schema::compile(parameters, options);
  if (!compiled) {
    return unexpected(tool_registry_error{
        name, fmt::format("the parameters of '{}' are not a schema{}: {}", name,
                          compiled.error().location.empty() ? "" : " at " + compiled.error().location,
                          compiled.error().message)});
  }
  by_name_.emplace(name, tools_.size());
  tools_.push_back({std::move(name), std::move(description), std::move(parameters), std::move(*compiled), nullptr});
  return {};
}

LLMDLQ_INLINE const tool_definition* tool_registry::find(std::string_view name) const noexcept {
  const auto found = by_name_.find(name);
  return found == by_name_.end() ? nullptr : &tools_[found->second];
}

LLMDLQ_INLINE std::string tool_registry::names() const {
  std::string all;
  for (const auto& tool : tools_) {
    if (!all.empty()) all += ", ";
    all += tool.name;
  }
  return all;
}

LLMDLQ_INLINE expected<tool_registry, tool_registry_error> tool_registry::from_json(
    const boost::json::value& definitions, const compile_options& options) {
  tool_registry registry;
  const auto add_one = [&](std::string name, const boost::json::value* parameters, std::string description,
                           const std::string& pointer) -> expected<void, tool_registry_error> {
    const boost::json::value any_object = boost::json::object{{"type", "object"}};
    auto added = registry.add(std::move(name), parameters ? *parameters : any_object, std::move(description), options);
    if (!added) return unexpected(tool_registry_error{pointer, std::move(added.error().message)});
    return {};
  };
  if (const auto* by_name = definitions.if_object()) {
    for (const auto& [name, parameters] : *by_name) {
      std::string pointer;
      detail::append_pointer_token(pointer, name);
      auto added = add_one(std::string(name), &parameters, {}, pointer);
      if (!added) return unexpected(std::move(added.error()));
    }
    return registry;
  }
  const auto* list = definitions.if_array();
  if (!list) return unexpected(tool_registry_error{"", "tool definitions are an array or an object of name to schema"});
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string pointer = fmt::format("/{}", i);
    const auto* entry = (*list)[i].if_object();
    if (!entry) return unexpected(tool_registry_error{pointer, "a tool definition is an object"});
    if (const auto* group = entry->if_contains("functionDeclarations")) {  // Gemini
      const auto* declarations = group->if_array();
      if (!declarations) return unexpected(tool_registry_error{pointer + "/functionDeclarations", "must be an array"});
      for (std::size_t j = 0; j < declarations->size(); ++j) {
        const std::string at = fmt::format("{}/functionDeclarations/{}", pointer, j);
        const auto* d = (*declarations)[j].if_object();
        if (!d) return unexpected(tool_registry_error{at, "a function declaration is an object"});
        const auto parts = detail::tools::parts_of(*d);
        auto added = add_one(detail::tools::text_of(*d, "name"), parts.parameters,
                             detail::tools::text_of(*d, "description"), at);
        if (!added) return unexpected(std::move(added.error()));
      }
      continue;
    }
    const auto parts = detail::tools::parts_of(*entry);
    auto added = add_one(detail::tools::text_of(*parts.function, "name"), parts.parameters,
                         detail::tools::text_of(*parts.function, "description"), pointer);
    if (!added) return unexpected(std::move(added.error()));
  }
  return registry;
}

LLMDLQ_INLINE expected<tool_registry, tool_registry_error> tool_registry::from_json(std::string_view definitions,
                                                                                    const compile_options& options) {
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(definitions, ec);
  if (ec) return unexpected(tool_registry_error{"", "tool definitions are not JSON: " + ec.message()});
  return from_json(parsed, options);
}

LLMDLQ_INLINE expected<lowered_tools, lowering_error> lower_tools(const tool_registry& tools, provider_profile profile,
                                                                  const lowering_options& options) {
  lowered_tools out;
  out.profile = profile;
  out.registry = tools;
  boost::json::array declarations;  // Gemini's, gathered in one entry
  for (std::size_t i = 0; i < tools.tools_.size(); ++i) {
    const tool_definition& tool = tools.tools_[i];
    const std::string pointer = fmt::format("/{}", i);
    if (!detail::tools::provider_takes_name(tool.name, profile)) {
      return unexpected(lowering_error{
          pointer + "/name", fmt::format("{} does not take '{}' as a function name", to_string(profile), tool.name)});
    }
    auto lowered = lower_schema(tool.parameters, profile, options);
    if (!lowered) return unexpected(lowering_error{pointer + lowered.error().pointer, lowered.error().message});
    out.registry.tools_[i].nulls = lowered->nulls;
    const boost::json::value& parameters = lowered->schema;
    switch (profile) {
      case provider_profile::anthropic: {
        boost::json::object d{{"name", tool.name}};
        if (!tool.description.empty()) d.emplace("description", tool.description);
        d.emplace("input_schema", parameters);
        if (lowered->strict) d.emplace("strict", true);
        out.definitions.emplace_back(std::move(d));
        break;
      }
      case provider_profile::gemini: {
        boost::json::object d{{"name", tool.name}};
        if (!tool.description.empty()) d.emplace("description", tool.description);
        d.emplace("parametersJsonSchema", parameters);
        declarations.emplace_back(std::move(d));
        break;
      }
      default: {
        boost::json::object f{{"name", tool.name}};
        if (!tool.description.empty()) f.emplace("description", tool.description);
        f.emplace("parameters", parameters);
        if (profile == provider_profile::openai_strict) f.emplace("strict", lowered->strict);
        out.definitions.emplace_back(boost::json::object{{"type", "function"}, {"function", std::move(f)}});
        break;
      }
    }
    out.parameters.push_back(std::move(*lowered));
  }
  if (profile == provider_profile::gemini && !declarations.empty()) {
    out.definitions.emplace_back(boost::json::object{{"functionDeclarations", std::move(declarations)}});
  }
  return out;
}

LLMDLQ_END_NAMESPACE
