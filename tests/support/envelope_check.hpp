// SPDX-License-Identifier: MIT
// Every envelope a test produces goes through here: it must validate against
// schemas/envelope-v1.json and survive a JSON round trip unchanged.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>

#include <llmdlq/envelope.hpp>
#include <llmdlq/schema.hpp>

#include "catch.hpp"

namespace llmdlq::test {

inline const llmdlq::schema& envelope_schema() {
  static const llmdlq::schema schema = [] {
    std::ifstream in(std::filesystem::path(LLMDLQ_SOURCE_DIR) / "schemas" / "envelope-v1.json");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    llmdlq::compile_options options;
    options.format_assertion = true;
    auto compiled = llmdlq::schema::compile(text, options);
    REQUIRE(compiled.has_value());
    return *std::move(compiled);
  }();
  return schema;
}

/// Checks `e` against the published schema and the round trip; returns it.
inline const envelope& check_envelope(const envelope& e) {
  const std::string json = serialize(e);
  llmdlq::parse_options limits;
  limits.max_size = 1u << 30;
  llmdlq::json_parser parser(limits);
  auto doc = parser.parse(json);
  REQUIRE(doc.has_value());
  const auto errors = envelope_schema().validate(*doc);
  INFO(json.substr(0, 2000));
  for (const auto& error : errors) UNSCOPED_INFO(error.instance_path << " " << error.message);
  CHECK(errors.empty());
  auto back = parse_envelope(json);
  REQUIRE(back.has_value());
  CHECK(*back == e);
  CHECK(serialize(*back) == json);
  return e;
}

}  // namespace llmdlq::test
