// SPDX-License-Identifier: MIT
// A subschema that is only a `$ref` is evaluated as its target on the
// yes/no path, without a level of its own; so are, by shorter ways, arrays
// of one leaf and unions judged by kind. The verdict, and the depth at
// which evaluation gives up, are those of the path that collects errors.
#include <cstddef>
#include <cstdint>
#include <string>

#include <boost/json.hpp>
#include <llmdlq/detail/schema/schema_access.hpp>
#include <llmdlq/json_parser.hpp>
#include <llmdlq/schema.hpp>

#include "catch.hpp"
#include "support/compiled_schema.hpp"

namespace reference_chain_test {

namespace {

using llmdlq::test::compiled;

// `depth` arrays, each the only item of the one around it.
boost::json::value nested(std::size_t depth) {
  std::string text(depth, '[');
  text.append(depth, ']');
  boost::json::parse_options options;
  options.max_depth = depth + 1;
  return boost::json::parse(text, {}, options);
}

// `depth` objects, each the `next` of the one around it, around `innermost`.
boost::json::value linked(std::size_t depth, const boost::json::value& innermost) {
  boost::json::value v = innermost;
  for (std::size_t i = 0; i < depth; ++i) v = boost::json::object{{"next", std::move(v)}};
  return v;
}

// The verdict of every path (Boost.JSON, simdjson's tape, the text), which must agree.
bool verdict(const llmdlq::schema& schema, const boost::json::value& instance) {
  const std::string text = boost::json::serialize(instance);
  const bool valid = schema.validate(instance).empty();
  CHECK(schema.is_valid(instance) == valid);
  const llmdlq::parse_options deep{.max_depth = 1024};
  llmdlq::json_parser parser(deep);
  const auto document = parser.parse(text);
  REQUIRE(document.has_value());
  CHECK(schema.is_valid(*document) == valid);
  CHECK(schema.is_valid_text(text, {}, deep) == valid);
  return valid;
}

std::size_t nodes_flagged(const llmdlq::schema& s, std::uint32_t flag) {
  std::size_t count = 0;
  for (const auto& n : llmdlq::detail::schema_access::of(s).nodes) count += (n.flags & flag) != 0 ? 1 : 0;
  return count;
}

}  // namespace

TEST_CASE("A chain of plain $refs is judged as its target, nesting as deep on every path", "[schema][ref]") {
  // Each level of the instance costs a level of evaluation per reference and one for the array's schema.
  const auto schema = compiled(R"({
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
      "list": {"type": "array", "maxItems": 1, "items": {"$ref": "#/$defs/alias"}},
      "alias": {"$ref": "#/$defs/other_alias"},
      "other_alias": {"$ref": "#/$defs/list"}},
    "$ref": "#/$defs/alias"})");
  // The first depth evaluation gives up at, on the path that collects
  // errors: 1,024 levels of evaluation hold a few hundred of this instance.
  std::size_t limit = 0;
  for (std::size_t depth = 1; depth <= 400 && limit == 0; ++depth) {
    if (!schema.validate(nested(depth)).empty()) limit = depth;
  }
  INFO("evaluation gives up at depth " << limit);
  CHECK(limit > 200);
  CHECK(limit < 342);
  for (const std::size_t depth : {std::size_t(1), std::size_t(2), limit - 1, limit, limit + 1, std::size_t(400)}) {
    INFO("depth " << depth);
    const auto instance = nested(depth);
    const auto errors = schema.validate(instance);
    CHECK(verdict(schema, instance) == errors.empty());
    CHECK(errors.empty() == (depth < limit));
    if (!errors.empty()) CHECK(errors.front().message == "evaluation nests deeper than 1024 levels");
  }
  const boost::json::value two_items = boost::json::parse("[[], []]");
  CHECK_FALSE(schema.is_valid(two_items));
  CHECK_FALSE(schema.validate(two_items).empty());
}

TEST_CASE("Arrays of one leaf and unions judged by kind give up as deep on every path", "[schema][ref]") {
  // Each level: a union of an object and an array, judged by kind, reached through two aliases; the
  // innermost value an array of numbers. Evaluation gives up well before the parser's nesting limit.
  const auto schema = compiled(R"({
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
      "tree": {"oneOf": [{"$ref": "#/$defs/points"}, {"$ref": "#/$defs/link"}]},
      "link": {"type": "object", "properties": {"next": {"$ref": "#/$defs/alias"}}, "additionalProperties": false},
      "alias": {"$ref": "#/$defs/other_alias"},
      "other_alias": {"$ref": "#/$defs/tree"},
      "points": {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "number"}}},
    "$ref": "#/$defs/tree"})");
  CHECK(nodes_flagged(schema, llmdlq::detail::leaf_items) == 1);
  CHECK(nodes_flagged(schema, llmdlq::detail::kind_dispatched) == 1);
  const boost::json::value points = boost::json::parse("[1.5, -2]");
  std::size_t limit = 0;
  for (std::size_t depth = 0; depth <= 600 && limit == 0; ++depth) {
    if (!schema.validate(linked(depth, points)).empty()) limit = depth;
  }
  INFO("evaluation gives up at depth " << limit);
  CHECK(limit > 100);
  CHECK(limit < 200);
  for (const std::size_t depth : {std::size_t(0), std::size_t(1), limit - 1, limit, limit + 1}) {
    INFO("depth " << depth);
    CHECK(verdict(schema, linked(depth, points)) == (depth < limit));
  }
  for (const char* innermost : {"[1]", "[1, 2, 3, 4]", R"([1, "2"])", "[1, null]", R"("1, 2")", "7", "null"}) {
    INFO(innermost);
    CHECK_FALSE(verdict(schema, linked(2, boost::json::parse(innermost))));
  }
  CHECK(verdict(schema, linked(2, boost::json::parse("[1, 2, 3]"))));
  CHECK_FALSE(verdict(schema, boost::json::parse(R"({"next": {"last": [1, 2]}})")));
}

TEST_CASE("An array of one leaf counts its items as evaluated for unevaluatedItems", "[schema][ref]") {
  const auto schema = compiled(R"({
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {"points": {"type": "array", "items": {"type": "number"}}},
    "anyOf": [{"$ref": "#/$defs/points"}, {"type": "array", "prefixItems": [{"type": "string"}]}],
    "unevaluatedItems": false})");
  CHECK(nodes_flagged(schema, llmdlq::detail::leaf_items) == 1);
  CHECK(verdict(schema, boost::json::parse("[1, 2, 3]")));
  CHECK(verdict(schema, boost::json::parse(R"(["a"])")));
  CHECK_FALSE(verdict(schema, boost::json::parse(R"(["a", 2])")));
}

}  // namespace reference_chain_test
