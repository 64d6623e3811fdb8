// SPDX-License-Identifier: MIT
// Local repair: each repair kind before and after, with the actions it
// reports, and the invariants every caller relies on.
#include <llmdlq/json_parser.hpp>
#include <llmdlq/repair.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "catch.hpp"
#include "support/repair_replay.hpp"
#include "support/temp_dir.hpp"

namespace repair_test {

using llmdlq::repair_errc;
using llmdlq::repair_tier;

namespace {

llmdlq::repair_options all_tiers() {
  llmdlq::repair_options options;
  options.allowed = {repair_tier::lossless, repair_tier::syntactic, repair_tier::lossy};
  return options;
}

std::vector<std::string> codes_of(const llmdlq::repair_result& r) {
  std::vector<std::string> codes;
  for (const auto& a : r.actions) codes.emplace_back(a.code);
  return codes;
}

/// Checks that the actions replay: applied to `input`, they give `json`.
void check_replays(std::string_view input, const llmdlq::repair_result& r) {
  const auto replayed = llmdlq::test::replay(input, r.actions);
  REQUIRE(replayed.has_value());
  CHECK(*replayed == r.json);
}

/// Repairs `input` with every tier allowed and checks the invariants that
/// hold for any success: strict JSON out, idempotent, actions that replay.
llmdlq::repair_result repaired(std::string_view input, const llmdlq::repair_options& options = all_tiers()) {
  auto result = llmdlq::repair(input, options);
  INFO("input: " << input.substr(0, 200));
  REQUIRE(result.has_value());
  CHECK_FALSE(llmdlq::check_syntax(result->json));
  const auto again = llmdlq::repair(result->json, options);
  REQUIRE(again.has_value());
  CHECK(again->json == result->json);
  CHECK(again->actions.empty());
  check_replays(input, *result);
  return std::move(*result);
}

void check_repair(std::string_view input, std::string_view expected, std::vector<std::string> codes,
                  repair_tier tier = repair_tier::syntactic) {
  const auto r = repaired(input);
  CHECK(r.json == expected);
  CHECK(codes_of(r) == codes);
  for (const auto& a : r.actions) {
    if (a.code != "markdown_fence" && a.code != "prose_around_json") CHECK(a.tier == tier);
  }
}

llmdlq::repair_error error_of(std::string_view input, const llmdlq::repair_options& options = all_tiers()) {
  auto result = llmdlq::repair(input, options);
  INFO("input: " << input.substr(0, 200));
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().offset <= input.size());
  CHECK_FALSE(result.error().message.empty());
  return result.error();
}

}  // namespace

TEST_CASE("valid JSON comes back byte for byte, with no actions", "[repair]") {
  for (std::string_view valid : {R"({"a": [1, 2.5e3, true, null, "x\n\"y\""]})", " [ ] ", R"("just a string")",
                                 "42", R"({"naïve": "日本"})"}) {
    const auto r = llmdlq::repair(valid);
    REQUIRE(r.has_value());
    CHECK(r->json == valid);
    CHECK(r->actions.empty());
    CHECK_FALSE(r->truncated);
  }
}

TEST_CASE("commas: trailing, leading, doubled and missing", "[repair]") {
  check_repair(R"({"a": 1, "b": [1, 2,],})", R"({"a": 1, "b": [1, 2]})", {"trailing_comma", "trailing_comma"});
  check_repair("[, 1]", "[ 1]", {"leading_comma"});
  check_repair("{,\"a\": 1}", "{\"a\": 1}", {"leading_comma"});
  check_repair("[1,, 2]", "[1, 2]", {"redundant_comma"});
  check_repair("[1 2 3]", "[1, 2, 3]", {"missing_comma", "missing_comma"});
  check_repair("{\"a\": \"x\"\n \"b\": {\"c\": 1}\n \"d\": [] }", "{\"a\": \"x\",\n \"b\": {\"c\": 1},\n \"d\": [] }",
               {"missing_comma", "missing_comma"});
  const auto r = repaired("[1 2]");
  CHECK(r.actions[0].begin == 2);  // right after the element, before the blank
  CHECK(r.actions[0].after == ",");
  check_repair(R"({"a" 1})", R"({"a": 1})", {"missing_colon"});
}

TEST_CASE("quotes: single, smart, unquoted keys and inner quotes", "[repair]") {
  // Each quote that changes is an action of its own: the string's quotes,
  // and a double quote inside that now needs its backslash.
  const std::vector<std::string> four(4, "single_quotes");
  check_repair("{'a': 'it''s'}", R"({"a": "it''s"})", four);
  check_repair("{'name': 'it's \"quoted\"'}", R"({"name": "it's \"quoted\""})",
               std::vector<std::string>(6, "single_quotes"));
  check_repair("{\u201Cmerchant\u201D: \u201CAlbert Heijn\u201D}", R"({"merchant": "Albert Heijn"})",
               std::vector<std::string>(4, "smart_quotes"));
  check_repair("{merchant: \"AH\", total_eur: 1, line-items: []}",
               R"({"merchant": "AH", "total_eur": 1, "line-items": []})",
               {"unquoted_key", "unquoted_key", "unquoted_key"});
  check_repair(R"({"note": "he said "hi" to me"})", R"({"note": "he said \"hi\" to me"})",
               {"unescaped_quote", "unescaped_quote"});
  // A closing quote missing before a comma, where the next quote opens a key.
  check_repair(R"({"merchant": "Albert Heijn, "total": 4.2})", R"({"merchant": "Albert Heijn", "total": 4.2})",
               {"missing_quote"});
  check_repair(R"({"note": "he said, "hi" to me", "b": 1})", R"({"note": "he said, \"hi\" to me", "b": 1})",
               {"unescaped_quote", "unescaped_quote"});
  check_repair(R"({"item": "Kaas "Old Amsterdam" 500g", "qty": 1})",
               R"({"item": "Kaas \"Old Amsterdam\" 500g", "qty": 1})", {"unescaped_quote", "unescaped_quote"});
  const auto r = repaired("{'a': 1}");
  REQUIRE(r.actions.size() == 2);
  CHECK(r.actions[0].before == "'");
  CHECK(r.actions[0].after == "\"");
  CHECK(r.actions[0].begin == 1);
  CHECK(r.actions[0].end == 2);
  CHECK(r.actions[1].begin == 3);
  CHECK(r.actions[1].end == 4);
}

TEST_CASE("literals, comments and number lexemes", "[repair]") {
  check_repair("[True, False, None, undefined]", "[true, false, null, null]",
               {"python_literal", "python_literal", "python_literal", "undefined_literal"});
  check_repair("{\n  // the shop\n  \"a\": 1, /* inline */ \"b\": 2 # done\n}", "{\n  \n  \"a\": 1,  \"b\": 2 \n}",
               {"comment", "comment", "comment"});
  check_repair("[.5, 2., -.25, +3, 1e5]", "[0.5, 2.0, -0.25, 3, 1e5]",
               {"number_lexeme", "number_lexeme", "number_lexeme", "number_lexeme"});
}

TEST_CASE("inside strings: control characters and escapes", "[repair]") {
  check_repair("{\"a\": \"line one\nline two\", \"b\": \"tab\there\"}",
               R"({"a": "line one\nline two", "b": "tab\there"})", {"control_character", "control_character"});
  check_repair(std::string_view("[\"bell\x07\"]"), R"(["bell\u0007"])", {"control_character"});
  check_repair(R"(["C:\temp\x", "\'ok\'"])", R"(["C:\temp\\x", "'ok'"])",
               {"invalid_escape", "invalid_escape", "invalid_escape"});
  check_repair(R"(["\u12G4"])", R"(["\\u12G4"])", {"invalid_escape"});
  check_repair(R"(["\ud800 alone"])", R"(["\ufffd alone"])", {"lone_surrogate"}, repair_tier::lossy);
  check_repair(R"(["\ud83d\ude00"])", R"(["\ud83d\ude00"])", {});  // a pair is fine as it is
}

TEST_CASE("whitespace, byte order mark and redundant brackets", "[repair]") {
  check_repair("{\"a\":\u00A01,\u3000\"b\": 2}", "{\"a\": 1, \"b\": 2}", {"unicode_whitespace", "unicode_whitespace"},
               repair_tier::lossless);
  check_repair("\xEF\xBB\xBF{\"a\": 1}", "{\"a\": 1}", {"byte_order_mark"}, repair_tier::lossless);
  check_repair(R"({"a": [1, 2]}]})", R"({"a": [1, 2]})", {"redundant_bracket", "redundant_bracket"});
}

TEST_CASE("stringified JSON and string concatenation", "[repair]") {
  const auto r = repaired(R"({\"merchant\": \"AH\", \"lines\": [{\"n\": \"melk\\n2\"}]})");
  CHECK(r.json == "{\"merchant\": \"AH\", \"lines\": [{\"n\": \"melk\\n2\"}]}");
  CHECK(codes_of(r) == std::vector<std::string>{"stringified_json"});
  check_repair(R"({"a": "one " + "two" + 'three'})", R"({"a": "one twothree"})",
               {"string_concatenation", "string_concatenation", "single_quotes"});
}

TEST_CASE("extraction: fences, prose, and more than one value", "[repair]") {
  check_repair("Here you go:\n```json\n{\"a\": 1,}\n```\nAnything else?", R"({"a": 1})",
               {"markdown_fence", "trailing_comma", "markdown_fence"});
  check_repair("```\n[1, 2]\n```", "[1, 2]", {"markdown_fence", "markdown_fence"}, repair_tier::lossless);
  check_repair("Sure! The receipt is {'total': 3} as requested.", R"({"total": 3})",
               {"prose_around_json", "single_quotes", "single_quotes", "prose_around_json"});
  // Brackets in prose that are no JSON value are passed over.
  check_repair("I read [the receipt] and found {\"a\": 1}.", R"({"a": 1})",
               {"prose_around_json", "prose_around_json"}, repair_tier::lossless);
  // Two values are a guess, equal or not: taking one would drop the other.
  CHECK(error_of("{\"a\": 1}\n{\"a\": 1}").code == repair_errc::ambiguous);
  CHECK(error_of("{\"a\": 1} or maybe {\"a\": 2}").code == repair_errc::ambiguous);
  CHECK(error_of("```json\n{\"a\": 1}\n```\n```json\n{\"b\": 2}\n```").code == repair_errc::ambiguous);
  CHECK(error_of("no JSON here at all").code == repair_errc::no_json);
  // A value beyond repair is not mined for a smaller one inside it.
  CHECK(error_of(R"({"status": paid in full, "items": {"n": 1}})").code == repair_errc::unrepairable);
}

TEST_CASE("truncation is closed as a lossy action, and reported", "[repair]") {
  auto r = repaired(R"({"merchant": "Albert Hei)");
  CHECK(r.json == R"({"merchant": "Albert Hei"})");
  CHECK(r.truncated);
  REQUIRE(r.actions.size() == 1);
  CHECK(r.actions[0].code == "truncated");
  CHECK(r.actions[0].tier == repair_tier::lossy);
  CHECK(r.actions[0].after == "\"}");

  r = repaired(R"({"items": [{"n": 1}, {"n": 2)");
  CHECK(r.json == R"({"items": [{"n": 1}, {"n": null}]})");
  CHECK(r.truncated);
  // A number the text ends in may itself be cut: it is dropped, not guessed.
  r = repaired(R"({"total": 12)");
  CHECK(r.json == R"({"total": null})");
  CHECK(r.actions.back().before == "12");
  r = repaired(R"({"ok": tr)");
  CHECK(r.json == R"({"ok": true})");
  r = repaired(R"({"a": 1, "b")");
  CHECK(r.json == R"({"a": 1, "b":null})");
  r = repaired("[1, 2, ");
  CHECK(r.json == "[1, 2 ]");
  CHECK(codes_of(r) == std::vector<std::string>{"trailing_comma", "truncated"});

  // Without the lossy tier, the cut-off value is an error that says so.
  const auto e = error_of(R"({"merchant": "Albert Hei)", llmdlq::repair_options{});
  CHECK(e.code == repair_errc::tier_not_allowed);
  CHECK(e.truncated);
}

TEST_CASE("lossy repairs need the lossy tier", "[repair]") {
  // One word where a value ends is taken for a string: a guess at its type.
  check_repair(R"({"unit": kg, "qty": 2})", R"({"unit": "kg", "qty": 2})", {"bare_word"}, repair_tier::lossy);
  CHECK(error_of(R"({"unit": kg})", llmdlq::repair_options{}).code == repair_errc::tier_not_allowed);
  const auto r = repaired("[1, 2, ...]");
  CHECK(r.json == "[1, 2 ]");
  CHECK(codes_of(r) == std::vector<std::string>{"trailing_comma", "ellipsis"});
  CHECK(r.actions[1].tier == repair_tier::lossy);
  check_repair("{\"a\": NaN, \"b\": -Infinity}", "{\"a\": null, \"b\": null}", {"non_finite_number", "non_finite_number"},
               repair_tier::lossy);
  check_repair(R"({"a": [1, 2})", R"({"a": [1, 2]})", {"missing_bracket"}, repair_tier::lossy);
  const auto e = error_of("[1, 2, ...]", llmdlq::repair_options{});
  CHECK(e.code == repair_errc::tier_not_allowed);
  CHECK(e.offset == 7);
  CHECK(e.message.find("ellipsis") != std::string::npos);
}

TEST_CASE("what repair will not guess is an error with a position", "[repair]") {
  // Prose is not turned into a string.
  auto e = error_of(R"({"status": paid in full})");
  CHECK(e.code == repair_errc::unrepairable);
  CHECK(e.offset == 11);
  e = error_of("[007]");
  CHECK(e.offset == 1);
  e = error_of("[1e999]");
  CHECK(e.message.find("range") != std::string::npos);
  e = error_of("{\"a\": }");
  CHECK(e.offset == 6);
  CHECK(error_of("[\"a\xFF\"]").code == repair_errc::invalid_utf8);
  CHECK(error_of("[\"a\xFF\"]").offset == 3);
}

TEST_CASE("limits: depth without recursion, and the byte budget", "[repair]") {
  // Far deeper than any call stack would survive when recursing.
  std::string deep(200000, '[');
  deep += "1,";
  auto e = error_of(deep);
  CHECK(e.code == repair_errc::unrepairable);
  CHECK(e.message.find("depth") != std::string::npos);

  llmdlq::repair_options small = all_tiers();
  small.max_bytes = 8;
  CHECK(error_of("[1, 2, 3, 4,]", small).code == repair_errc::budget_exceeded);
  // Escaping control characters grows the text; the result stays in budget.
  small.max_bytes = 10;
  CHECK(error_of(std::string_view("[\"\x01\x02\"]"), small).code == repair_errc::budget_exceeded);
}

TEST_CASE("a large document is repaired in one pass", "[repair]") {
  std::string doc = "[";
  std::string expected = "[";
  for (int k = 0; k < 20000; ++k) {
    doc += "{'n': " + std::to_string(k) + ", 'ok': True,},";
    expected += R"({"n": )" + std::to_string(k) + R"(, "ok": true})" + (k + 1 < 20000 ? "," : "");
  }
  doc += "]";
  expected += "]";
  const auto r = repaired(doc);
  CHECK(r.json == expected);
  CHECK(r.actions.size() == 20000 * 6 + 1);
}

TEST_CASE("a comma repair inserted and then taken back is not reported", "[repair]") {
  const auto r = repaired("[1 2");  // the 2 may be cut: dropped, and the comma before it with it
  CHECK(r.json == "[1 ]");
  CHECK(codes_of(r) == std::vector<std::string>{"truncated"});
}

TEST_CASE("every repair's actions replay to its output, over the fuzz corpus and the benchmark cases", "[repair]") {
  std::vector<std::filesystem::path> inputs;
  const std::filesystem::path source(LLMDLQ_SOURCE_DIR);
  for (const auto& entry : std::filesystem::directory_iterator(source / "tests/fuzz/corpus/fuzz_repair")) {
    inputs.push_back(entry.path());
  }
  for (const auto& entry : std::filesystem::directory_iterator(source / "benchmarks/repair_cases")) {
    if (entry.path().filename().string().ends_with(".input.txt")) inputs.push_back(entry.path());
  }
  REQUIRE(inputs.size() > 100);
  std::size_t repaired_count = 0;
  for (const auto& path : inputs) {
    const std::string raw = llmdlq::test::slurp(path);
    INFO(path.filename().string());
    for (const auto& options : {all_tiers(), llmdlq::repair_options{}}) {
      const auto r = llmdlq::repair(raw, options);
      if (!r) continue;
      ++repaired_count;
      check_replays(raw, *r);
    }
  }
  CHECK(repaired_count > inputs.size());
}

TEST_CASE("a string value, a missing comma and an unquoted key on the next line are two members", "[repair]") {
  check_repair("{\"city\": \"Utrecht\"\n  zip: \"3511\"}", "{\"city\": \"Utrecht\",\n  \"zip\": \"3511\"}",
               {"missing_comma", "unquoted_key"});
  check_repair("{\"a\": \"x\" b: 1}", R"({"a": "x", "b": 1})", {"missing_comma", "unquoted_key"});
  // Words without a colon after them are still the string's own text.
  check_repair(R"({"note": "he said "hi there" now"})", R"({"note": "he said \"hi there\" now"})",
               {"unescaped_quote", "unescaped_quote"});
}

TEST_CASE("\\xHH escapes are the code point U+00HH", "[repair]") {
  check_repair(R"({"name": "M\xfcller"})", R"({"name": "Müller"})", {"invalid_escape"});
  check_repair(R"(["\x41\x01\x22\x5c"])", R"(["A\u0001\u0022\u005c"])", std::vector<std::string>(4, "invalid_escape"));
  const auto r = repaired(R"({"name": "M\xfcller"})");
  CHECK(r.actions[0].before == "\\xfc");
  CHECK(r.actions[0].after == "\xC3\xBC");
  // Without two hex digits it is a backslash meant literally.
  check_repair(R"(["\xZZ"])", R"(["\\xZZ"])", {"invalid_escape"});
  // Cut off inside the escape: the string is truncated before it.
  const auto cut = repaired(R"(["M\xf)");
  CHECK(cut.json == R"(["M"])");
  CHECK(cut.truncated);
}

TEST_CASE("a key missing one quote, or its colon before a literal, keeps its name", "[repair]") {
  // Not the key `a` with the value `":"foo`.
  check_repair(R"({a":"foo"})", R"({"a":"foo"})", {"missing_quote"});
  check_repair(R"({"x": 1, name": "AH"})", R"({"x": 1, "name": "AH"})", {"missing_quote"});
  // Not the key `a" true`.
  check_repair(R"({"a" true})", R"({"a": true})", {"missing_colon"});
  check_repair(R"({"a" null, "b" False})", R"({"a": null, "b": false})",
               {"missing_colon", "missing_colon", "python_literal"});
  check_repair(R"({"a" "b"})", R"({"a": "b"})", {"missing_colon"});
}

TEST_CASE("extraction and repair never drop part of the value without saying so", "[repair]") {
  const auto none = llmdlq::repair_options{};  // the default tiers
  SECTION("a fence inside a JSON string is the string's text, not the answer") {
    // Unescaped quotes around the fenced snippet: beyond repair, not the snippet.
    const std::string broken = "{\"text\": \"see\n```json\n{\"x\": 1}\n```\nend\"}";
    CHECK(error_of(broken).code == repair_errc::unrepairable);
    const std::string escaped = "{\"text\": \"see\n```json\n{\\\"x\\\": 1}\n```\nend\"}";
    const auto r = repaired(escaped, none);
    CHECK(r.json == "{\"text\": \"see\\n```json\\n{\\\"x\\\": 1}\\n```\\nend\"}");
    // A fence in the prose around brackets is still a fence.
    check_repair("Use {\"a\": \"b\"} like this:\n```json\n{\"a\": \"c\",}\n```", R"({"a": "c"})",
                 {"markdown_fence", "trailing_comma", "markdown_fence"});
  }
  SECTION("a bracket that closes the root early: the rest continues it") {
    check_repair(R"({"a": 1}, "b": 2})", R"({"a": 1, "b": 2})", {"redundant_bracket"});
    check_repair(R"({"a": 1}, b: 2})", R"({"a": 1, "b": 2})", {"redundant_bracket", "unquoted_key"});
    check_repair(R"([1, 2], 3])", R"([1, 2, 3])", {"redundant_bracket"});
    check_repair(R"({"a": 1}"b": 2})", R"({"a": 1,"b": 2})", {"missing_comma", "redundant_bracket"});
    check_repair(R"({}, "b": 2})", R"({ "b": 2})", {"redundant_bracket", "leading_comma"});
    // A quoted key whose colon is missing continues it too.
    check_repair(R"({"key": "value"}, "key2" "value2"})", R"({"key": "value", "key2": "value2"})",
                 {"redundant_bracket", "missing_colon"});
    check_repair(R"({"a": 1}, "b" [2]})", R"({"a": 1, "b": [2]})", {"redundant_bracket", "missing_colon"});
    // Cut off after it: the rest is kept, and the closing is lossy.
    const auto cut = repaired(R"({"a": 1}, "b": 2)");
    CHECK(cut.json == R"({"a": 1, "b": null})");
    CHECK(cut.truncated);
    // Which of two closed values the rest belongs to would be a guess.
    auto e = error_of(R"({"a": {"x": 1}}, "b": 2})");
    CHECK(e.code == repair_errc::unrepairable);
    CHECK(e.offset == 14);
    CHECK(error_of(R"({"a": {"x": 1}}, "b": {"c": 2}})").code == repair_errc::unrepairable);
    // Prose after a value does not continue it.
    check_repair("{\"a\": 1}, and that is all.", R"({"a": 1})", {"prose_around_json"}, repair_tier::lossless);
  }
  SECTION("a bracket that closes nothing open goes, inside the value") {
    check_repair(R"([{"a":1}},{"b":2}])", R"([{"a":1},{"b":2}])", {"redundant_bracket"});
    check_repair(R"({"a": [1, 2]], "b": 3})", R"({"a": [1, 2], "b": 3})", {"redundant_bracket"});
  }
  SECTION("a cut-off member repeating a key does not replace the value given first") {
    for (std::string_view cut : {R"({"a": "b", "a)", R"({"a": "b", "a":)", R"({"a": "b", "a": 12)",
                                 R"({"a": "b", "a")"}) {
      const auto r = repaired(cut);
      CHECK(r.json == R"({"a": "b" })");
      CHECK(r.truncated);
      CHECK(llmdlq::parse_value(r.json)->as_object().at("a") == "b");
    }
    // A value the text ends in is the member's own, even under a repeated key.
    CHECK(repaired(R"({"a": "b", "a": "c)").json == R"({"a": "b", "a": "c"})");
    CHECK(repaired("{\"v\": 1, \"x\": {\nv\"").json == "{\"v\": 1, \"x\": {\n\"v\":\"\"}}");
    // What was repaired in the dropped key goes with it.
    CHECK(repaired(R"({"a": 1, "a" /* c */)").json == R"({"a": 1 })");
    CHECK(repaired(R"({"a": "b", "c": 2"a":)").json == R"({"a": "b", "c": 2})");
    // A key not seen before still gets its null.
    CHECK(repaired(R"({"a": "b", "c":)").json == R"({"a": "b", "c":null})");
    // Only the object's own keys count.
    CHECK(repaired(R"({"n": {"a": 1}, "a)").json == R"({"n": {"a": 1}, "a":null})");
  }
  SECTION("stringified JSON keeps its escaped inner quotes") {
    const auto r = repaired(R"({\"stringified\": \"hello \\"world\\"\"})", none);
    CHECK(r.json == R"({"stringified": "hello \"world\""})");
    CHECK(repaired(R"([\"hello \\"world\\"\"])", none).json == R"(["hello \"world\""])");
  }
}

TEST_CASE("a cut-off value is found inside a fence or prose without repairing it", "[repair]") {
  auto cut = llmdlq::find_truncated_value("Here you go:\n```json\n{\"items\": [{\"n\": \"Bro");
  REQUIRE(cut.has_value());
  CHECK(cut->begin == 21);
  CHECK(cut->unclosed == "\"}]}");
  cut = llmdlq::find_truncated_value("The receipt is {\"total\": 12, \"lines\": [1, 2");
  REQUIRE(cut.has_value());
  CHECK(cut->begin == 15);
  CHECK(cut->unclosed == "]}");
  cut = llmdlq::find_truncated_value("{\"a\": \"b\", \"c\":");
  REQUIRE(cut.has_value());
  CHECK(cut->begin == 0);
  CHECK(cut->unclosed == "}");
  // Complete values, broken ones and no value at all are no truncation.
  CHECK_FALSE(llmdlq::find_truncated_value("Here:\n```json\n{\"a\": 1,}\n```"));
  CHECK_FALSE(llmdlq::find_truncated_value("{\"a\": 1}"));
  CHECK_FALSE(llmdlq::find_truncated_value("{\"status\": paid in full"));
  CHECK_FALSE(llmdlq::find_truncated_value("no JSON here"));
}

TEST_CASE("a cut-off answer beside a complete example is found", "[repair]") {
  const auto cut = llmdlq::find_truncated_value("Format: {\"merchant\": \"string\"}\nAnswer: {\"merchant\": \"AH\", \"total\": 1");
  REQUIRE(cut.has_value());
  CHECK(cut->begin == 39);
  CHECK(cut->unclosed == "}");
  CHECK_FALSE(llmdlq::find_truncated_value("{\"a\": 1} and {\"b\": 2}"));
}

TEST_CASE("a stray quote before a value makes it the text of a string, not a value", "[repair]") {
  // The quote opens a string that nothing closes: the array is its text.
  for (std::string_view text : {"\"[1, 2, 3]", "He said \"[1, 2, 3]", "\"[1, 2] and [3]"}) {
    const auto e = error_of(text);
    CHECK(e.code == repair_errc::unrepairable);
    CHECK(e.offset == text.find('"'));
  }
  // Quoted and closed, with quotes of its own, or escaped as a string's
  // content, it is the value.
  check_repair("\"{\"a\": 1}", R"({"a": 1})", {"prose_around_json"}, repair_tier::lossless);
  check_repair("Result: \"[1, 2]\"", "[1, 2]", {"prose_around_json", "prose_around_json"}, repair_tier::lossless);
  CHECK(repaired(R"("{\"a\": 1})").json == R"({"a": 1})");
}

TEST_CASE("a text that starts with a key is an object whose opening brace is missing", "[repair]") {
  // The brace goes before the key; nothing is dropped.
  check_repair(R"("a": {"b": 2}})", R"({"a": {"b": 2}})", {"missing_opening_brace"});
  check_repair(R"("a": [1, 2]})", R"({"a": [1, 2]})", {"missing_opening_brace"});
  check_repair(R"("x": 1, "a": {"b": 2}})", R"({"x": 1, "a": {"b": 2}})", {"missing_opening_brace"});
  check_repair("```json\n\"a\": [1]}\n```", R"({"a": [1]})",
               {"markdown_fence", "missing_opening_brace", "markdown_fence"});
  const auto r = repaired(R"("a": {"b": 2}})", llmdlq::repair_options{});
  REQUIRE(r.actions.size() == 1);
  CHECK(r.actions[0].tier == repair_tier::syntactic);
  CHECK(r.actions[0].begin == 0);
  CHECK(r.actions[0].end == 0);
  CHECK(r.actions[0].before.empty());
  CHECK(r.actions[0].after == "{");
  const auto bom = repaired("\xEF\xBB\xBF\n\"a\": 1}");
  CHECK(bom.json == R"({"a": 1})");
  CHECK(codes_of(bom) == std::vector<std::string>{"byte_order_mark", "missing_opening_brace"});

  // Without its closing brace either, the object may be cut off.
  const auto open = repaired(R"("a": {"b": 2})");
  CHECK(open.json == R"({"a": {"b": 2}})");
  CHECK(open.truncated);
  CHECK(codes_of(open) == std::vector<std::string>{"missing_opening_brace", "truncated"});
  CHECK(error_of(R"("a": {"b": 2})", llmdlq::repair_options{}).code == repair_errc::tier_not_allowed);
  const auto cut = llmdlq::find_truncated_value(R"("a": {"b": 2})");
  REQUIRE(cut.has_value());
  CHECK(cut->begin == 0);
  CHECK(cut->unclosed == "}");

  // Another value after the object: taking either would be a guess.
  CHECK(error_of(R"("a": 1} {"b": 2})").code == repair_errc::ambiguous);
  // Members beyond repair are not passed over for a value inside them.
  CHECK(error_of(R"("a": paid in full, "b": {"c": 1}})").code == repair_errc::unrepairable);
}

TEST_CASE("a key and colon in the prose before a value are refused, a word and colon are prose", "[repair]") {
  // Where the object the key belongs to begins is unknown: taking the value
  // alone would drop the key.
  const auto e = error_of(R"(Here: "a": {"b": 2}})");
  CHECK(e.code == repair_errc::unrepairable);
  CHECK(e.offset == 9);
  CHECK(error_of("The answer \"items\" :\n[1, 2]").code == repair_errc::unrepairable);
  CHECK(error_of(R"(Example {"x": 1}, then "a": {"b": 2}})").code == repair_errc::unrepairable);
  // A word and a colon, or a string without one, are prose.
  check_repair(R"(Here is the JSON: {"a": 1})", R"({"a": 1})", {"prose_around_json"}, repair_tier::lossless);
  check_repair(R"(Result: {"a": 1})", R"({"a": 1})", {"prose_around_json"}, repair_tier::lossless);
  check_repair(R"(The "answer" {"a": 1})", R"({"a": 1})", {"prose_around_json"}, repair_tier::lossless);
}

}  // namespace repair_test
