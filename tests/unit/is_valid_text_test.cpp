// SPDX-License-Identifier: MIT
// schema::is_valid_text, validation while parsing: the edges of the text
// (cut anywhere, padding that looks like JSON, too deep, numbers beyond 64
// bits or a double, escapes, duplicate keys) get the verdict of parsing and
// validating the document, and the pass's work grows linearly.
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <llmdlq/detail/schema/forward_evaluator.hpp>
#include <llmdlq/detail/schema/schema_access.hpp>
#include <llmdlq/detail/json/text_scan.hpp>
#include <llmdlq/json_parser.hpp>
#include <llmdlq/schema.hpp>

#include "catch.hpp"

namespace is_valid_text_test {

const llmdlq::schema& receipt_schema() {
  static const llmdlq::schema schema = *llmdlq::schema::compile(R"({
    "type": "object", "additionalProperties": false, "required": ["merchant", "total", "items"],
    "properties": {
      "merchant": {"type": "string", "minLength": 1},
      "total": {"type": "number", "minimum": 0, "multipleOf": 0.01},
      "count": {"type": "integer"},
      "note": {"type": ["string", "null"], "pattern": "^[^<]*$"},
      "items": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/item"}}},
    "$defs": {"item": {"type": "object", "required": ["sku"], "properties": {
      "sku": {"type": "string", "maxLength": 8}, "price": {"type": "number"}}}}})");
  return schema;
}

// The verdict of parsing, then validating the document.
bool parsed_and_valid(const llmdlq::schema& schema, std::string_view text) {
  llmdlq::json_parser parser;
  auto doc = parser.parse(text);
  return doc && schema.is_valid(*doc);
}

const std::string receipt =
    R"({"merchant": "Caf\u00e9 \"Noord\"", "total": 12.50, "count": 3, "note": null,
        "items": [{"sku": "A-1", "price": 2.5}, {"sku": "B\/2"}, {"sku": "\ud83d\ude00"}]})";

TEST_CASE("is_valid_text agrees with parse-then-validate on a document cut at every byte, whatever its padding",
          "[schema][forward]") {
  REQUIRE(receipt_schema().is_valid_text(receipt));
  for (const char pad : {'\0', ']', '}', '"', ' ', '1', ','}) {
    for (std::size_t cut = 0; cut <= receipt.size(); ++cut) {
      // The text in a buffer whose padding holds JSON's own characters:
      // the pass must never read them as part of the text.
      std::string buffer = receipt.substr(0, cut) + std::string(simdjson::SIMDJSON_PADDING + 8, pad);
      const simdjson::padded_string_view in_place(buffer.data(), cut, buffer.size());
      const bool expected = parsed_and_valid(receipt_schema(), receipt.substr(0, cut));
      INFO("cut at " << cut << ", padding '" << pad << "'");
      CHECK(receipt_schema().is_valid_text(in_place) == expected);
      CHECK(receipt_schema().is_valid_text(std::string_view(receipt).substr(0, cut)) == expected);
    }
  }
}

TEST_CASE("is_valid_text agrees with parse-then-validate on the edges of JSON text", "[schema][forward]") {
  const std::vector<std::string> texts = {
      // Whitespace, trailing content, literals.
      " \n\t{\"merchant\":\"m\",\"total\":1,\"items\":[{\"sku\":\"x\"}]}\r\n ",
      R"({"merchant":"m","total":1,"items":[{"sku":"x"}]} {})", R"({"merchant":"m","total":1,"items":[{"sku":"x"}]}})",
      R"({"merchant":"m","total":1,"items":[{"sku":"x"}]},)", R"({"merchant":"m","total":1,"items":[{"sku":"x"}],})",
      R"({"merchant":"m","total":1,"items":[{"sku":"x"},]})",
      R"({"merchant":"m","total":1,"items":[{"sku":"x"}] "note":null})",
      R"({"merchant":"m","total":1,"items":[{"sku":"x"}],"note":nul})",
      R"({"merchant":"m","total":1,"items":[{"sku":"x"}],"note":nullx})",
      R"({"merchant":"m","total":1,"items":[{"sku":"x"}],"note":true})",
      R"({"merchant" "m","total":1,"items":[{"sku":"x"}]})", R"({"merchant":"m""total":1,"items":[{"sku":"x"}]})",
      // Numbers: the grammar, 64 bits, a double's range, negative zero.
      R"({"merchant":"m","total":01,"items":[{"sku":"x"}]})", R"({"merchant":"m","total":1.,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":.5,"items":[{"sku":"x"}]})", R"({"merchant":"m","total":+1,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":1e,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":-0,"count":-0,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":1E+2,"count":1.0,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":1,"count":9223372036854775807,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":1,"count":9223372036854775808,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":1,"count":18446744073709551615,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":1,"count":18446744073709551616,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":1,"count":-9223372036854775808,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":1,"count":-9223372036854775809,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":1e400,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":1e-400,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":4.9e-324,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":12.345,"items":[{"sku":"x"}]})",
      // Strings: escapes, surrogates, the escaped key.
      R"({"merchant":"\u0000","total":1,"items":[{"sku":"x"}]})",
      R"({"merchant":"\ud800","total":1,"items":[{"sku":"x"}]})",
      R"({"merchant":"\udc00","total":1,"items":[{"sku":"x"}]})",
      R"({"merchant":"\ud800\u0041","total":1,"items":[{"sku":"x"}]})",
      R"({"merchant":"\x41","total":1,"items":[{"sku":"x"}]})",
      R"({"merchant":"\u00G1","total":1,"items":[{"sku":"x"}]})",
      R"({"merch\u0061nt":"m","total":1,"items":[{"sku":"x"}]})",
      R"({"merchant":"m","total":1,"items":[{"sku":"123456789"}]})",
      R"({"merchant":"m","total":1,"items":[{"sku":"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"}]})",
      R"({"merchant":"m","total":1,"note":"a<b","items":[{"sku":"x"}]})",
      // Keys twice: each is judged, as on the tape.
      R"({"merchant":"m","total":1,"items":[{"sku":"x"}],"total":"1"})",
      R"({"merchant":"m","total":1,"items":[{"sku":"x"}],"total":2})",
      // Nothing but whitespace, and a lone scalar.
      "", "   ", "null", "\"m\"", "12"};
  for (const auto& text : texts) {
    INFO(text);
    CHECK(receipt_schema().is_valid_text(text) == parsed_and_valid(receipt_schema(), text));
  }
}

TEST_CASE("is_valid_text reads every number as simdjson does, to the last bit", "[schema][forward]") {
  // Random decimals of every shape: short and long mantissas, fractions,
  // exponents near and far, signs. The schema's const is the number as
  // simdjson read it (the schema is parsed by it): the pass agrees exactly.
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state](std::uint64_t bound) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state % bound;
  };
  for (int i = 0; i < 5000; ++i) {
    std::string number = next(3) == 0 ? "-" : "";
    const std::uint64_t integer_digits = 1 + next(22);
    number += static_cast<char>('1' + next(9));
    for (std::uint64_t d = 1; d < integer_digits; ++d) number += static_cast<char>('0' + next(10));
    if (next(2)) {
      number += '.';
      for (std::uint64_t d = 0, n = 1 + next(20); d < n; ++d) number += static_cast<char>('0' + next(10));
    }
    if (next(3) == 0) number += (next(2) ? "e-" : "E+") + std::to_string(next(330));
    const auto schema = llmdlq::schema::compile(R"({"const": )" + number + "}");
    if (!schema) continue;  // beyond a double: not a schema
    INFO(number);
    const auto verdict = llmdlq::detail::judge_text(llmdlq::detail::schema_access::of(*schema), number, false,
                                                    std::nullopt, {});
    CHECK(verdict != llmdlq::detail::forward_verdict::invalid);
    CHECK(schema->is_valid_text(number));
  }
}

TEST_CASE("is_valid_text: deeper than the parser's limit is not valid, as the parser says", "[schema][forward]") {
  const auto any = llmdlq::schema::compile("{}");
  REQUIRE(any);
  for (const std::size_t depth : {10u, 126u, 127u, 128u, 129u, 400u}) {
    const std::string text = std::string(depth, '[') + std::string(depth, ']');
    INFO(depth << " levels");
    CHECK(any->is_valid_text(text) == parsed_and_valid(*any, text));
  }
  llmdlq::parse_options shallow;
  shallow.max_depth = 3;
  CHECK(any->is_valid_text("[[1]]", {}, shallow));
  CHECK_FALSE(any->is_valid_text("[[[[1]]]]", {}, shallow));
  shallow.max_size = 4;
  CHECK_FALSE(any->is_valid_text("[[1]]", {}, shallow));
}

TEST_CASE("is_valid_text finds where a string ends, whatever follows it or hides in it", "[schema][forward]") {
  // Strings ending before blanks, at a block's edge, with quotes and
  // backslashes escaped before and after the eighth byte, and literals or
  // numbers run into other bytes.
  for (std::size_t length = 0; length < 20; ++length) {
    for (const std::string& inner :
         std::vector<std::string>{std::string(length, 'a'), std::string(length, 'a') + "\\\"",
                                  "\\\"" + std::string(length, 'b'), std::string(length, ' ') + "\\n"}) {
      for (const std::string blanks : {"", " ", "\n\t  \r\n"}) {
        const std::string text = "{\"merchant\"" + blanks + ":\"" + inner + "\"" + blanks +
                                 ",\"total\":1,\"items\":[{\"sku\":\"" + inner.substr(0, 8) + "\"" + blanks + "}]}";
        INFO(text);
        CHECK(receipt_schema().is_valid_text(text) == parsed_and_valid(receipt_schema(), text));
      }
    }
  }
  for (const std::string& text :
       std::vector<std::string>{R"({"merchant":"m"x,"total":1,"items":[{"sku":"x"}]})",
                                R"({"merchant":"m" "x","total":1,"items":[{"sku":"x"}]})",
                                R"({"merchant":"m","total":1x,"items":[{"sku":"x"}]})",
                                R"({"merchant":"m","total":1 2,"items":[{"sku":"x"}]})",
                                R"({"merchant":"m","total":1,"count":truex,"items":[{"sku":"x"}]})",
                                R"({"merchant":"m","total":1,"note":nul,"items":[{"sku":"x"}]})",
                                "```json\n" + std::string(300, ' ') + "\n```"}) {
    INFO(text);
    CHECK_FALSE(parsed_and_valid(receipt_schema(), text));
    CHECK_FALSE(receipt_schema().is_valid_text(text));
  }
}

TEST_CASE("A string's end is found at the same byte eight bytes a step, by vectors, and one byte at a time",
          "[schema][forward]") {
  std::mt19937 random(26);
  const char alphabet[] = {'a', '"', '\\', '\0', '\xC3', '\xA9', ' ', '\x22'};
  for (int round = 0; round < 20000; ++round) {
    const std::size_t length = random() % 100;
    std::string text;
    for (std::size_t i = 0; i < length; ++i) text += random() % 4 ? 'a' : alphabet[random() % sizeof alphabet];
    text += '"';  // the caller's guarantee: the body ends
    text.append(simdjson::SIMDJSON_PADDING, static_cast<char>(random() % 2 ? '"' : 'x'));
    const std::size_t first = text.find_first_of("\"\\");
    const auto words = llmdlq::detail::quote_or_backslash_by_words(text.data());
    CHECK(static_cast<std::size_t>(words.at - text.data()) == first);
    CHECK(words.quote == (text[first] == '"'));
#if defined(__SSE2__)
    const auto vectors = llmdlq::detail::quote_or_backslash_by_vectors(text.data());
    CHECK(vectors.at == words.at);
    CHECK(vectors.quote == words.quote);
#endif
  }
}

TEST_CASE("is_valid_text leaves a container at a root it cannot judge to the tape, scalars not", "[schema][forward]") {
  // Two branches take objects: the union is not settled by kind.
  const auto schema = llmdlq::schema::compile(R"({"oneOf": [{"type": "object", "required": ["a"]},
      {"type": "object", "required": ["b"]}, {"type": "string", "maxLength": 3}]})");
  REQUIRE(schema);
  const auto& prog = llmdlq::detail::schema_access::of(*schema);
  std::uint64_t steps = 1;
  CHECK(llmdlq::detail::judge_text(prog, R"( {"a": 1})", false, std::nullopt, {}, &steps) ==
        llmdlq::detail::forward_verdict::undecided);
  CHECK(steps == 1);  // not read at all
  CHECK(llmdlq::detail::judge_text(prog, R"("abcd")", false, std::nullopt, {}) ==
        llmdlq::detail::forward_verdict::invalid);
  CHECK(llmdlq::detail::judge_text(prog, R"("abc")", false, std::nullopt, {}) ==
        llmdlq::detail::forward_verdict::valid);
  for (const std::string_view text : {R"({"a": 1})", R"({"b": 1})", "[]", R"("abc")", "\"abcd\"", "{"}) {
    INFO(text);
    CHECK(schema->is_valid_text(text) == parsed_and_valid(*schema, text));
  }
}

TEST_CASE("is_valid_text parses at once a container that could meet a keyword the pass leaves to the tape",
          "[schema][forward]") {
  // Deep in the schema, not at its root: an object may reach the oneOf, whose branches overlap.
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "properties": {"items": {"type": "array",
      "items": {"oneOf": [{"type": "object", "required": ["a"]}, {"type": "object", "required": ["b"]},
                          {"type": "string"}]}}}})");
  REQUIRE(schema);
  const auto& prog = llmdlq::detail::schema_access::of(*schema);
  CHECK_FALSE(prog.forward_pass);
  std::uint64_t steps = 1;
  CHECK(llmdlq::detail::judge_text(prog, R"({"items": ["x"]})", false, std::nullopt, {}, &steps) ==
        llmdlq::detail::forward_verdict::undecided);
  CHECK(steps == 1);  // not read at all
  CHECK(llmdlq::detail::judge_text(prog, R"("x")", false, std::nullopt, {}) ==
        llmdlq::detail::forward_verdict::invalid);  // a scalar cannot meet it: still judged
  for (const std::string_view text :
       {R"({"items": ["x", {"a": 1}]})", R"({"items": [{"b": 1}]})", R"({"items": [1]})", R"({"items": {}})", "[]"}) {
    INFO(text);
    CHECK(schema->is_valid_text(text) == parsed_and_valid(*schema, text));
  }
}

TEST_CASE("is_valid_text judges a container against the branch of its kind in a union settled by kind",
          "[schema][forward]") {
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "properties": {"items": {"type": "array",
      "items": {"oneOf": [{"type": "object", "required": ["a"]}, {"$ref": "#/$defs/names"}]}}},
      "$defs": {"names": {"type": "array", "items": {"type": "string"}}}})");
  REQUIRE(schema);
  const auto& prog = llmdlq::detail::schema_access::of(*schema);
  CHECK(prog.forward_pass);
  CHECK(llmdlq::detail::judge_text(prog, R"({"items": [{"a": 1}, ["x", "y"], []]})", false, std::nullopt, {}) ==
        llmdlq::detail::forward_verdict::valid);
  CHECK(llmdlq::detail::judge_text(prog, R"({"items": [{"a": 1}, {"b": 1}]})", false, std::nullopt, {}) ==
        llmdlq::detail::forward_verdict::invalid);
  CHECK(llmdlq::detail::judge_text(prog, R"({"items": [["x", 2]]})", false, std::nullopt, {}) ==
        llmdlq::detail::forward_verdict::invalid);
  CHECK(llmdlq::detail::judge_text(prog, R"({"items": ["x"]})", false, std::nullopt, {}) ==
        llmdlq::detail::forward_verdict::invalid);  // no branch takes a string
  for (const std::string_view text : {R"({"items": [{"a": 1}, ["x"]]})", R"({"items": [{"b": 1}]})",
                                      R"({"items": [1]})", R"({"items": [null, []]})", R"({"items": {}})", "[]"}) {
    INFO(text);
    CHECK(schema->is_valid_text(text) == parsed_and_valid(*schema, text));
  }
}

TEST_CASE("is_valid_text judges a container against combinators that admit no container", "[schema][forward]") {
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "properties": {
      "a": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]},
      "b": {"enum": ["x", 1, null]}, "c": {"allOf": [{"type": ["array", "number"]}, {"type": ["object", "number"]}]},
      "d": {"$ref": "#/$defs/d"}}, "$defs": {"d": {"oneOf": [{"const": "e"}, {"type": "boolean"}]}}})");
  REQUIRE(schema);
  const auto& prog = llmdlq::detail::schema_access::of(*schema);
  CHECK(prog.forward_pass);
  const std::pair<std::string_view, llmdlq::detail::forward_verdict> cases[] = {
      {R"({"a": "abc", "b": 1, "c": 2, "d": "e"})", llmdlq::detail::forward_verdict::valid},
      {R"({"a": null, "b": null, "d": true})", llmdlq::detail::forward_verdict::valid},
      {R"({"a": "abcd"})", llmdlq::detail::forward_verdict::invalid},
      {R"({"a": {}})", llmdlq::detail::forward_verdict::invalid},
      {R"({"a": ["x"]})", llmdlq::detail::forward_verdict::invalid},
      {R"({"b": {"x": 1}})", llmdlq::detail::forward_verdict::invalid},
      {R"({"c": []})", llmdlq::detail::forward_verdict::invalid},
      {R"({"c": {}})", llmdlq::detail::forward_verdict::invalid},
      {R"({"d": [true]})", llmdlq::detail::forward_verdict::invalid},
  };
  for (const auto& [text, verdict] : cases) {
    INFO(text);
    CHECK(llmdlq::detail::judge_text(prog, text, false, std::nullopt, {}) == verdict);
    CHECK(schema->is_valid_text(text) == parsed_and_valid(*schema, text));
    CHECK(parsed_and_valid(*schema, text) == (verdict == llmdlq::detail::forward_verdict::valid));
  }
}

TEST_CASE("is_valid_text reads a document in work linear in its size", "[schema][forward][linear]") {
  const auto& prog = llmdlq::detail::schema_access::of(receipt_schema());
  auto steps_for = [&](std::size_t items) {
    std::string text = R"({"merchant":"m","total":1,"items":[)";
    for (std::size_t i = 0; i < items; ++i) text += std::string(i ? "," : "") + R"({"sku":"A-1","price":2.5})";
    text += "]}";
    std::uint64_t steps = 0;
    const auto verdict = llmdlq::detail::judge_text(prog, text, false, std::nullopt, {}, &steps);
    CHECK(verdict == llmdlq::detail::forward_verdict::valid);
    return steps;
  };
  const std::uint64_t n = steps_for(10'000), twice = steps_for(20'000);
  CHECK(twice >= 2 * n - 16);
  CHECK(twice <= 2 * n + 16);
}

}  // namespace is_valid_text_test
