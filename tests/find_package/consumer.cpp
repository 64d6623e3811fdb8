// SPDX-License-Identifier: MIT
// Validates one good and one bad document through an installed llmdlq.
#include <cstdio>

#include <llmdlq/json_parser.hpp>
#include <llmdlq/schema.hpp>
#include <llmdlq/version.hpp>

int main() {
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "required": ["total"]})");
  if (!schema) return 1;
  llmdlq::json_parser parser;
  const auto good = parser.parse(R"({"total": 1})");
  if (!good || !schema->is_valid(*good)) return 2;
  const auto bad = parser.parse(R"({"sum": 1})");
  if (!bad || schema->validate(*bad).size() != 1) return 3;
  std::printf("llmdlq %s found and working\n", llmdlq::version_string);
  return 0;
}
