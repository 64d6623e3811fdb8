// SPDX-License-Identifier: MIT
// The evaluator: prompts filled per case, samples that depend on the seed
// alone, answers judged as the pipeline judges them, the token budget, and
// the counts with their Wilson intervals.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <llmdlq/llm/evaluator.hpp>
#include <llmdlq/llm/testing.hpp>
#include <llmdlq/llmdlq.hpp>

#include "catch.hpp"

namespace {

constexpr std::string_view total_schema =
    R"({"type": "object", "required": ["total"], "properties": {"total": {"type": "number"}}})";

llmdlq::prompt_template template_of(std::string text) { return *llmdlq::prompt_template::parse(std::move(text)); }

llmdlq::eval_case letter_case(std::string id, std::string input) {
  llmdlq::eval_case c;
  c.id = std::move(id);
  c.before_category = "schema";
  c.before_code = "schema_type";
  c.input = std::move(input);
  return c;
}

}  // namespace

TEST_CASE("evaluator: a prompt template fills its places once", "[llm][eval]") {
  CHECK_FALSE(llmdlq::prompt_template::parse("Extract the total.").has_value());
  const auto t = template_of("Input: {{input}}\nBefore: {{failed_output}} {{other}}");
  CHECK(t.uses_input());
  CHECK(t.uses_failed_output());
  // A value that holds a place is put in as it is.
  CHECK(t.render("a {{failed_output}}", "b") == "Input: a {{failed_output}}\nBefore: b {{other}}");
}

TEST_CASE("evaluator: a letter without a stored input is not evaluable unless the prompt uses only its output",
          "[llm][eval]") {
  llmdlq::request_context context;
  context.idempotency_key = "k1";
  auto judged = llmdlq::process_llm_response(R"({"total": "1,00"})", *llmdlq::schema::compile(total_schema), context);
  REQUIRE_FALSE(judged.has_value());
  const llmdlq::envelope& letter = judged.error();
  const auto by_input = llmdlq::eval_case_of(letter, template_of("{{input}}"));
  CHECK(by_input.not_evaluable == "the letter stores no original input");
  const auto by_output = llmdlq::eval_case_of(letter, template_of("Fix: {{failed_output}}"));
  CHECK(by_output.not_evaluable.empty());
  CHECK(by_output.failed_output == R"({"total": "1,00"})");
  CHECK(by_output.before_category == "schema");
}

TEST_CASE("evaluator: a stratified sample depends on the seed alone and sees every group", "[llm][eval]") {
  std::vector<std::string> strata;
  std::vector<std::string> ids;
  for (int i = 0; i < 30; ++i) {
    strata.emplace_back(i < 20 ? "schema/a" : i < 28 ? "syntax/b" : "semantic/c");
    ids.push_back("letter-" + std::to_string(i));
  }
  const auto chosen = llmdlq::stratified_sample(strata, ids, 10, 7);
  REQUIRE(chosen.size() == 10);
  CHECK(chosen == llmdlq::stratified_sample(strata, ids, 10, 7));
  std::map<std::string, int> per_group;
  for (const auto i : chosen) ++per_group[strata[i]];
  // One for each group, the other seven in proportion to what is left of each (19, 7 and 1 of 27).
  CHECK(per_group == std::map<std::string, int>{{"schema/a", 6}, {"syntax/b", 3}, {"semantic/c", 1}});
  // The same letters in another order are the same sample.
  std::vector<std::string> strata_reversed(strata.rbegin(), strata.rend());
  std::vector<std::string> ids_reversed(ids.rbegin(), ids.rend());
  std::set<std::string> forward;
  std::set<std::string> backward;
  for (const auto i : chosen) forward.insert(ids[i]);
  for (const auto i : llmdlq::stratified_sample(strata_reversed, ids_reversed, 10, 7)) backward.insert(ids_reversed[i]);
  CHECK(forward == backward);
  CHECK(llmdlq::stratified_sample(strata, ids, 40, 7).size() == 30);
  CHECK(llmdlq::stratified_sample(strata, ids, 2, 7).size() == 2);
}

TEST_CASE("evaluator: answers are judged as the pipeline judges them and counted", "[llm][eval]") {
  llmdlq::testing::scripted_llm_client model;
  model.then_reply(R"({"total": 1.0})", {100, 10})
      .then_reply("```json\n{\"total\": 2.5}\n```", {100, 10})  // a fence: repaired locally, as the pipeline does
      .then_reply(R"({"total": "3,00"})", {100, 10})
      .then_reply(R"({"totals": 4})", {100, 10});
  llmdlq::evaluator_options options;
  options.model = "candidate";
  options.judge.envelope.failure_code_prefix = "ocr";
  auto candidate = llmdlq::evaluator::create(total_schema, template_of("Extract: {{input}}"), options);
  REQUIRE(candidate.has_value());
  std::vector<llmdlq::eval_case> cases{letter_case("a", "one"), letter_case("b", "two"), letter_case("c", "three")};
  llmdlq::eval_case control;
  control.id = "ctl";
  control.control = true;
  control.input = "four";
  cases.push_back(control);
  llmdlq::llm_client* clients[] = {&model};
  const auto results = candidate->run(cases, clients);
  REQUIRE(results.size() == 4);
  CHECK(results[0].outcome == llmdlq::eval_outcome::accepted);
  CHECK(results[1].outcome == llmdlq::eval_outcome::accepted);
  CHECK(results[2].outcome == llmdlq::eval_outcome::failed);
  CHECK(results[2].after_category == "schema");
  CHECK(results[2].after_code.starts_with("ocr_"));
  CHECK(results[3].outcome == llmdlq::eval_outcome::failed);
  CHECK(model.requests()[0].messages.back().content == "Extract: one");
  CHECK(model.requests()[0].model == "candidate");

  const auto summary = llmdlq::summarize(results);
  CHECK(summary.evaluated == 3);
  CHECK(summary.fixed == 2);
  CHECK(summary.regressed == 1);
  CHECK(summary.matrix.at("schema").at("accepted") == 2);
  CHECK(summary.matrix.at("schema").at("schema") == 1);
  CHECK(summary.usage.total() == 440);
  CHECK(summary.calls == 4);
}

TEST_CASE("evaluator: nothing more is asked once the token budget is spent", "[llm][eval]") {
  llmdlq::testing::scripted_llm_client model;
  model.then_reply(R"({"total": 1})", {600, 10}).then_reply(R"({"total": 2})", {600, 10});
  llmdlq::evaluator_options options;
  options.token_budget = 1000;
  auto candidate = llmdlq::evaluator::create(total_schema, template_of("{{input}}"), options);
  REQUIRE(candidate.has_value());
  const std::vector<llmdlq::eval_case> cases{letter_case("a", "1"), letter_case("b", "2"), letter_case("c", "3")};
  llmdlq::llm_client* clients[] = {&model};
  const auto results = candidate->run(cases, clients);
  CHECK(results[1].outcome == llmdlq::eval_outcome::accepted);
  CHECK(results[2].outcome == llmdlq::eval_outcome::not_asked);
  CHECK(llmdlq::summarize(results).not_asked == 1);
}

TEST_CASE("evaluator: Wilson intervals", "[llm][eval]") {
  const auto ci = llmdlq::wilson_interval(9, 12);
  CHECK(ci.low == Approx(0.4677).margin(1e-4));
  CHECK(ci.high == Approx(0.9111).margin(1e-4));
  const auto none = llmdlq::wilson_interval(0, 6);
  CHECK(none.low == Approx(0.0).margin(1e-12));
  CHECK(none.high == Approx(0.3903).margin(1e-4));
  CHECK(llmdlq::wilson_interval(0, 0).high == 1.0);
}
