// SPDX-License-Identifier: MIT
// A schema a test needs compiled: a compile error fails the test, with
// where and why.
#pragma once

#include <string_view>
#include <utility>

#include <llmdlq/schema.hpp>

#include "catch.hpp"

namespace llmdlq::test {

inline llmdlq::schema compiled(std::string_view json, const llmdlq::compile_options& options = {}) {
  auto schema = llmdlq::schema::compile(json, options);
  if (!schema) FAIL(schema.error().location << ": " << schema.error().message);
  return std::move(*schema);
}

}  // namespace llmdlq::test
