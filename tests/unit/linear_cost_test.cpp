// SPDX-License-Identifier: MIT
// Cost linear in the input, by counting rather than timing: a schema compiles
// to at most one node per subschema whatever its references, and validating a
// document of size 2n takes at most twice the evaluator's steps for size n
// (plus a constant), for every keyword that loops over a document.
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/detail/schema/schema_access.hpp>
#include <llmdlq/schema.hpp>

#include "catch.hpp"
#include "support/compiled_schema.hpp"

namespace linear_cost_test {

namespace {

using llmdlq::test::compiled;

boost::json::value parse_deep(const std::string& json) {
  boost::json::parse_options options;
  options.max_depth = 100'000;
  return boost::json::parse(json, {}, options);
}

std::size_t nodes_of(const llmdlq::schema& s) { return llmdlq::detail::schema_access::of(s).nodes.size(); }

// Every object and boolean of a schema document: an upper bound on its subschemas.
std::size_t schema_values(const boost::json::value& v) {
  if (v.is_bool()) return 1;
  std::size_t count = v.is_object() ? 1 : 0;
  if (const auto* object = v.if_object()) {
    for (const auto& member : *object) count += schema_values(member.value());
  } else if (const auto* array = v.if_array()) {
    for (const auto& element : *array) count += schema_values(element);
  }
  return count;
}

// Compiles `json` and checks that it became at most one node per subschema.
void compiles_once_per_subschema(const std::string& json) {
  const auto schema = compiled(json);
  const std::size_t bound = schema_values(parse_deep(json));
  INFO(json.substr(0, 200));
  CHECK(nodes_of(schema) <= bound);
}

using document_of_size = std::function<std::string(std::size_t)>;

// The steps for documents of size n and 2n, on both evaluators (the one that
// collects every error, and the yes/no one): they at most double, plus a
// constant. Valid documents, so that every element is looked at: each takes a step.
void linear_in_document(const llmdlq::schema& schema, const document_of_size& make, std::size_t n = 2000) {
  const auto small = parse_deep(make(n));
  const auto large = parse_deep(make(2 * n));
  const auto errors = schema.validate(small);
  INFO((errors.empty() ? std::string() : errors[0].instance_path + ": " + errors[0].message));
  REQUIRE(errors.empty());
  REQUIRE(schema.is_valid(large));
  for (const bool collect : {false, true}) {
    const auto at_n = llmdlq::detail::evaluation_steps(schema, small, collect);
    const auto at_2n = llmdlq::detail::evaluation_steps(schema, large, collect);
    INFO("collect " << collect << ": " << at_n << " steps at n = " << n << ", " << at_2n << " at 2n");
    CHECK(at_n >= n);
    CHECK(at_2n <= 2 * at_n + 64);
  }
}

// The same for invalid documents, with every error collected: a failure
// found early must not make the rest of the document cost more.
void linear_when_invalid(const llmdlq::schema& schema, const document_of_size& make, std::size_t n = 2000) {
  const auto small = parse_deep(make(n));
  const auto large = parse_deep(make(2 * n));
  REQUIRE_FALSE(schema.is_valid(small));
  const auto every_error = std::numeric_limits<std::size_t>::max();
  const auto at_n = llmdlq::detail::evaluation_steps(schema, small, true, every_error);
  const auto at_2n = llmdlq::detail::evaluation_steps(schema, large, true, every_error);
  INFO(at_n << " steps at n = " << n << ", " << at_2n << " at 2n");
  CHECK(at_2n <= 2 * at_n + 64);
  CHECK(llmdlq::detail::evaluation_steps(schema, large, false) <= at_2n);
}

std::string repeated(std::size_t n, const std::function<std::string(std::size_t)>& item, const char* open = "[",
                     const char* close = "]") {
  std::string out = open;
  for (std::size_t i = 0; i < n; ++i) out += (i ? "," : "") + item(i);
  return out + close;
}

}  // namespace

// {"properties": {"a": {"$ref": "#"}, "b": {"$ref": "#"}}} never finished
// compiling: references were followed into every path that reaches a subschema.
TEST_CASE("compile: a tree with 2 to 16 self-references is one node per subschema", "[schema][linear]") {
  for (std::size_t refs = 2; refs <= 16; ++refs) {
    const std::string json = repeated(
        refs, [](std::size_t i) { return fmt::format(R"("p{}": {{"$ref": "#"}})", i); },
        R"({"type": "object", "properties": {)", "}}");
    compiles_once_per_subschema(json);
  }
  // A tree of tasks whose platform overrides are tasks again, as task-runner configs write it.
  const auto tasks = compiled(R"({
    "$defs": {"task": {"type": "object", "properties": {
      "command": {"type": "string"}, "linux": {"$ref": "#/$defs/task"},
      "windows": {"$ref": "#/$defs/task"}, "osx": {"$ref": "#/$defs/task"},
      "dependsOn": {"type": "array", "items": {"$ref": "#/$defs/task"}}}}},
    "type": "object", "properties": {"tasks": {"type": "array", "items": {"$ref": "#/$defs/task"}}}})");
  CHECK(tasks.is_valid(boost::json::parse(
      R"({"tasks": [{"command": "make", "linux": {"command": "make", "osx": {"command": "gmake"}}}]})")));
  CHECK_FALSE(tasks.is_valid(boost::json::parse(R"({"tasks": [{"linux": {"windows": {"command": 1}}}]})")));
}

TEST_CASE("compile: mutual recursion across 50 definitions, a 10,000-definition chain, deep allOf/anyOf",
          "[schema][linear]") {
  const std::string ring = repeated(
      50,
      [](std::size_t i) {
        return fmt::format(R"("d{}": {{"type": "object", "properties": {{"next": {{"$ref": "#/$defs/d{}"}},
                          "back": {{"$ref": "#/$defs/d{}"}}, "all": {{"$ref": "#/$defs/d{}"}}}}}})",
                           i, (i + 1) % 50, (i + 49) % 50, (i * 7) % 50);
      },
      R"({"$ref": "#/$defs/d0", "$defs": {)", "}}");
  compiles_once_per_subschema(ring);

  for (const std::size_t length : {5000u, 10000u}) {
    const std::string chain = repeated(
        length,
        [length](std::size_t i) {
          return i + 1 == length
                     ? fmt::format(R"("d{}": {{"type": "string"}})", i)
                     : fmt::format(R"("d{}": {{"properties": {{"n": {{"$ref": "#/$defs/d{}"}}}}}})", i, i + 1);
        },
        R"({"$ref": "#/$defs/d0", "$defs": {)", "}}");
    compiles_once_per_subschema(chain);
  }

  // allOf and anyOf nested 200 deep, each level also referring back to the root.
  std::string nested = R"({"type": "integer"})";
  for (int i = 0; i < 200; ++i) {
    nested = fmt::format(fmt::runtime(i % 2
                                          ? R"({{"allOf": [{0}, {{"items": {{"$ref": "#"}}}}]}})"
                                          : R"({{"anyOf": [{0}, {{"minimum": {1}}}, {{"items": {{"$ref": "#"}}}}]}})"),
                         nested, i);
  }
  compiles_once_per_subschema(nested);
}

TEST_CASE("compile: a schema past compile_options::max_nodes is a typed error", "[schema][linear]") {
  const std::string wide = repeated(
      100, [](std::size_t i) { return fmt::format(R"("p{}": {{"type": "string"}})", i); }, R"({"properties": {)", "}}");
  llmdlq::compile_options options;
  options.max_nodes = 50;
  const auto refused = llmdlq::schema::compile(wide, options);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == llmdlq::schema_errc::too_complex);
  CHECK(refused.error().message.find("more than 50 nodes") != std::string::npos);
  options.max_nodes = 101;
  CHECK(llmdlq::schema::compile(wide, options).has_value());
}

// A looping model repeats one value: comparing every pair of equal items was
// quadratic (40,000 equal strings took 19 s).
TEST_CASE("steps: uniqueItems over equal, distinct and late-repeating items", "[schema][linear]") {
  const auto schema = compiled(R"({"uniqueItems": true})");
  // Equal items: the first repeat ends the scan, at any length.
  const auto equal = [](std::size_t n) { return repeated(n, [](std::size_t) { return R"("Kubernetes")"; }); };
  CHECK(llmdlq::detail::evaluation_steps(schema, boost::json::parse(equal(40000)), true) <= 8);
  linear_when_invalid(schema, equal);
  linear_in_document(schema, [](std::size_t n) {
    return repeated(n, [](std::size_t i) { return fmt::format(R"({{"skill": "s-{}"}})", i); });
  });
  linear_when_invalid(schema, [](std::size_t n) {
    return repeated(n, [n](std::size_t i) { return fmt::format(R"("s-{}")", i + 1 == n ? 0 : i); });
  });
  // Items that hash alike but differ: numbers equal as JSON values but written differently.
  linear_in_document(schema, [](std::size_t n) {
    return repeated(n, [](std::size_t i) { return fmt::format("[{}, {}.0]", i, i); });
  });
}

TEST_CASE("steps: contains, minContains and maxContains", "[schema][linear]") {
  linear_in_document(compiled(R"({"contains": {"const": "x"}})"), [](std::size_t n) {
    return repeated(n, [n](std::size_t i) { return i + 1 == n ? R"("x")" : "1"; });
  });
  linear_in_document(compiled(R"({"contains": {"type": "integer"}, "minContains": 3, "maxContains": 5})"),
                     [](std::size_t n) {
                       return repeated(n, [](std::size_t i) { return i < 4 ? std::to_string(i) : R"("s")"; });
                     });
}

TEST_CASE("steps: unevaluatedProperties and unevaluatedItems under nested anyOf and oneOf", "[schema][linear]") {
  const auto properties = compiled(R"({
    "anyOf": [{"patternProperties": {"^a": true}},
              {"oneOf": [{"patternProperties": {"^b": true}}, {"anyOf": [{"patternProperties": {"^a": {"type": "integer"}}},
                                                                         {"required": ["zz"]}]}]}],
    "unevaluatedProperties": {"type": "integer"}})");
  linear_in_document(properties, [](std::size_t n) {
    return repeated(
        n, [](std::size_t i) { return fmt::format(R"("{}{}": {})", "abc"[i % 3], i, i); }, "{", "}");
  });
  const auto items = compiled(R"({
    "anyOf": [{"prefixItems": [true, true]}, {"oneOf": [{"items": {"type": "string"}}, {"contains": {"const": 0}}]}],
    "unevaluatedItems": {"type": "integer"}})");
  linear_in_document(items, [](std::size_t n) { return repeated(n, [](std::size_t i) { return std::to_string(i); }); });
}

TEST_CASE("steps: oneOf over many branches, properties, patterns, names and dependencies", "[schema][linear]") {
  const std::string branches = repeated(
      24,
      [](std::size_t i) {
        return fmt::format(
            R"({{"type": "object", "properties": {{"kind": {{"const": "k{}"}}}}, "required": ["kind"]}})", i);
      },
      R"({"items": {"oneOf": [)", "]}}");
  linear_in_document(compiled(branches), [](std::size_t n) {
    return repeated(n, [](std::size_t i) { return fmt::format(R"({{"kind": "k{}"}})", i % 24); });
  });
  linear_in_document(
      compiled(R"({"properties": {"a": {"type": "string"}}, "patternProperties": {"^x-[0-9]+$": {"type": "integer"}},
                  "additionalProperties": false, "propertyNames": {"maxLength": 12},
                  "dependentSchemas": {"a": {"minProperties": 1}}})"),
      [](std::size_t n) {
        return repeated(
            n, [](std::size_t i) { return fmt::format(R"("x-{}": {})", i, i); }, "{", "}");
      });
  linear_in_document(compiled(R"({"items": {"type": "string", "pattern": "^(a|b)*c$", "maxLength": 40}})"),
                     [](std::size_t n) {
                       return repeated(n, [](std::size_t) { return R"("abababababababababababababc")"; });
                     });
  linear_in_document(compiled(R"({"items": {"multipleOf": 0.0001, "maximum": 1e308}})"), [](std::size_t n) {
    return repeated(n, [](std::size_t i) { return fmt::format("{}e300", i + 1); });
  });
  linear_when_invalid(compiled(R"({"items": {"type": "string", "maxLength": 3}})"),
                      [](std::size_t n) { return repeated(n, [](std::size_t) { return R"("four")"; }); });
}

// A tree whose every level enters the other schema resource again: the
// dynamic scope grows with depth, and each reference resolves in constant steps.
TEST_CASE("steps: $dynamicRef and $recursiveRef through a deep tree", "[schema][linear]") {
  const auto dynamic = compiled(R"({
    "$id": "https://example.com/strict-tree", "$dynamicAnchor": "node", "$ref": "tree",
    "unevaluatedProperties": false,
    "$defs": {"tree": {"$id": "tree", "$dynamicAnchor": "node", "type": "object",
                       "properties": {"data": true, "children": {"type": "array", "items": {"$dynamicRef": "#node"}}}}}})");
  const auto recursive = compiled(R"({
    "$schema": "https://json-schema.org/draft/2019-09/schema",
    "$id": "https://example.com/strict-tree", "$recursiveAnchor": true, "$ref": "tree",
    "unevaluatedProperties": false,
    "$defs": {"tree": {"$id": "tree", "$recursiveAnchor": true, "type": "object",
                       "properties": {"data": true, "children": {"type": "array", "items": {"$recursiveRef": "#"}}}}}})");
  const auto deep_tree = [](std::size_t n) {
    std::string doc = R"({"data": 0})";
    for (std::size_t i = 0; i < n; ++i) doc = fmt::format(R"({{"data": {}, "children": [{}, {{"data": 1}}]}})", i, doc);
    return doc;
  };
  for (const auto* schema : {&dynamic, &recursive}) {
    linear_in_document(*schema, deep_tree, 100);
    CHECK_FALSE(schema->is_valid(boost::json::parse(R"({"children": [{"children": [{"daat": 1}]}]})")));
  }
}

}  // namespace linear_cost_test
