// SPDX-License-Identifier: MIT
// The JSON text layer every stage reads with (include/llmdlq/detail/json/):
// one escape reader whose faults each reader handles its own way, one
// number grammar for the stream judge and redaction, the
// span locator's strings, and where a text stops being UTF-8.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "llmdlq/detail/json/number_grammar.hpp"
#include "llmdlq/detail/json/span_locator.hpp"
#include "llmdlq/detail/json/string_escape.hpp"
#include "llmdlq/detail/json/utf8_check.hpp"

namespace json_text_test {

using namespace std::string_view_literals;
using llmdlq::detail::escape_fault;
using llmdlq::detail::read_json_escape;

TEST_CASE("read_json_escape: each escape's code point and width", "[json_text]") {
  CHECK(read_json_escape(R"(\n)", 0).code_point == U'\n');
  CHECK(read_json_escape(R"(\/)", 0).code_point == U'/');
  const auto e_acute = read_json_escape(R"(x\u00e9y)", 1);
  CHECK(e_acute.code_point == U'\u00e9');
  CHECK(e_acute.width == 6);
  const auto pair = read_json_escape(R"(\ud83d\ude00)", 0);
  CHECK(pair.fault == escape_fault::none);
  CHECK(pair.code_point == U'\U0001F600');
  CHECK(pair.width == 12);
}

TEST_CASE("read_json_escape: a fault is named, with the width a reader skips", "[json_text]") {
  CHECK(read_json_escape("\\", 0).fault == escape_fault::truncated);
  CHECK(read_json_escape(R"(\u00)", 0).fault == escape_fault::truncated);
  CHECK(read_json_escape(R"(\u12G4)", 0).fault == escape_fault::invalid);
  CHECK(read_json_escape(R"(\a)", 0).fault == escape_fault::invalid);
  CHECK(read_json_escape(R"(\x41)", 0).fault == escape_fault::invalid);
  // Half a pair: a high one alone, before a non-low unit, or a low one first.
  const auto high = read_json_escape(R"(\ud83dx)", 0);
  CHECK(high.fault == escape_fault::lone_surrogate);
  CHECK(high.width == 6);
  CHECK(read_json_escape(R"(\ud83d\u0041)", 0).fault == escape_fault::lone_surrogate);
  CHECK(read_json_escape(R"(\ude00\ud83d)", 0).fault == escape_fault::lone_surrogate);
}

TEST_CASE("unescape_json_string: strict, refusing any faulty escape", "[json_text]") {
  std::string out;
  REQUIRE(llmdlq::detail::unescape_json_string(R"(a\"b\\c\u00e9\ud83d\ude00 end)", out));
  CHECK(out == "a\"b\\c\u00e9\U0001F600 end");
  CHECK_FALSE(llmdlq::detail::unescape_json_string(R"(ok \ud83d then)", out));
  CHECK_FALSE(llmdlq::detail::unescape_json_string(R"(\q)", out));
  CHECK_FALSE(llmdlq::detail::unescape_json_string("cut \\", out));
}

TEST_CASE("the span locator reads keys through the same escapes", "[json_text]") {
  const std::string_view text = R"({"caf\u00e9": 1, "\ud83d\u0041": 2, "plain": "x\"y"})";
  const llmdlq::detail::json_locator locator(text);
  const auto cafe = locator.find("/caf\u00e9");
  REQUIRE(cafe);
  CHECK(text.substr(cafe->begin, cafe->end - cafe->begin) == "1");
  // A high surrogate before a unit that is not a low one encodes nothing:
  // no string is read, where a pair of them was assumed before.
  CHECK_FALSE(locator.string_at(text.find(R"("\ud83d)")));
  const auto plain = locator.find("/plain");
  REQUIRE(plain);
  CHECK(locator.string_at(plain->begin) == "x\"y");
  CHECK_FALSE(llmdlq::detail::json_locator(R"("open \"string)").string_at(0));
}

// The parts of a number, each with the bytes scan_number gave it.
std::vector<std::pair<llmdlq::detail::number_part, std::string>> parts_of(std::string_view text) {
  std::vector<std::pair<llmdlq::detail::number_part, std::string>> parts;
  llmdlq::detail::scan_number(text, [&](llmdlq::detail::number_part part, std::string_view bytes) {
    parts.emplace_back(part, std::string(bytes));
  });
  return parts;
}

TEST_CASE("scan_number: RFC 8259's grammar, the longest prefix and whether it is whole", "[json_text]") {
  using llmdlq::detail::scan_number;
  for (const auto number : {"0"sv, "-0"sv, "12"sv, "-0.5"sv, "1e9"sv, "1E+9"sv, "2.50e-3"sv}) {
    INFO(number);
    const auto lexeme = scan_number(number);
    CHECK(lexeme.complete);
    CHECK(lexeme.length == number.size());
  }
  // Where the grammar stops, and whether what it read is a number.
  CHECK(scan_number("01").length == 1);
  CHECK(scan_number("01").complete);
  CHECK(scan_number("1.").length == 2);
  CHECK_FALSE(scan_number("1.").complete);
  CHECK_FALSE(scan_number("1e+").complete);
  CHECK_FALSE(scan_number("-").complete);
  CHECK(scan_number(".5").length == 0);
  CHECK(scan_number("+1").length == 0);
  CHECK(scan_number("12,").length == 2);
  using part = llmdlq::detail::number_part;
  using run = std::pair<part, std::string>;
  CHECK(parts_of("-10.25E+300") == std::vector<run>{{part::minus, "-"},
                                                    {part::integer, "10"},
                                                    {part::dot, "."},
                                                    {part::fraction, "25"},
                                                    {part::e, "E"},
                                                    {part::e_sign, "+"},
                                                    {part::exponent, "300"}});
  CHECK(parts_of("0.5") == std::vector<run>{{part::zero, "0"}, {part::dot, "."}, {part::fraction, "5"}});
}

TEST_CASE("first_invalid_utf8: the offset of the first bad byte, or the size", "[json_text]") {
  using llmdlq::detail::first_invalid_utf8;
  CHECK(first_invalid_utf8("plain \xC3\xA9 text") == 13);
  CHECK(first_invalid_utf8("ab\xC3") == 2);           // cut inside a sequence
  CHECK(first_invalid_utf8("ab\xED\xA0\x80x") == 2);  // a surrogate encoded
  CHECK(first_invalid_utf8("\xC0\xAF") == 0);         // an overlong form
  CHECK(first_invalid_utf8("") == 0);
}

}  // namespace json_text_test
