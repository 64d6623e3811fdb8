// SPDX-License-Identifier: MIT
// How many times judging one response goes over its text, counted by the
// readers themselves (detail/json/text_passes.hpp), for a response of each
// category: the facts the guard, the repair, the envelope and redaction
// all need (where the text stops being UTF-8, its SHA-256, where its syntax
// breaks) are found once and passed along.
#include <array>
#include <string>
#include <string_view>

#include <llmdlq/detail/json/text_passes.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"
#include "support/receipt_schema.hpp"

namespace text_passes_test {

using llmdlq::failure_category;
using llmdlq::detail::text_pass;

const llmdlq::schema& schema() { return llmdlq::test::small_receipt_schema(); }

struct judged {
  llmdlq::detail::text_pass_counts passes;
  std::optional<failure_category> category;
};

judged judge(std::string_view raw) {
  judged out;
  const llmdlq::schema& receipt = schema();  // compiled (its text parsed) before counting starts
  const llmdlq::detail::counting_text_passes counting(out.passes);
  auto result = llmdlq::process_llm_response(raw, receipt, {}, {});
  if (!result) out.category = result.error().failure.category;
  return out;
}

std::string described(const llmdlq::detail::text_pass_counts& passes) {
  std::string text;
  for (std::size_t k = 0; k < llmdlq::detail::text_pass_kinds; ++k) {
    if (passes.runs[k] == 0) continue;
    text += std::string(llmdlq::detail::to_string(static_cast<text_pass>(k))) + "=" + std::to_string(passes.runs[k]) +
            " ";
  }
  return text;
}

// The passes each response takes, in text_pass's order: forward_pass, parse,
// locate_error, utf8_check, binary_scan, injection_scan, refusal_scan,
// repair, sha256, redaction. A dead letter reads where its text stops being
// UTF-8, its control bytes, its syntax error and its hash once each (the
// text's UTF-8 is read by none when it parsed: JSON is UTF-8); a response
// repair changed is parsed again, and screened again for injection. An
// accepted one is never parsed: the forward pass decided it.
TEST_CASE("text passes: each fact about a response is read from its text once", "[text_passes]") {
  using counts = std::array<unsigned, llmdlq::detail::text_pass_kinds>;
  const struct {
    std::string_view name;
    std::string raw;
    std::optional<failure_category> category;
    counts passes;
  } responses[] = {
      {"accepted", R"({"merchant": "Albert Heijn", "total": 23.47, "date": "2026-09-28"})", std::nullopt,
       counts{1, 0, 0, 0, 0, 1, 0, 0, 0, 0}},
      {"schema", R"({"merchant": "Albert Heijn", "total": "23.47", "date": "2026-09-28"})", failure_category::schema,
       counts{1, 1, 0, 0, 0, 1, 0, 0, 1, 1}},
      {"semantic", R"({"merchant": "Albert Heijn", "total": 23.47, "date": "2026-13-45"})", failure_category::semantic,
       counts{1, 1, 0, 0, 0, 1, 0, 0, 1, 1}},
      {"syntax", R"({"merchant": "Albert Heijn", "total": 23..47, "date": "2026-09-28"})", failure_category::syntax,
       counts{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
      {"truncated", R"({"merchant": "Albert Heijn", "total": 23.47, "date": "2026-)", failure_category::truncated,
       counts{1, 1, 1, 1, 1, 1, 1, 0, 1, 1}},
      {"repaired", "```json\n{\"merchant\": \"Albert Heijn\", \"total\": 23.47, \"date\": \"2026-09-28\",}\n```",
       std::nullopt, counts{1, 4, 1, 1, 1, 2, 1, 1, 0, 0}},
      {"refusal", "I'm sorry, but I can't help with that request.", failure_category::refusal,
       counts{1, 1, 1, 1, 1, 1, 1, 0, 1, 1}},
      {"poison", std::string("{\"merchant\": \"A\x01\", \"total\": 1}"), failure_category::poison,
       counts{1, 1, 1, 1, 1, 0, 0, 0, 1, 1}},
  };
  for (const auto& response : responses) {
    const judged result = judge(response.raw);
    INFO(response.name << ": " << described(result.passes));
    CHECK(result.category == response.category);
    CHECK(result.passes.runs == response.passes);
  }
}

TEST_CASE("text passes: nothing is counted without a counter, or after it is gone", "[text_passes]") {
  llmdlq::detail::text_pass_counts passes;
  {
    const llmdlq::detail::counting_text_passes counting(passes);
    (void)llmdlq::process_llm_response("not json", schema(), {}, {});
  }
  const unsigned counted = passes.total();
  CHECK(counted > 0);
  (void)llmdlq::process_llm_response("not json", schema(), {}, {});
  CHECK(passes.total() == counted);
}

}  // namespace text_passes_test
