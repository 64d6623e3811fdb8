// SPDX-License-Identifier: MIT
// A host of llmdlq's core: validates, and judges a response into a dead letter.
#include <cstdio>

#include <llmdlq/llmdlq.hpp>

int main() {
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "required": ["total"]})");
  if (!schema) return 1;
  llmdlq::json_parser parser;
  const auto good = parser.parse(R"({"total": 1})");
  if (!good || !schema->is_valid(*good)) return 2;
  const auto bad = parser.parse(R"({"sum": 1})");
  if (!bad || schema->validate(*bad).size() != 1) return 3;
  const auto judged = llmdlq::process_llm_response("```json\n{\"sum\": 1}\n```", *schema, {});
  if (judged || judged.error().failure.category != llmdlq::failure_category::schema) return 4;
  std::printf("llmdlq %s: core works\n", llmdlq::version_string);
  return 0;
}
