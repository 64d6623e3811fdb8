// SPDX-License-Identifier: MIT
// Schema compilation and validation: the errors a user sees, compile errors
// with their locations, and the guarantees around them.
#include <algorithm>
#include <filesystem>
#include <thread>

#include <boost/json.hpp>
#include <llmdlq/schema.hpp>

#include "catch.hpp"
#include "support/compiled_schema.hpp"
#include "support/temp_dir.hpp"

namespace schema_test {

namespace {

using llmdlq::test::compiled;

llmdlq::schema_error compile_error(std::string_view json, llmdlq::compile_options options = {}) {
  auto schema = llmdlq::schema::compile(json, options);
  REQUIRE_FALSE(schema.has_value());
  return schema.error();
}

// Validates on both representations, checks they agree, returns the errors.
std::vector<llmdlq::validation_error> errors_of(const llmdlq::schema& schema, std::string_view json,
                                                std::size_t max_errors = 32) {
  llmdlq::json_parser parser;
  auto doc = parser.parse(json);
  REQUIRE(doc.has_value());
  const auto value = boost::json::parse(json);
  const auto errors = schema.validate(*doc, {max_errors});
  CHECK(schema.validate(doc->root(), {max_errors}) == errors);
  CHECK(schema.validate(value, {max_errors}) == errors);
  CHECK(schema.is_valid(*doc) == errors.empty());
  CHECK(schema.is_valid(doc->root()) == errors.empty());
  CHECK(schema.is_valid(value) == errors.empty());
  return errors;
}

constexpr std::string_view receipt_schema = R"({
  "type": "object",
  "required": ["total", "currency", "items"],
  "additionalProperties": false,
  "properties": {
    "total": {"type": "number", "minimum": 0, "multipleOf": 0.01},
    "currency": {"enum": ["EUR", "USD"]},
    "date": {"type": "string", "format": "date"},
    "items": {"type": "array", "minItems": 1,
              "items": {"$ref": "#/$defs/item"}}
  },
  "$defs": {
    "item": {"type": "object", "required": ["name"],
             "properties": {"name": {"type": "string", "minLength": 1}}}
  }
})";

}  // namespace

TEST_CASE("a valid document has no errors", "[schema]") {
  const auto schema = compiled(receipt_schema);
  CHECK(errors_of(schema, R"({"total": 19.99, "currency": "EUR", "items": [{"name": "tea"}]})").empty());
}

TEST_CASE("errors carry instance path, keyword location, keyword and message", "[schema]") {
  const auto schema = compiled(receipt_schema);
  const auto errors = errors_of(schema, R"({"total": -1, "currency": "euro", "items": [{"name": ""}, {}], "note": 1})");
  REQUIRE(errors.size() == 5);
  CHECK(errors[0] ==
        llmdlq::validation_error{"/total", "/properties/total/minimum", "minimum", "must be >= 0, found -1"});
  CHECK(errors[1] ==
        llmdlq::validation_error{"/currency", "/properties/currency/enum", "enum", R"(must be one of "EUR", "USD")"});
  CHECK(errors[2] == llmdlq::validation_error{"/items/0/name", "/properties/items/items/$ref/properties/name/minLength",
                                              "minLength", "must be at least 1 character long, found 0"});
  CHECK(errors[3] == llmdlq::validation_error{"/items/1", "/properties/items/items/$ref/required", "required",
                                              "missing required property 'name'"});
  CHECK(errors[4] == llmdlq::validation_error{"/note", "/additionalProperties", "additionalProperties",
                                              "property 'note' is not allowed"});
}

TEST_CASE("a count in a message takes the noun's form for that count", "[schema]") {
  const auto one = compiled(R"({"type": "object", "minProperties": 1, "properties": {
    "name": {"minLength": 1}, "tags": {"minItems": 1, "contains": {"const": "x"}},
    "any": {"anyOf": [{"type": "string"}]}, "one": {"oneOf": [{"type": "string"}]}}})");
  const auto messages = [](const std::vector<llmdlq::validation_error>& errors) {
    std::vector<std::string> out;
    for (const auto& e : errors) out.push_back(e.message);
    return out;
  };
  CHECK(messages(errors_of(one, "{}")) == std::vector<std::string>{"must have at least 1 property, found 0"});
  CHECK(messages(errors_of(one, R"({"name": "", "tags": [], "any": 1, "one": 1})")) ==
        std::vector<std::string>{"must be at least 1 character long, found 0", "must have at least 1 item, found 0",
                                 "must contain at least 1 matching item, found 0", "must match the schema in anyOf",
                                 "must match the schema in oneOf"});
  const auto two = compiled(R"({"properties": {"object": {"maxProperties": 2}, "list": {"maxItems": 2},
    "text": {"maxLength": 2}, "any": {"anyOf": [{"type": "string"}, {"type": "null"}]}}})");
  CHECK(messages(errors_of(two, R"({"object": {"a": 1, "b": 2, "c": 3}, "list": [1, 2, 3], "text": "abc",
    "any": 1})")) == std::vector<std::string>{"must have at most 2 properties, found 3",
                                              "must have at most 2 items, found 3",
                                              "must be at most 2 characters long, found 3",
                                              "must match at least one of the 2 schemas in anyOf"});
}

TEST_CASE("the error list is capped, and the cap is deterministic", "[schema]") {
  const auto schema = compiled(R"({"items": {"type": "integer"}})");
  const auto errors = errors_of(schema, "[0.5, 1.5, 2.5, 3.5, 4.5]", 3);
  REQUIRE(errors.size() == 3);
  CHECK(errors[2].instance_path == "/2");
  CHECK(errors[0].message == "expected integer, found number 0.5");
}

TEST_CASE("multipleOf is exact on decimals as written", "[schema]") {
  const auto schema = compiled(R"({"multipleOf": 0.01})");
  CHECK(errors_of(schema, "19.99").empty());
  CHECK(errors_of(schema, "0.07").empty());
  CHECK(errors_of(schema, "1e10").empty());
  CHECK(errors_of(schema, "4250.005").size() == 1);
  CHECK(errors_of(compiled(R"({"multipleOf": 0.5})"), "1e308").empty());
  // Beyond 2^53 a double-based check rounds to ...996, a multiple of 3.
  CHECK(errors_of(compiled(R"({"multipleOf": 3})"), "9007199254740995").size() == 1);
  CHECK(errors_of(compiled(R"({"multipleOf": 3})"), "-9").empty());
}

TEST_CASE("numbers compare exactly across integers and doubles", "[schema]") {
  const auto schema = compiled(R"({"maximum": 9007199254740992})");
  CHECK(errors_of(schema, "9007199254740992").empty());
  CHECK(errors_of(schema, "9007199254740993").size() == 1);
  CHECK(errors_of(compiled(R"({"exclusiveMinimum": 0.5})"), "0.5").size() == 1);
  CHECK(errors_of(compiled(R"({"minimum": -1})"), "18446744073709551615").empty());
  CHECK(errors_of(compiled(R"({"type": "integer"})"), "1.0").empty());
}

TEST_CASE("string lengths count code points", "[schema]") {
  const auto schema = compiled(R"({"minLength": 3, "maxLength": 4})");
  CHECK(errors_of(schema, R"("Дом")").empty());   // 6 bytes, 3 characters
  CHECK(errors_of(schema, R"("ගෙදර")").empty());  // 12 bytes, 4 characters
  CHECK(errors_of(schema, R"("ab")").size() == 1);
  CHECK(errors_of(schema, R"("කොළඹ 07")").size() == 1);
}

TEST_CASE("uniqueItems compares by JSON equality, also on large arrays", "[schema]") {
  const auto schema = compiled(R"({"uniqueItems": true})");
  CHECK(errors_of(schema, R"([1, 1.0])").size() == 1);
  CHECK(errors_of(schema, R"([{"a":1,"b":2}, {"b":2,"a":1}])").size() == 1);
  std::string big = "[";
  for (int i = 0; i < 5000; ++i) big += std::to_string(i) + ",";
  CHECK(errors_of(schema, big + "5000]").empty());
  const auto errors = errors_of(schema, big + "17]");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "items 17 and 5000 are equal");
}

// A looping model repeats one value: comparing every pair of equal items took
// 19 s for 40,000 of them. Each item is now compared only with the first
// occurrences that share its hash, and the first repeat ends the scan.
TEST_CASE("uniqueItems: many equal items, and a repeat at the end of many distinct ones", "[schema]") {
  const auto schema = compiled(R"({"uniqueItems": true})");
  std::string same = "[";
  for (int i = 0; i < 40000; ++i) same += std::string(i ? "," : "") + R"("Kubernetes")";
  auto errors = errors_of(schema, same + "]");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "items 0 and 1 are equal");
  std::string distinct = "[";
  for (int i = 0; i < 70000; ++i) distinct += R"("skill-)" + std::to_string(i) + R"(",)";
  CHECK(errors_of(schema, distinct + R"("last"])").empty());
  errors = errors_of(schema, distinct + R"("skill-0"])");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "items 0 and 70000 are equal");
  // Small arrays report the same pair: the first repeat, and the first item equal to it.
  errors = errors_of(schema, R"([1, 2, 3, 2, 1])");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "items 1 and 3 are equal");
}

TEST_CASE("format is an annotation unless asserted", "[schema]") {
  constexpr std::string_view json = R"({"format": "date"})";
  CHECK(errors_of(compiled(json), R"("2026-02-30")").empty());
  llmdlq::compile_options options;
  options.format_assertion = true;
  const auto errors = errors_of(compiled(json, options), R"("2026-02-30")");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].keyword == "format");
  CHECK(errors[0].message == "is not a valid date");
}

TEST_CASE("remote schemas come from options or the resolver", "[schema]") {
  llmdlq::compile_options options;
  options.remotes["https://example.com/money.json"] = R"({"type": "number", "minimum": 0})";
  int asked = 0;
  options.resolver = [&](std::string_view uri) -> std::optional<std::string> {
    ++asked;
    if (uri == "https://example.com/name.json") return R"({"type": "string"})";
    return std::nullopt;
  };
  const auto schema = compiled(R"({"$id": "https://example.com/receipt.json",
    "properties": {"total": {"$ref": "money.json"}, "name": {"$ref": "name.json"}}})",
                               options);
  CHECK(asked == 1);
  CHECK(errors_of(schema, R"({"total": 3, "name": "x"})").empty());
  CHECK(errors_of(schema, R"({"total": -3, "name": 1})").size() == 2);
}

TEST_CASE("the draft 2020-12 meta-schema is built in", "[schema]") {
  const auto meta = compiled(R"({"$ref": "https://json-schema.org/draft/2020-12/schema"})");
  CHECK(errors_of(meta, receipt_schema).empty());
  CHECK_FALSE(errors_of(meta, R"({"type": "text", "minLength": -1})").empty());
}

TEST_CASE("a bad schema is a compile error that names its location", "[schema]") {
  using llmdlq::schema_errc;
  llmdlq::compile_options strict;
  strict.refuse_broken_references = true;
  auto e = compile_error(R"({"properties": {"total": {"minimum": "0"}}})");
  CHECK(e.code == schema_errc::invalid_keyword);
  CHECK(e.location == "/properties/total/minimum");
  e = compile_error(R"({"type": "text"})");
  CHECK(e.location == "/type");
  e = compile_error(R"({"items": {"pattern": "(unclosed"}})");
  CHECK(e.code == schema_errc::invalid_pattern);
  CHECK(e.location == "/items/pattern");
  e = compile_error(R"({"properties": {"a": {"$ref": "#/$defs/missing"}}})", strict);
  CHECK(e.code == schema_errc::unresolved_reference);
  CHECK(e.location == "/properties/a/$ref");
  e = compile_error(R"({"$ref": "https://example.com/nowhere.json"})", strict);
  CHECK(e.code == schema_errc::unresolved_reference);
  e = compile_error(R"({"required": ["a", "a"]})");
  CHECK(e.location == "/required");
  e = compile_error(R"({"minItems": 1.5})");
  CHECK(e.location == "/minItems");
  e = compile_error(R"({"allOf": []})");
  CHECK(e.location == "/allOf");
  e = compile_error("[1]");
  CHECK(e.message == "a schema must be an object or a boolean");
}

TEST_CASE("schema text that is not JSON reports where", "[schema]") {
  const auto e = compile_error("{\"type\": \"object\",}");
  CHECK(e.code == llmdlq::schema_errc::invalid_json);
  REQUIRE(e.syntax.has_value());
  CHECK(e.syntax->offset == 18);
}

TEST_CASE("a reference loop that never consumes the instance is rejected when asked", "[schema]") {
  llmdlq::compile_options strict;
  strict.refuse_broken_references = true;
  CHECK(compile_error(R"({"$ref": "#"})", strict).code == llmdlq::schema_errc::infinite_recursion);
  CHECK(compile_error(R"({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/$defs/a"}}},
                          "$ref": "#/$defs/a"})",
                      strict)
            .code == llmdlq::schema_errc::infinite_recursion);
  // Recursion through properties descends into the instance and is fine.
  const auto tree = compiled(R"({"properties": {"child": {"$ref": "#"}}, "required": ["id"]})");
  CHECK(errors_of(tree, R"({"id": 1, "child": {"id": 2, "child": {}}})").size() == 1);
}

// Two self-references in one schema (npm's package.json schema has this
// shape) never finished compiling: the walk for x-llmdlq-pii marks followed
// every reference to a depth of 48, 2^48 paths.
TEST_CASE("a tree with several self-references compiles, marked or not", "[schema]") {
  const auto tree = compiled(R"({"properties": {"a": {"$ref": "#"}, "b": {"$ref": "#"}, "c": {"$ref": "#"}},
                                "required": ["id"]})");
  CHECK(errors_of(tree, R"({"id": 1, "a": {"id": 2, "b": {}}})").size() == 1);
  CHECK(tree.pii_paths().empty());
  // Marked: the walk is bounded by the schema's size, and still finds the marks near the root.
  const auto marked = compiled(R"({"properties": {"email": {"type": "string", "x-llmdlq-pii": "email"},
                                                 "left": {"$ref": "#"}, "right": {"$ref": "#"}}})");
  const auto paths = marked.pii_paths();
  CHECK(std::find(paths.begin(), paths.end(), llmdlq::pii_path{"/email", "email"}) != paths.end());
  CHECK(std::find(paths.begin(), paths.end(), llmdlq::pii_path{"/left/right/email", "email"}) != paths.end());
  CHECK(paths.size() < 200);
}

TEST_CASE("deeply nested schemas are rejected, not a stack overflow", "[schema]") {
  std::string deep;
  for (int i = 0; i < 2000; ++i) deep += R"({"not":)";
  deep += "true";
  for (int i = 0; i < 2000; ++i) deep += "}";
  llmdlq::compile_options options;
  options.max_nesting = 100;
  auto schema = llmdlq::schema::compile(deep, options);
  REQUIRE_FALSE(schema.has_value());
  CHECK(schema.error().code == llmdlq::schema_errc::too_complex);
}

TEST_CASE("one schema validates from many threads at once", "[schema]") {
  const auto schema = compiled(receipt_schema);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      llmdlq::json_parser parser;
      for (int i = 0; i < 500; ++i) {
        const bool good = i % 2 == 0;
        const auto doc = parser.parse(good ? R"({"total": 1, "currency": "USD", "items": [{"name": "a"}]})"
                                           : R"({"total": 1, "currency": "USD", "items": []})");
        if (!doc || schema.is_valid(*doc) != good) ++wrong;
        if (!good && schema.validate(*doc).size() != 1) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(wrong == 0);
}

TEST_CASE("documents for older drafts: items arrays and dependencies", "[schema]") {
  const auto schema = compiled(R"({"$schema": "http://json-schema.org/draft-07/schema#",
    "items": [{"type": "string"}], "additionalItems": false,
    "dependencies": {"card": ["card_last4"]}})");
  CHECK(errors_of(schema, R"(["a"])").empty());
  CHECK(errors_of(schema, R"(["a", 1])").size() == 1);
  CHECK(errors_of(schema, R"({"card": true})").size() == 1);
}

TEST_CASE("dialects: each resource in its own draft, an unknown one refused or warned about", "[schema][dialect]") {
  CHECK(compiled(R"({"type": "string"})").dialect() == llmdlq::dialect::draft2020_12);
  CHECK(compiled(R"({"$schema": "http://json-schema.org/draft-07/schema#"})").dialect() == llmdlq::dialect::draft7);
  CHECK(compiled(R"({"$schema": "https://json-schema.org/draft-04/schema"})").dialect() == llmdlq::dialect::draft4);
  llmdlq::compile_options draft4;
  draft4.default_dialect = llmdlq::dialect::draft4;
  CHECK(compiled(R"({"type": "string"})", draft4).dialect() == llmdlq::dialect::draft4);
  for (const auto d : {llmdlq::dialect::draft4, llmdlq::dialect::draft6, llmdlq::dialect::draft7,
                       llmdlq::dialect::draft2019_09, llmdlq::dialect::draft2020_12}) {
    CHECK(llmdlq::dialect_named(llmdlq::to_string(d)) == d);
    CHECK(llmdlq::dialect_of_meta_schema(llmdlq::meta_schema_uri(d)) == d);
  }
  CHECK_FALSE(llmdlq::dialect_named("draft5").has_value());

  constexpr std::string_view unknown = R"({"$schema": "https://example.com/my-meta", "minimum": 3})";
  const auto refused = compile_error(unknown);
  CHECK(refused.code == llmdlq::schema_errc::unknown_dialect);
  CHECK(refused.location == "/$schema");
  llmdlq::compile_options lenient;
  lenient.allow_unknown_dialect = true;
  const auto warned = compiled(unknown, lenient);
  REQUIRE(warned.warnings().size() == 1);
  CHECK(warned.warnings()[0].find("https://example.com/my-meta") != std::string::npos);
  CHECK(errors_of(warned, "2").size() == 1);  // compiled as the default draft
  CHECK(compiled(R"({"type": "string"})").warnings().empty());

  // Draft-04: boolean exclusive bounds and `id`; draft-07: "#name" ids, `$ref` over its siblings,
  // and no keyword of a later draft.
  const auto four = compiled(R"({"$schema": "http://json-schema.org/draft-04/schema#", "id": "http://example.com/r",
      "properties": {"n": {"minimum": 0, "exclusiveMinimum": true}, "c": {"$ref": "http://example.com/r#/definitions/c"}},
      "definitions": {"c": {"type": "string"}}})");
  CHECK(errors_of(four, R"({"n": 0})").at(0).schema_path == "/properties/n/exclusiveMinimum");
  CHECK(errors_of(four, R"({"n": 1, "c": "x"})").empty());
  CHECK(errors_of(four, R"({"c": 1})").at(0).schema_path == "/properties/c/$ref/type");
  const auto seven = compiled(R"({"$schema": "http://json-schema.org/draft-07/schema#",
      "properties": {"a": {"$ref": "#name", "maxLength": 1}, "b": {"prefixItems": [{"type": "string"}]},
                     "c": {"unevaluatedProperties": false, "dependentRequired": {"x": ["y"]}}},
      "definitions": {"named": {"$id": "#name", "type": "string"}}})");
  CHECK(errors_of(seven, R"({"a": "long", "b": [1], "c": {"x": 1}})").empty());
  CHECK(errors_of(seven, R"({"a": 1})").at(0).schema_path == "/properties/a/$ref/type");
  // A 2020-12 schema referring to a draft-07 one: each keeps its own meaning.
  llmdlq::compile_options mixed;
  mixed.remotes.emplace("https://example.com/seven", R"({"$schema": "http://json-schema.org/draft-07/schema#",
      "items": [{"type": "integer"}], "additionalItems": false})");
  const auto both = compiled(R"({"properties": {"old": {"$ref": "https://example.com/seven"},
                                               "new": {"prefixItems": [{"type": "integer"}], "items": false}}})",
                             mixed);
  CHECK(errors_of(both, R"({"old": [1], "new": [1]})").empty());
  CHECK(errors_of(both, R"({"old": [1, 2]})").at(0).schema_path == "/properties/old/$ref/additionalItems");
  CHECK(errors_of(both, R"({"new": [1, 2]})").at(0).schema_path == "/properties/new/items");
}

TEST_CASE("catalog_directory: by $id, by the tail of the path, never outside the directory", "[schema][catalog]") {
  llmdlq::test::temp_dir dir;
  std::filesystem::create_directories(dir.path() / "catalog" / "v1");
  dir.write("outside.json", R"({"type": "string"})");
  dir.write("catalog/v1/item.json", R"({"$id": "https://schemas.example.com/v1/item.json", "type": "object",
      "required": ["sku"], "properties": {"sku": {"$ref": "sku.json"}, "price": {"$ref": "urn:example:money"}}})");
  dir.write("catalog/money.json", R"({"$id": "urn:example:money", "type": "number", "minimum": 0})");
  dir.write("catalog/v1/sku.json", R"({"type": "string", "pattern": "^[A-Z]{2}\\-\\d+$"})");
  dir.write("catalog/broken.json", R"({"type": )");
  dir.write("catalog/notes.txt", R"({"$id": "urn:example:notes"})");
  llmdlq::compile_options options;
  options.catalog_directory = (dir.path() / "catalog").string();
  // By $id, whose own relative reference (https://schemas.example.com/v1/sku.json) is
  // found by the tail of its path, v1/sku.json; and by a URN $id.
  const auto order = compiled(R"({"items": {"$ref": "https://schemas.example.com/v1/item.json"}})", options);
  CHECK(errors_of(order, R"([{"sku": "NL-1", "price": 2}])").empty());
  CHECK(errors_of(order, R"([{"sku": "nl"}])").at(0).keyword == "pattern");
  CHECK(errors_of(order, R"([{"sku": "NL-1", "price": -2}])").at(0).keyword == "minimum");
  // By the longest tail of the URI's path that names a file: v1/sku.json.
  CHECK(errors_of(compiled(R"({"$ref": "https://cdn.example.org/x/v1/sku.json"})", options), R"("NL-2")").empty());
  // Not outside the directory, not a file that is not *.json by $id, and a broken file is said to be one.
  options.refuse_broken_references = true;
  CHECK(compile_error(R"({"$ref": "../outside.json"})", options).code == llmdlq::schema_errc::unresolved_reference);
  CHECK(compile_error(R"({"$ref": "urn:example:notes"})", options).code == llmdlq::schema_errc::unresolved_reference);
  CHECK(compile_error(R"({"$ref": "broken.json"})", options).code == llmdlq::schema_errc::invalid_json);
  options.catalog_directory = (dir.path() / "missing").string();
  CHECK(compile_error(R"({"$ref": "v1/sku.json"})", options).code == llmdlq::schema_errc::unresolved_reference);
}

}  // namespace schema_test
