// SPDX-License-Identifier: MIT
// Strict parsing: what is accepted, and where and why the rest is rejected.
#include <llmdlq/json_parser.hpp>

#include "catch.hpp"

namespace json_parser_test {

using llmdlq::json_errc;

namespace {

llmdlq::syntax_error error_of(std::string_view json, llmdlq::parse_options options = {}) {
  llmdlq::json_parser parser(options);
  auto result = parser.parse(json);
  REQUIRE_FALSE(result.has_value());
  // The Boost.JSON path must reject the same document with the same error.
  auto dom = llmdlq::parse_value(json, options);
  REQUIRE_FALSE(dom.has_value());
  CHECK(dom.error() == result.error());
  return result.error();
}

}  // namespace

TEST_CASE("valid documents parse on both paths", "[json_parser]") {
  llmdlq::json_parser parser;
  for (std::string_view json : {R"({"a":[1,2.5,-3e2,true,false,null,"x"]})", "  0  ", R"("\u00e9")",
                                "[18446744073709551615]", "[-9223372036854775808]"}) {
    INFO(json);
    CHECK(parser.parse(json).has_value());
    CHECK(llmdlq::parse_value(json).has_value());
  }
}

TEST_CASE("a syntax error carries offset, line, column and message", "[json_parser]") {
  const auto e = error_of("{\n  \"a\": 1,\n  \"b\" 2\n}");
  CHECK(e.code == json_errc::unexpected_character);
  CHECK(e.offset == 18);
  CHECK(e.line == 3);
  CHECK(e.column == 7);
  CHECK(e.message == "unexpected '2', expected ':' after the key");
}

TEST_CASE("columns count code points, not bytes", "[json_parser]") {
  const auto e = error_of(R"({"имя": "Иван" x})");
  CHECK(e.line == 1);
  CHECK(e.column == 16);
  CHECK(e.offset == 22);
}

TEST_CASE("trailing commas are named as such", "[json_parser]") {
  CHECK(error_of("[1,2,]").message == "trailing comma before ']'");
  CHECK(error_of(R"({"a":1,})").message == "trailing comma before '}'");
}

TEST_CASE("a cut-off document reports what is still open", "[json_parser]") {
  auto e = error_of(R"({"items": [{"name": "Bro)");
  CHECK(e.code == json_errc::unexpected_end);
  CHECK(e.unclosed == "\"}]}");
  CHECK(e.offset == 24);
  e = error_of(R"([1, {"a": )");
  CHECK(e.code == json_errc::unexpected_end);
  CHECK(e.unclosed == "}]");
  CHECK(e.message == "the input ends where a value was expected");
}

TEST_CASE("errors inside strings are precise", "[json_parser]") {
  auto e = error_of("[\"a\tb\"]");
  CHECK(e.code == json_errc::control_character);
  CHECK(e.offset == 3);
  e = error_of(R"(["a\qb"])");
  CHECK(e.code == json_errc::invalid_escape);
  CHECK(e.offset == 3);
  e = error_of("[\"a\xC3\x28\"]");
  CHECK(e.code == json_errc::invalid_utf8);
  CHECK(e.offset == 3);
}

TEST_CASE("a fault after an escape is named at its own byte, for its own reason", "[json_parser]") {
  struct fault {
    std::string_view json;
    json_errc code;
    std::size_t offset;
  };
  // An escape that is fine is never blamed for the byte after it.
  for (const fault f : {fault{"[\"\x01\"]", json_errc::control_character, 2},
                        fault{"[\"a\\nb\x01\"]", json_errc::control_character, 6},
                        fault{"[\"\\n\x1f\"]", json_errc::control_character, 4},
                        fault{"[\"a\\\\b\x01\"]", json_errc::control_character, 6},
                        fault{"[\"a\\\"b\x01\"]", json_errc::control_character, 6},
                        fault{"[\"\\u00e9\x02\"]", json_errc::control_character, 8},
                        fault{"[\"ab\\n\xFF\"]", json_errc::invalid_utf8, 6},
                        fault{"[\"\xFF\"]", json_errc::invalid_utf8, 2},
                        fault{"[\"\\t\xC3(\"]", json_errc::invalid_utf8, 4},
                        fault{"[\"\\t\xE2\x82(\"]", json_errc::invalid_utf8, 4},
                        fault{"[\"\\u00e9\xFF\"]", json_errc::invalid_utf8, 8},
                        fault{"[1, \"\\n\xFF\"]", json_errc::invalid_utf8, 7},
                        fault{"[1, \xE2\x82(]", json_errc::invalid_utf8, 4},
                        // The escape itself is at fault: named at its backslash.
                        fault{"[\"a\\n\\q\"]", json_errc::invalid_escape, 5},
                        fault{"[\"\\u12\x01\"]", json_errc::invalid_escape, 2},
                        fault{"[\"x\\ud800\"]", json_errc::invalid_escape, 3}}) {
    INFO(f.json);
    const auto e = error_of(f.json);
    CHECK(e.code == f.code);
    CHECK(e.offset == f.offset);
    if (f.code == json_errc::control_character) CHECK(e.message.find("control character") != std::string::npos);
    if (f.code == json_errc::invalid_utf8) CHECK(e.message.find("UTF-8") != std::string::npos);
  }
}

TEST_CASE("invalid UTF-8 outside strings, and smart quotes", "[json_parser]") {
  CHECK(error_of("[1, \xFF]").code == json_errc::invalid_utf8);
  const auto e = error_of("{\xE2\x80\x9C" "a\xE2\x80\x9D: 1}");
  CHECK(e.code == json_errc::unexpected_character);
  CHECK(e.message == "unexpected U+201C, expected a string key or '}'");
}

TEST_CASE("empty input, trailing content and bad literals", "[json_parser]") {
  CHECK(error_of("").code == json_errc::empty_document);
  CHECK(error_of(" \n\t").code == json_errc::empty_document);
  // A default view has a null data pointer, which no C library call may see.
  CHECK(error_of(std::string_view{}).code == json_errc::empty_document);
  CHECK(llmdlq::position_of(std::string_view{}, 0).line == 1);
  auto e = error_of(R"({"a":1} {"b":2})");
  CHECK(e.code == json_errc::trailing_content);
  CHECK(e.offset == 8);
  e = error_of("[True]");
  CHECK(e.code == json_errc::unexpected_character);
  CHECK(e.offset == 1);
  e = error_of("[01]");
  CHECK(e.message == "invalid number or literal");
  CHECK(e.offset == 1);
}

TEST_CASE("numbers beyond simdjson's range are rejected on both paths", "[json_parser]") {
  auto e = error_of("[1, 100000000000000000000]");
  CHECK(e.code == json_errc::number_out_of_range);
  CHECK(e.offset == 4);
  e = error_of("[1e400]");
  CHECK(e.code == json_errc::number_out_of_range);
  CHECK(e.offset == 1);
}

TEST_CASE("size and depth limits", "[json_parser]") {
  llmdlq::parse_options options;
  options.max_size = 8;
  auto e = error_of("[1,2,3,4,5]", options);
  CHECK(e.code == json_errc::too_large);

  options = {};
  options.max_depth = 3;
  llmdlq::json_parser parser(options);
  CHECK(parser.parse(R"([[{"a":1}]])").has_value());
  CHECK(llmdlq::parse_value(R"([[{"a":1}]])", options).has_value());
  e = error_of(R"([[{"a":[1]}]])", options);
  CHECK(e.code == json_errc::too_deep);
  CHECK(e.offset == 8);
}

TEST_CASE("a padded input is parsed in place, and the parser is reusable", "[json_parser]") {
  llmdlq::json_parser parser;
  simdjson::padded_string padded(std::string_view(R"({"k":[1,2,3]})"));
  auto doc = parser.parse(simdjson::padded_string_view(padded));
  REQUIRE(doc.has_value());
  CHECK(doc->root().at_key("k").get_array().size() == 3);
  CHECK_FALSE(parser.parse("[").has_value());
  CHECK(parser.parse("[2]").has_value());
}

TEST_CASE("numbers at the edges of a double's range, on every path", "[json_parser]") {
  // Found by fuzzing: Boost.JSON's own conversion is not correctly rounded
  // and rejects some exponents simdjson reads; check_syntax and parse_value
  // must still agree with json_parser.
  llmdlq::json_parser parser;
  for (std::string_view json : {"[1.7976931348623158e308]", "0e400", "1e-400", "[0e99999999999]", "1e-2147483648",
                                "-0.000e-99999"}) {
    INFO(json);
    CHECK(parser.parse(json).has_value());
    CHECK_FALSE(llmdlq::check_syntax(json).has_value());
    CHECK(llmdlq::parse_value(json).has_value());
  }
  for (std::string_view json : {"[1.7976931348623159e308]", "1e400", "-12e99999999999"}) {
    INFO(json);
    CHECK_FALSE(parser.parse(json).has_value());
    REQUIRE(llmdlq::check_syntax(json).has_value());
    CHECK(llmdlq::check_syntax(json)->code == json_errc::number_out_of_range);
  }
}

}  // namespace json_parser_test
