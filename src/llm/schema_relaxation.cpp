// SPDX-License-Identifier: MIT
#include "llmdlq/llm/schema_relaxation.hpp"

#include <algorithm>
#include <string_view>

#include <boost/json/serialize.hpp>

LLMDLQ_BEGIN_NAMESPACE

namespace {

bool is_waived(const validation_error& error, const schema_relaxation& relaxation) {
  if (relaxation.allow_additional_properties &&
      (error.keyword == "additionalProperties" || error.keyword == "unevaluatedProperties")) {
    return true;
  }
  return relaxation.allow_format_failures && error.keyword == "format";
}

// A JSON Pointer's last reference token, unescaped (~1 is '/', ~0 is '~').
std::string last_token(std::string_view pointer) {
  const std::string_view raw = pointer.substr(pointer.rfind('/') + 1);
  std::string token;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '~' && i + 1 < raw.size()) {
      token.push_back(raw[i + 1] == '1' ? '/' : '~');
      ++i;
    } else {
      token.push_back(raw[i]);
    }
  }
  return token;
}

std::string_view parent_of(std::string_view pointer) { return pointer.substr(0, pointer.rfind('/')); }

std::size_t required_errors_at(const std::vector<validation_error>& errors, std::string_view pointer) {
  return static_cast<std::size_t>(std::count_if(errors.begin(), errors.end(), [&](const validation_error& e) {
    return e.keyword == "required" && e.instance_path == pointer;
  }));
}

}  // namespace

expected<relaxed_document, relaxation_error> relax(const boost::json::value& document, const schema& schema,
                                                   const schema_relaxation& relaxation, const validate_options& rules) {
  boost::json::value doc = document;
  relaxed_document result;
  validate_options options = rules;
  options.max_errors = 256;
  auto errors = schema.validate(doc, options);
  // Each round removes one property, so the rounds are bounded by the
  // document's size; the cap keeps a pathological schema from looping long.
  for (int round = 0; round < 256; ++round) {
    std::vector<validation_error> remaining;
    for (const auto& error : errors) {
      if (!is_waived(error, relaxation)) remaining.push_back(error);
    }
    if (remaining.empty()) {
      for (const auto& error : errors) result.waived_paths.push_back(error.instance_path);
      std::sort(result.waived_paths.begin(), result.waived_paths.end());
      result.waived_paths.erase(std::unique(result.waived_paths.begin(), result.waived_paths.end()),
                                result.waived_paths.end());
      result.json = boost::json::serialize(doc);
      return result;
    }
    if (!relaxation.drop_failing_optional_properties) {
      return unexpected(relaxation_error{"the declared relaxations do not cover these errors", std::move(remaining)});
    }
    // A property the schema does not declare is not an optional one: only
    // allow_additional_properties covers it.
    for (const auto& error : remaining) {
      if (error.keyword == "additionalProperties" || error.keyword == "unevaluatedProperties") {
        return unexpected(relaxation_error{"a property the schema does not declare (allow_additional_properties "
                                           "is not declared)",
                                           std::move(remaining)});
      }
    }
    // The deepest failing property first: dropping it may cure its parents.
    const auto victim = std::max_element(remaining.begin(), remaining.end(), [](const auto& a, const auto& b) {
      return a.instance_path.size() < b.instance_path.size();
    });
    const std::string path = victim->instance_path;
    boost::system::error_code ec;
    boost::json::value* parent = path.empty() ? nullptr : doc.find_pointer(parent_of(path), ec);
    boost::json::object* object = parent != nullptr && !ec ? parent->if_object() : nullptr;
    if (object == nullptr || !object->contains(last_token(path))) {
      return unexpected(relaxation_error{"a failing value is not an object's property: " +
                                             (path.empty() ? std::string("the document itself") : path),
                                         std::move(remaining)});
    }
    const std::size_t required_before = required_errors_at(errors, parent_of(path));
    object->erase(last_token(path));
    auto after = schema.validate(doc, options);
    if (required_errors_at(after, parent_of(path)) > required_before) {
      return unexpected(relaxation_error{"a failing property is required: " + path, std::move(remaining)});
    }
    result.dropped_paths.push_back(path);
    errors = std::move(after);
  }
  return unexpected(relaxation_error{"too many failing properties to relax", std::move(errors)});
}

LLMDLQ_END_NAMESPACE
