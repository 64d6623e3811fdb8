// SPDX-License-Identifier: MIT
// The JSON text layer every stage reads with (include/llmdlq/detail/json/):
// one escape reader whose faults each reader handles its own way, one
// number grammar read two ways (stream and lexeme) held to one language, the
// span locator's strings, and where a text stops being UTF-8.
#include <regex>
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

TEST_CASE("scan_number: a number's parts as written, and whether RFC 8259 reads them", "[json_text]") {
  using llmdlq::detail::is_json_number;
  using llmdlq::detail::scan_number;
  for (const auto number : {"0"sv, "-0"sv, "12"sv, "-0.5"sv, "1e9"sv, "1E+9"sv, "2.50e-3"sv}) {
    INFO(number);
    CHECK(is_json_number(number));
  }
  for (const auto lexeme : {"01"sv, "1."sv, "1e+"sv, "-"sv, ".5"sv, "+1"sv, "-.5"sv, "1.e5"sv, ""sv, "12,"sv}) {
    INFO(lexeme);
    CHECK_FALSE(is_json_number(lexeme));
  }
  const auto n = scan_number<llmdlq::detail::number_reading::lenient>("-10.25E+300,");
  CHECK(n.end == 11);
  CHECK(n.negative);
  CHECK(n.integer == 1);
  CHECK(n.integer_digits() == 2);
  CHECK(n.fraction_digits == 2);
  CHECK(n.exponent_digits() == 3);
  CHECK(n.mantissa == 1025);
  CHECK(n.exponent_value == 300);
  // What models write: read on in the lenient reading, for repair to
  // rewrite; the strict one stops at the first fault.
  using llmdlq::detail::number_reading;
  const auto lenient = scan_number<number_reading::lenient>("+.5}");
  CHECK(lenient.end == 3);
  CHECK_FALSE(lenient.json);
  CHECK_FALSE(lenient.negative);
  CHECK(lenient.integer_digits() == 0);
  CHECK(lenient.fraction_digits == 1);
  CHECK(scan_number<number_reading::lenient>("2.").dot);
  CHECK(scan_number<number_reading::lenient>("2.").fraction_digits == 0);
  CHECK(scan_number<number_reading::lenient>("007").integer_digits() == 3);
  CHECK(scan_number<number_reading::lenient>("1e").exponent_digits() == 0);
  for (const auto lexeme : {"+1"sv, ".5"sv, "2."sv, "007"sv, "1e"sv, "-"sv}) {
    INFO(lexeme);
    CHECK_FALSE(scan_number(lexeme).json);
    CHECK_FALSE(scan_number<number_reading::lenient>(lexeme).json);
  }
  // The first 19 digits make the mantissa; a leading zero is not one.
  const auto long_number = scan_number("0.12345678901234567890123");
  CHECK(long_number.digits == 23);
  CHECK(long_number.mantissa == 1234567890123456789u);
  CHECK(long_number.json);
}

// Whether stepping number_next over the whole of `text` ends in a number.
bool transition_reads(std::string_view text) {
  using namespace llmdlq::detail;
  if (text.empty()) return false;
  number_part part = number_start(text[0]);
  for (const char c : text.substr(1)) {
    if (part == number_part::none) return false;
    part = number_next(part, c);
  }
  return number_complete(part);
}

TEST_CASE("number grammar: the stream's transition function and scan_number read one language", "[json_text]") {
  // Every text of up to seven bytes over what numbers are made of, and one
  // byte that is not: the two readers agree on each, and with RFC 8259's
  // grammar as a regular expression on the shorter ones.
  constexpr std::string_view alphabet = "-+0.1eEx";
  const std::regex rfc8259(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
  std::string text;
  std::size_t numbers = 0, texts = 0;
  for (std::size_t length = 1; length <= 7; ++length) {
    std::vector<std::size_t> at(length, 0);
    while (true) {
      text.clear();
      for (const std::size_t i : at) text += alphabet[i];
      const bool scanned = llmdlq::detail::is_json_number(text);
      if (scanned != transition_reads(text)) FAIL("the two readers differ on " << text);
      if (length <= 5 && scanned != std::regex_match(text, rfc8259)) FAIL("the grammar differs on " << text);
      numbers += scanned;
      ++texts;
      std::size_t k = 0;
      while (k < length && ++at[k] == alphabet.size()) at[k++] = 0;
      if (k == length) break;
    }
  }
  CHECK(texts == 2396744);  // 8 + 8^2 + ... + 8^7
  CHECK(numbers == 2944);   // as Python's re counts them
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
