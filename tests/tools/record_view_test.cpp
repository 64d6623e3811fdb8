// SPDX-License-Identifier: MIT
// error_spans and mark_spans: where a dead letter's failure points in its
// raw response, and how the response is printed with those places marked;
// the model and the attempt history as a person reads them.
#include <llmdlq/envelope.hpp>

#include "catch.hpp"
#include "record_view.hpp"

namespace record_view_test {

namespace {

llmdlq::envelope with_response(std::string raw, std::vector<std::string> pointers) {
  llmdlq::envelope e;
  e.raw_response = llmdlq::captured_text::of(raw);
  for (auto& p : pointers) e.failure.errors.push_back({p, "", "type", "wrong"});
  return e;
}

std::string spanned(const std::string& raw, const llmdlq::cli::error_span& s) { return raw.substr(s.begin, s.end - s.begin); }

}  // namespace

TEST_CASE("error_spans: values found by pointer in broken JSON, the root as the whole document", "[tools][view]") {
  const std::string raw = "Here you go:\n```json\n{\"a\": {\"b\": [1, {\"c\": true}]}, \"d\": \"x\", \"e\": [1, 2";
  const auto e = with_response(raw, {"/a/b/1/c", "", "/d", "/e", "/missing"});
  const auto spans = llmdlq::cli::error_spans(e);
  REQUIRE(spans.size() == 4);  // nothing for /missing
  CHECK(spanned(raw, spans[0]).starts_with("{\"a\""));  // the root: from its bracket to the end
  CHECK(spans[0].pointer.empty());
  CHECK(spans[0].label == "/: wrong");
  CHECK(spanned(raw, spans[1]) == "true");
  CHECK(spans[1].pointer == "/a/b/1/c");
  CHECK(spanned(raw, spans[2]) == "\"x\"");
  CHECK(spanned(raw, spans[3]) == "[1, 2");  // cut off: runs to the end
}

TEST_CASE("error_spans: the syntax error's token", "[tools][view]") {
  const std::string raw = "{\"a\": 1 \"b\": nul}";
  auto e = with_response(raw, {});
  e.failure.syntax = llmdlq::text_location{8, 1, 9};
  e.failure.message = "expected ','";
  auto spans = llmdlq::cli::error_spans(e);
  REQUIRE(spans.size() == 1);
  CHECK(spanned(raw, spans[0]) == "\"b\"");
  CHECK(spans[0].label == "syntax (line 1, column 9): expected ','");
  e.failure.syntax = llmdlq::text_location{13, 1, 14};
  CHECK(spanned(raw, llmdlq::cli::error_spans(e)[0]) == "nul");
  e.failure.syntax = llmdlq::text_location{16, 1, 17};
  CHECK(spanned(raw, llmdlq::cli::error_spans(e)[0]) == "}");
  e.failure.syntax = llmdlq::text_location{99, 1, 100};  // past a cut text: no span
  CHECK(llmdlq::cli::error_spans(e).empty());
}

TEST_CASE("error_spans: nothing without the response's text", "[tools][view]") {
  auto e = with_response("{\"a\": 1}", {"/a"});
  e.raw_response.text.reset();
  CHECK(llmdlq::cli::error_spans(e).empty());
}

TEST_CASE("mark_spans: markers off a terminal, colour on one, nested spans each closed", "[tools][view]") {
  const std::string text = "{\"a\": [1, 2]}";
  const std::vector<llmdlq::cli::error_span> spans = {{6, 12, "outer", "/a"}, {10, 11, "inner", "/a/1"}};
  CHECK(llmdlq::cli::mark_spans(text, spans, false) == "{\"a\": >>[1][1, >>[2]2<<]<<}");
  const auto coloured = llmdlq::cli::mark_spans(text, spans, true);
  CHECK(coloured.find(">>") == std::string::npos);
  CHECK(coloured.find("\x1b[4;31m") != std::string::npos);
  CHECK(coloured.ends_with("\x1b[0m}"));
  // A span past the text's end is left out; an empty one marks one byte.
  CHECK(llmdlq::cli::mark_spans("ab", {{5, 9, "gone", ""}, {0, 0, "empty", ""}}, false) == ">>[2]a<<b");
}

TEST_CASE("model_text: provider and name, or the name alone", "[tools][view]") {
  CHECK(llmdlq::cli::model_text({.provider = "openai", .name = "gpt-x"}) == "openai/gpt-x");
  CHECK(llmdlq::cli::model_text({.name = "cv-local"}) == "cv-local");
  CHECK(llmdlq::cli::model_text({.provider = "openai"}).empty());
}

TEST_CASE("attempts_text: the automated attempts the history counts, and the rows it does not", "[tools][view]") {
  llmdlq::attempt_summary attempts;
  CHECK(llmdlq::cli::attempts_text(attempts) == "0 of 2 automated attempts made");
  for (int i = 0; i < 3; ++i) attempts.history.push_back({.strategy = "repair_prompt", .outcome = "call_failed"});
  CHECK(llmdlq::cli::attempts_text(attempts) ==
        "0 of 2 automated attempts made; not counted: 3 calls without an answer");
  attempts.history.push_back({.strategy = "local_repair", .outcome = "syntax"});
  attempts.history.push_back({.strategy = "escalate_model", .outcome = "call_started"});  // may have been answered
  attempts.max = 1;
  CHECK(llmdlq::cli::attempts_text(attempts) ==
        "1 of 1 automated attempt made; not counted: 3 calls without an answer, 1 local step");
  const auto tally = llmdlq::cli::tally_attempts(attempts);
  CHECK((tally.counted == 1 && tally.unanswered == 3 && tally.local == 1));
  CHECK(llmdlq::cli::not_counted_because(attempts.history[0]) == "no answer");
  CHECK(llmdlq::cli::not_counted_because(attempts.history[3]) == "local step");
  CHECK(llmdlq::cli::not_counted_because(attempts.history[4]).empty());
  attempts.history.resize(1);
  CHECK(llmdlq::cli::attempts_text(attempts) == "0 of 1 automated attempt made; not counted: 1 call without an answer");
}

}  // namespace record_view_test
