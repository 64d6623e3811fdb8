// SPDX-License-Identifier: MIT
// What the llm clients' JSON bodies share: the model and messages of a
// request, its schema parsed, and a token count read from an answer.
// Private to llmdlq_llm.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/llm/client.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace llm_detail {

/// `{"model": ..., "messages": [...]}`; why not, when a field cannot be sent
/// as it stands (a temperature that is not finite).
inline expected<boost::json::object, std::string> chat_body(const llm_request& request) {
  if (request.temperature && !std::isfinite(*request.temperature)) {
    return unexpected(std::string("temperature is not a finite number"));
  }
  boost::json::object body;
  body["model"] = request.model;
  boost::json::array messages;
  for (const chat_message& message : request.messages) {
    messages.push_back(boost::json::object{{"role", message.role}, {"content", message.content}});
  }
  body["messages"] = std::move(messages);
  return body;
}

/// The request's json_schema as JSON: nothing when it has none.
inline expected<std::optional<boost::json::value>, std::string> schema_of(const llm_request& request) {
  if (!request.json_schema) return std::optional<boost::json::value>();
  boost::system::error_code ec;
  boost::json::value schema = boost::json::parse(*request.json_schema, ec);
  if (ec) return unexpected("json_schema is not JSON: " + ec.message());
  return std::optional<boost::json::value>(std::move(schema));
}

/// A token count an answer reports (0 when absent or not a count).
inline std::int64_t json_count(const boost::json::object& object, std::string_view name) {
  const auto* count = object.if_contains(name);
  if (!count) return 0;
  if (const auto* n = count->if_int64()) return *n;
  if (const auto* n = count->if_uint64()) return static_cast<std::int64_t>(std::min<std::uint64_t>(*n, INT64_MAX));
  return 0;
}

}  // namespace llm_detail
LLMDLQ_END_NAMESPACE
