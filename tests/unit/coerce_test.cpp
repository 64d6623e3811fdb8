// SPDX-License-Identifier: MIT
// Schema-guided coercion: what is coerced, what never is, and how it is
// reported; and coercion inside process_llm_response.
#include <llmdlq/coerce.hpp>
#include <llmdlq/process.hpp>

#include <string>

#include <boost/json.hpp>

#include "catch.hpp"

namespace coerce_test {

namespace {

constexpr std::string_view order_schema = R"({
  "type": "object",
  "required": ["id", "status"],
  "properties": {
    "id": {"type": "integer"},
    "amount": {"type": "number"},
    "paid": {"type": "boolean"},
    "status": {"enum": ["paid", "open", "void"]},
    "tags": {"type": "array", "items": {"type": "string"}},
    "lines": {"type": "array", "items": {"type": "integer"}},
    "note": {"type": "string"},
    "currency": {"enum": ["EUR", "eur"]}
  }
})";

const llmdlq::schema& schema() {
  static const llmdlq::schema compiled = *llmdlq::schema::compile(order_schema);
  return compiled;
}

llmdlq::coerce_result coerced(std::string_view json) {
  auto result = llmdlq::coerce(json, schema());
  INFO(json);
  REQUIRE(result.has_value());
  for (const auto& a : result->actions) CHECK(a.tier == llmdlq::repair_tier::coercion);
  return std::move(*result);
}

bool valid(std::string_view json) {
  llmdlq::json_parser parser;
  auto doc = parser.parse(json);
  return doc && schema().is_valid(*doc);
}

}  // namespace

TEST_CASE("quoted numbers and booleans become what the schema wants", "[coerce]") {
  const auto r = coerced(R"({"id": "42", "status": "paid", "amount": "12.50", "paid": "true"})");
  CHECK(r.json == R"({"id": 42, "status": "paid", "amount": 12.50, "paid": true})");
  REQUIRE(r.actions.size() == 3);
  CHECK(r.actions[0].code == "string_to_number");
  CHECK(r.actions[0].path == "/id");
  CHECK(r.actions[0].before == "\"42\"");
  CHECK(r.actions[0].after == "42");
  CHECK(r.actions[0].begin == 7);
  CHECK(r.actions[0].end == 11);
  CHECK(r.actions[2].code == "string_to_boolean");
  CHECK(llmdlq::to_json(r.actions[0]).at("path") == "/id");
  CHECK(valid(r.json));
}

TEST_CASE("a float is never rounded into an integer, and text is not a number", "[coerce]") {
  auto r = coerced(R"({"id": "4.5", "status": "paid"})");
  CHECK(r.json == R"({"id": "4.5", "status": "paid"})");
  CHECK(r.actions.empty());
  r = coerced(R"({"id": "42 apples", "status": "paid", "amount": " 3"})");
  CHECK(r.actions.empty());
  // Where the schema wants a string, a numeric string stays a string.
  r = coerced(R"({"id": 1, "status": "paid", "note": "42"})");
  CHECK(r.actions.empty());
}

TEST_CASE("a lone value where an array is wanted is wrapped", "[coerce]") {
  auto r = coerced(R"({"id": 1, "status": "open", "tags": "urgent"})");
  CHECK(r.json == R"({"id": 1, "status": "open", "tags": ["urgent"]})");
  REQUIRE(r.actions.size() == 1);
  CHECK(r.actions[0].code == "wrap_in_array");
  // Wrapped, then the element coerced in turn.
  r = coerced(R"({"id": 1, "status": "open", "lines": "7"})");
  CHECK(r.json == R"({"id": 1, "status": "open", "lines": [7]})");
  REQUIRE(r.actions.size() == 2);
  CHECK(r.actions[1].path == "/lines/0");
  CHECK(valid(r.json));
}

TEST_CASE("an enum's spelling is fixed only when one value matches", "[coerce]") {
  auto r = coerced(R"({"id": 1, "status": " Paid."})");
  CHECK(r.json == R"({"id": 1, "status": "paid"})");
  REQUIRE(r.actions.size() == 1);
  CHECK(r.actions[0].code == "enum_spelling");
  CHECK(coerced(R"({"id": 1, "status": "OPEN"})").json == R"({"id": 1, "status": "open"})");
  // No near match: left for the schema to report.
  CHECK(coerced(R"({"id": 1, "status": "pending"})").actions.empty());
  // "Eur" is as close to "EUR" as to "eur": a guess, so an error.
  const auto ambiguous = llmdlq::coerce(R"({"id": 1, "status": "paid", "currency": "Eur"})", schema());
  REQUIRE_FALSE(ambiguous.has_value());
  CHECK(ambiguous.error().path == "/currency");
}

TEST_CASE("a null optional property is removed, a required one is not", "[coerce]") {
  auto r = coerced(R"({"id": 1, "note": null, "status": "void"})");
  CHECK(r.json == R"({"id": 1, "status": "void"})");
  REQUIRE(r.actions.size() == 1);
  CHECK(r.actions[0].code == "drop_null_property");
  CHECK(coerced(R"({"note": null, "id": 1, "status": "void"})").json == R"({ "id": 1, "status": "void"})");
  r = coerced(R"({"id": null, "status": "void"})");
  CHECK(r.json == R"({"id": null, "status": "void"})");
}

TEST_CASE("process_llm_response coerces only when asked, and reports it", "[coerce]") {
  constexpr std::string_view raw = R"({"id": "42", "status": "Paid"})";
  llmdlq::process_options options;
  const auto strict = llmdlq::process_llm_response(raw, schema(), {}, options);
  REQUIRE_FALSE(strict.has_value());
  CHECK(strict.error().failure.category == llmdlq::failure_category::schema);

  options.coerce = true;
  const auto result = llmdlq::process_llm_response(raw, schema(), {}, options);
  REQUIRE(result.has_value());
  CHECK(result->json == R"({"id": 42, "status": "paid"})");
  REQUIRE(result->repairs.size() == 2);
  CHECK(result->repairs[0].tier == llmdlq::repair_tier::coercion);

  // Syntax repair and coercion together.
  const auto both = llmdlq::process_llm_response("```json\n{'id': '7', 'status': 'open',}\n```", schema(), {}, options);
  REQUIRE(both.has_value());
  CHECK(both->json == R"({"id": 7, "status": "open"})");
}

}  // namespace coerce_test
