// SPDX-License-Identifier: MIT
// A subschema that is only a `$ref` is evaluated as its target on the
// yes/no path, without a level of its own: the verdict, and the depth at
// which evaluation gives up, are those of the path that collects errors.
#include <cstddef>
#include <string>

#include <boost/json.hpp>
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

}  // namespace

TEST_CASE("A chain of plain $refs is judged as its target, nesting as deep on both paths", "[schema][ref]") {
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
    CHECK(schema.is_valid(instance) == errors.empty());
    CHECK(errors.empty() == (depth < limit));
    if (!errors.empty()) CHECK(errors.front().message == "evaluation nests deeper than 1024 levels");
  }
  const boost::json::value two_items = boost::json::parse("[[], []]");
  CHECK_FALSE(schema.is_valid(two_items));
  CHECK_FALSE(schema.validate(two_items).empty());
}

}  // namespace reference_chain_test
