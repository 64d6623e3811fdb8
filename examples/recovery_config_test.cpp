// SPDX-License-Identifier: MIT
// How a host tests its recovery configuration in its own unit tests: a
// scripted model, a manual clock and the memory sink, no server.
//
//   add_executable(recovery_config_test recovery_config_test.cpp)
//   target_link_libraries(recovery_config_test PRIVATE llmdlq::llm Catch2::Catch2WithMain)
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <llmdlq/llm/recovery_ladder.hpp>
#include <llmdlq/llm/testing.hpp>
#include <llmdlq/process.hpp>

namespace {

constexpr std::string_view invoice_schema = R"({
  "type": "object",
  "required": ["invoice_number", "amount"],
  "properties": {
    "invoice_number": {"type": "string", "pattern": "^INV-[0-9]+$"},
    "amount": {"type": "number"},
    "memo": {"type": "string", "maxLength": 40}
  }
})";

// The worker's production settings, in one place the tests share.
llmdlq::recovery_ladder_options worker_recovery(llmdlq::testing::manual_clock& clock) {
  llmdlq::recovery_ladder_options o;
  o.model = "llama-3.1-8b";
  o.escalation_model = "llama-3.1-70b";
  o.max_attempts = 2;
  o.relaxation.drop_failing_optional_properties = true;  // a bad memo must not block an invoice
  o.clock = clock.function();
  o.sleep = clock.sleeper();
  return o;
}

llmdlq::envelope dead_letter(std::string_view response, std::string finish_reason = "stop") {
  auto schema = llmdlq::schema::compile(invoice_schema);
  llmdlq::request_context ctx;
  ctx.idempotency_key = "invoice-7";
  ctx.model.name = "llama-3.1-8b";
  ctx.model.max_tokens = 300;
  ctx.finish_reason = std::move(finish_reason);
  llmdlq::memory_sink dlq;
  auto judged = llmdlq::process_llm_response(response, *schema, ctx);
  REQUIRE_FALSE(judged.has_value());
  REQUIRE(dlq.publish(judged.error()).has_value());
  return dlq.envelopes().front();
}

}  // namespace

TEST_CASE("A cut-off invoice is asked again with twice the room, then recovered") {
  llmdlq::testing::manual_clock clock;
  llmdlq::testing::scripted_llm_client model;
  model.then_reply(R"({"invoice_number": "INV-7", "amount": 99.5})", {400, 30});
  auto ladder = llmdlq::recovery_ladder::create(invoice_schema, model, worker_recovery(clock));
  REQUIRE(ladder.has_value());

  auto letter = dead_letter(R"({"invoice_number": "INV-7", "amo)", "length");
  const auto result = ladder->run(letter);

  CHECK(result.reason == llmdlq::stop_reason::recovered);
  CHECK(model.requests().at(0).max_tokens == 600);
  CHECK(result.usage.total() == 430);
}

TEST_CASE("A second failure goes to the larger model, and then to people") {
  llmdlq::testing::manual_clock clock;
  llmdlq::testing::scripted_llm_client model;
  model.then_reply(R"({"invoice_number": "7", "amount": 99.5})")
      .then_reply(R"({"invoice_number": "INV 7", "amount": 99.5})");
  auto ladder = llmdlq::recovery_ladder::create(invoice_schema, model, worker_recovery(clock));
  REQUIRE(ladder.has_value());

  auto letter = dead_letter(R"({"invoice_number": "INV-7", "amount": 99.5,)", "length");
  const auto result = ladder->run(letter);

  CHECK(model.requests().at(1).model == "llama-3.1-70b");
  CHECK(result.reason == llmdlq::stop_reason::exhausted);
  CHECK(llmdlq::effect_of(result.reason) == llmdlq::stop_effect::exhausted);
}

TEST_CASE("A memo that is too long is dropped, not re-asked") {
  llmdlq::testing::manual_clock clock;
  llmdlq::testing::scripted_llm_client model;
  auto ladder = llmdlq::recovery_ladder::create(invoice_schema, model, worker_recovery(clock));
  REQUIRE(ladder.has_value());

  auto letter = dead_letter(R"({"invoice_number": "INV-7", "amount": 1, "memo": ")" + std::string(60, 'x') + "\"}");
  const auto result = ladder->run(letter);

  CHECK(result.reason == llmdlq::stop_reason::relaxed);
  CHECK(result.dropped_paths == std::vector<std::string>{"/memo"});
  CHECK(model.calls() == 0);
}
