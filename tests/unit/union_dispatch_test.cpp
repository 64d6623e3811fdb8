// SPDX-License-Identifier: MIT
// Tagged unions (union_dispatch.hpp): an anyOf or oneOf whose branches each
// require their own string at one property judges an object against the
// branch its tag names. The verdicts and errors are those of trying every
// branch, on every path (Boost.JSON, simdjson's tape, the text), and a
// union of 2n branches costs an object no more steps than one of n. So are
// those of a union whose branches admit different kinds of value, which
// judges a value by the one branch of its kind.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/detail/schema/schema_access.hpp>
#include <llmdlq/json_parser.hpp>
#include <llmdlq/schema.hpp>

#include "catch.hpp"
#include "support/compiled_schema.hpp"

namespace union_dispatch_test {

namespace {

using llmdlq::test::compiled;

std::size_t dispatches_of(const llmdlq::schema& s) { return llmdlq::detail::schema_access::of(s).dispatches.size(); }

std::size_t kind_dispatches_of(const llmdlq::schema& s) {
  return llmdlq::detail::schema_access::of(s).kind_dispatches.size();
}

// `count` kinds of object, kind-i with a `size` of at most i, chosen by
// `keyword`; each branch a $ref (through an alias when `aliased`).
std::string tagged_union(std::size_t count, const std::string& keyword, bool aliased = false) {
  boost::json::object defs;
  boost::json::array branches;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string name = fmt::format("kind{}", i);
    defs[name] = boost::json::object{
        {"type", "object"},
        {"required", {"size"}},
        {"properties",
         {{"kind", {{"const", fmt::format("kind-{}", i)}}}, {"size", {{"type", "integer"}, {"maximum", i}}}}}};
    if (aliased) defs["alias" + std::to_string(i)] = boost::json::object{{"$ref", "#/$defs/" + name}};
    branches.push_back(boost::json::object{{"$ref", fmt::format("#/$defs/{}{}", aliased ? "alias" : "kind", i)}});
  }
  const boost::json::value schema = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                                     {"$defs", std::move(defs)},
                                     {keyword, std::move(branches)}};
  return boost::json::serialize(schema);
}

// The verdict on every path, which must agree; and the first error.
struct judged {
  bool valid;
  std::optional<llmdlq::validation_error> first_error;
};

judged judge(const llmdlq::schema& schema, const std::string& text) {
  INFO(text);
  const boost::json::value value = boost::json::parse(text);
  const bool valid = schema.is_valid(value);
  llmdlq::json_parser parser;
  auto document = parser.parse(text);
  REQUIRE(document.has_value());
  CHECK(schema.is_valid(*document) == valid);
  CHECK(schema.is_valid_text(text) == valid);
  const auto errors = schema.validate(value);
  CHECK(errors.empty() == valid);
  const auto tape_errors = schema.validate(*document);
  REQUIRE(tape_errors.size() == errors.size());
  for (std::size_t i = 0; i < errors.size(); ++i) {
    CHECK(tape_errors[i].schema_path == errors[i].schema_path);
    CHECK(tape_errors[i].message == errors[i].message);
  }
  return {valid, errors.empty() ? std::nullopt : std::optional(errors.front())};
}

// The instance fails the union `keyword` of `branches` branches, which none matched, with the union's own error.
void check_union_refuses(const judged& j, const std::string& keyword, std::size_t branches) {
  CHECK_FALSE(j.valid);
  REQUIRE(j.first_error.has_value());
  CHECK(j.first_error->keyword == keyword);
  CHECK(j.first_error->message ==
        (keyword == "anyOf"
             ? fmt::format("must match at least one of the {} schemas in anyOf", branches)
             : fmt::format("must match exactly one of the {} schemas in oneOf, matched none", branches)));
}

std::uint64_t steps(const llmdlq::schema& schema, const std::string& text) {
  return llmdlq::detail::evaluation_steps(schema, boost::json::parse(text), false);
}

}  // namespace

TEST_CASE("A tagged anyOf or oneOf judges an object by the branch its tag names", "[schema][union]") {
  const std::string keyword = GENERATE(as<std::string>{}, "anyOf", "oneOf");
  INFO(keyword);
  const auto schema = compiled(tagged_union(20, keyword));
  CHECK(dispatches_of(schema) == 1);

  CHECK(judge(schema, R"({"kind": "kind-7", "size": 7})").valid);
  CHECK(judge(schema, R"({"size": 3, "kind": "kind-19"})").valid);

  // The tag's branch refuses the rest: no other branch is asked.
  check_union_refuses(judge(schema, R"({"kind": "kind-7", "size": 8})"), keyword, 20);

  // A tag no branch has, or one that is not a string, matches none.
  CHECK_FALSE(judge(schema, R"({"kind": "kind-20", "size": 0})").valid);
  CHECK_FALSE(judge(schema, R"({"kind": 7, "size": 0})").valid);
  CHECK_FALSE(judge(schema, R"({"kind": null, "size": 0})").valid);
  // A tag with an escape is read as the string it stands for.
  CHECK(judge(schema, R"({"kind": "kind\u002d7", "size": 7})").valid);

  // Without the tag every branch is tried: kind-3 and those after it take a size of 3.
  const auto untagged = judge(schema, R"({"size": 3})");
  CHECK(untagged.valid == (keyword == "anyOf"));
  if (keyword == "oneOf") {
    REQUIRE(untagged.first_error.has_value());
    CHECK(untagged.first_error->message == "must match exactly one schema in oneOf, matched 3 and 4");
  }
  // Values other than objects carry no tag: each branch is tried, and each refuses them.
  CHECK_FALSE(judge(schema, R"("kind-7")").valid);
}

TEST_CASE("An object in a tagged union of 2n branches takes no more steps than in one of n", "[schema][union]") {
  const std::string keyword = GENERATE(as<std::string>{}, "anyOf", "oneOf");
  const bool aliased = GENERATE(false, true);
  INFO(keyword << (aliased ? " through aliases" : ""));
  const auto small = compiled(tagged_union(100, keyword, aliased));
  const auto large = compiled(tagged_union(200, keyword, aliased));
  CHECK(dispatches_of(small) == 1);
  CHECK(dispatches_of(large) == 1);
  const std::string last_of_small = R"({"kind": "kind-99", "size": 1})";
  const std::string last_of_large = R"({"kind": "kind-199", "size": 1})";
  CHECK(judge(small, last_of_small).valid);
  CHECK(judge(large, last_of_large).valid);
  const auto at_n = steps(small, last_of_small);
  const auto at_2n = steps(large, last_of_large);
  INFO(at_n << " steps at n, " << at_2n << " at 2n");
  CHECK(at_2n == at_n);
  CHECK(at_n < 20);
}

TEST_CASE("Unions that are not tagged are tried branch by branch", "[schema][union]") {
  SECTION("two branches with one tag") {
    const auto schema = compiled(R"({"oneOf": [
      {"properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}},
      {"properties": {"kind": {"const": "a"}, "x": {"minimum": 0}}},
      {"properties": {"kind": {"const": "b"}}}]})");
    CHECK(dispatches_of(schema) == 0);
    const auto both = judge(schema, R"({"kind": "a", "x": 1})");
    CHECK_FALSE(both.valid);
    REQUIRE(both.first_error.has_value());
    CHECK(both.first_error->message == "must match exactly one schema in oneOf, matched 0 and 1");
    CHECK(judge(schema, R"({"kind": "a", "x": -1})").valid);
  }
  SECTION("a branch without the tag") {
    const auto schema = compiled(R"({"anyOf": [
      {"properties": {"kind": {"const": "a"}}, "required": ["a"]},
      {"properties": {"kind": {"const": "b"}}, "required": ["b"]},
      {"required": ["c"]}]})");
    CHECK(dispatches_of(schema) == 0);
    CHECK(judge(schema, R"({"kind": "a", "c": 1})").valid);
    CHECK_FALSE(judge(schema, R"({"kind": "a", "b": 1})").valid);
  }
  SECTION("a tag that is not a string") {
    const auto schema = compiled(R"({"anyOf": [
      {"properties": {"kind": {"const": 1}}}, {"properties": {"kind": {"const": 2}}},
      {"properties": {"kind": {"const": 3}}}]})");
    CHECK(dispatches_of(schema) == 0);
    CHECK(judge(schema, R"({"kind": 2})").valid);
    CHECK_FALSE(judge(schema, R"({"kind": 4})").valid);
  }
  SECTION("two branches") {
    const auto schema = compiled(R"({"oneOf": [
      {"properties": {"kind": {"const": "a"}}}, {"properties": {"kind": {"const": "b"}}}]})");
    CHECK(dispatches_of(schema) == 0);
    CHECK(judge(schema, R"({"kind": "b"})").valid);
  }
}

TEST_CASE("A tagged union keeps what its branch evaluated for unevaluatedProperties", "[schema][union]") {
  const auto schema = compiled(R"({
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "anyOf": [
      {"properties": {"kind": {"const": "a"}, "a": {"type": "integer"}}},
      {"properties": {"kind": {"const": "b"}, "b": {"type": "integer"}}},
      {"properties": {"kind": {"const": "c"}, "c": {"type": "integer"}}}],
    "unevaluatedProperties": false})");
  CHECK(dispatches_of(schema) == 1);
  CHECK(judge(schema, R"({"kind": "b", "b": 1})").valid);
  const auto other = judge(schema, R"({"kind": "b", "c": 1})");
  CHECK_FALSE(other.valid);
  REQUIRE(other.first_error.has_value());
  CHECK(other.first_error->keyword == "unevaluatedProperties");
}

TEST_CASE("A draft 7 branch's tag is its $ref's, whatever the $ref's siblings say", "[schema][union]") {
  const auto schema = compiled(R"({
    "$schema": "http://json-schema.org/draft-07/schema#",
    "definitions": {
      "a": {"properties": {"kind": {"const": "a"}}, "required": ["a"]},
      "b": {"properties": {"kind": {"const": "b"}}, "required": ["b"]},
      "c": {"properties": {"kind": {"const": "c"}}, "required": ["c"]}},
    "oneOf": [{"$ref": "#/definitions/a", "properties": {"kind": {"const": "z"}}},
              {"$ref": "#/definitions/b"}, {"$ref": "#/definitions/c"}]})");
  CHECK(dispatches_of(schema) == 1);
  CHECK(judge(schema, R"({"kind": "a", "a": 1})").valid);
  CHECK_FALSE(judge(schema, R"({"kind": "z", "a": 1})").valid);
  CHECK_FALSE(judge(schema, R"({"kind": "a", "b": 1})").valid);
}

TEST_CASE("A union of branches of different kinds judges a value by the branch of its kind", "[schema][union]") {
  const std::string keyword = GENERATE(as<std::string>{}, "anyOf", "oneOf");
  INFO(keyword);
  const auto schema = compiled(fmt::format(R"({{
    "$defs": {{"toggle": {{"enum": ["enable", "disable"]}}}},
    "{}": [{{"$ref": "#/$defs/toggle"}},
           {{"type": "object", "properties": {{"level": {{"enum": ["error", "warning"]}}}},
            "additionalProperties": false}},
           {{"type": "array", "items": {{"type": "string"}}}}]}})",
                                           keyword));
  CHECK(kind_dispatches_of(schema) == 1);
  CHECK(judge(schema, R"("enable")").valid);
  CHECK(judge(schema, R"({"level": "error"})").valid);
  CHECK(judge(schema, R"({})").valid);
  CHECK(judge(schema, R"(["vendor/", "*.gen.yaml"])").valid);
  CHECK(judge(schema, R"([])").valid);
  // The branch of the value's kind refuses it: the union's error, as if every branch had been tried.
  check_union_refuses(judge(schema, R"("enabled")"), keyword, 3);
  CHECK_FALSE(judge(schema, R"({"level": "fatal"})").valid);
  CHECK_FALSE(judge(schema, R"({"level": "error", "lvel": "error"})").valid);
  CHECK_FALSE(judge(schema, R"(["vendor/", 7])").valid);
  // No branch takes numbers, booleans or null.
  for (const char* other : {"7", "0.5", "true", "null"}) CHECK_FALSE(judge(schema, other).valid);
}

TEST_CASE("A union is judged by kind only where no two branches admit the same kind", "[schema][union]") {
  SECTION("integer and number") {
    const auto schema = compiled(R"({"oneOf": [{"type": "integer"}, {"type": "number", "maximum": 10}]})");
    CHECK(kind_dispatches_of(schema) == 0);
    CHECK_FALSE(judge(schema, "5").valid);  // both branches
    CHECK(judge(schema, "5.5").valid);
    CHECK(judge(schema, "50").valid);
  }
  SECTION("a branch without a type") {
    const auto schema = compiled(R"({"oneOf": [{"type": "string"}, {"minLength": 3}]})");
    CHECK(kind_dispatches_of(schema) == 0);
    CHECK_FALSE(judge(schema, R"("abcd")").valid);
    CHECK(judge(schema, R"("ab")").valid);
    CHECK(judge(schema, "1").valid);
  }
  SECTION("keywords beside the union") {
    const auto schema = compiled(R"({"type": "string", "anyOf": [{"type": "string"}, {"type": "null"}]})");
    CHECK(kind_dispatches_of(schema) == 0);
    CHECK(judge(schema, R"("a")").valid);
    CHECK_FALSE(judge(schema, "null").valid);
  }
  SECTION("a schema with a reference that cannot be resolved") {
    // Reaching it fails the validation with its own error, so no branch is skipped for its kind:
    // oneOf tries both branches even for a string.
    const auto schema = compiled(R"({"oneOf": [{"type": "string"}, {"$ref": "#/$defs/missing"}]})");
    CHECK(kind_dispatches_of(schema) == 0);
    for (const char* text : {R"("a")", "{}"}) {
      CHECK_FALSE(judge(schema, text).valid);
      const auto errors = schema.validate(boost::json::parse(text));
      CHECK(std::any_of(errors.begin(), errors.end(), [](const llmdlq::validation_error& e) {
        return e.defect == llmdlq::schema_defect::unresolved_reference;
      }));
    }
  }
}

TEST_CASE("A union judged by kind keeps what its branch evaluated for unevaluatedProperties", "[schema][union]") {
  const auto schema = compiled(R"({
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "allOf": [{"oneOf": [{"type": "string"}, {"type": "object", "properties": {"a": {"type": "integer"}}}]}],
    "unevaluatedProperties": false})");
  CHECK(kind_dispatches_of(schema) == 1);
  CHECK(judge(schema, R"({"a": 1})").valid);
  CHECK(judge(schema, R"("text")").valid);
  const auto other = judge(schema, R"({"a": 1, "b": 2})");
  CHECK_FALSE(other.valid);
  REQUIRE(other.first_error.has_value());
  CHECK(other.first_error->keyword == "unevaluatedProperties");
}

TEST_CASE("A union judged by kind whose branch's kind is settled late admits only its branches' kinds",
          "[schema][union]") {
  // The union's first branch is numbered before it and reaches its type through seven references, so
  // bounding what each node admits stops before the union learns it takes no object.
  const auto schema = compiled(R"({"properties": {
      "p0": {"$ref": "#/$defs/c0"}, "p1": {"$ref": "#/$defs/c1"}, "p2": {"$ref": "#/$defs/c2"},
      "p3": {"$ref": "#/$defs/c3"}, "p4": {"$ref": "#/$defs/c4"}, "p5": {"$ref": "#/$defs/c5"},
      "p6": {"$ref": "#/$defs/c6"}, "p7": {"$ref": "#/$defs/u/anyOf/0"}, "u": {"$ref": "#/$defs/u"}},
    "$defs": {"c0": {"type": "string"}, "c1": {"$ref": "#/$defs/c0"}, "c2": {"$ref": "#/$defs/c1"},
      "c3": {"$ref": "#/$defs/c2"}, "c4": {"$ref": "#/$defs/c3"}, "c5": {"$ref": "#/$defs/c4"},
      "c6": {"$ref": "#/$defs/c5"}, "u": {"anyOf": [{"$ref": "#/$defs/c6"}, {"type": "number"}]}}})");
  CHECK(kind_dispatches_of(schema) == 1);
  CHECK(judge(schema, R"({"u": "text"})").valid);
  CHECK(judge(schema, R"({"u": 7})").valid);
  for (const char* text : {R"({"u": {}})", R"({"u": []})", R"({"u": {"a": [1]}})", R"({"u": null})"}) {
    CHECK_FALSE(judge(schema, text).valid);
  }
}

}  // namespace union_dispatch_test
