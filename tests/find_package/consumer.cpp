// SPDX-License-Identifier: MIT
// A host of an installed llmdlq: validates, judges a response, and (when
// built with LLMDLQ_CONSUMER_SQLITE) dead-letters it into SQLite.
#include <cstdio>

#include <llmdlq/llmdlq.hpp>
#ifdef LLMDLQ_CONSUMER_SQLITE
#  include <llmdlq/sqlite/store.hpp>
#endif

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
#ifdef LLMDLQ_CONSUMER_SQLITE
  auto dlq = llmdlq::sqlite_store::open("consumer-dlq.db");
  if (!dlq || !dlq->publish(judged.error())) return 5;
#endif
  std::printf("llmdlq %s found and working\n", llmdlq::version_string);
  return 0;
}
