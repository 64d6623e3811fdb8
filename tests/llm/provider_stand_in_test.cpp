// SPDX-License-Identifier: MIT
// Schemas sent over HTTP to a stand-in as strict as each provider (the
// scripted server refusing, with the provider's status and error body, what
// check_provider_schema refuses): lowered, each is taken; as written, the
// receipt schema is refused, the refusal is the request's fault, and the
// ladder that sends it lowered recovers the letter the unlowered request
// could not.
#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("Schemas against a stand-in as strict as each provider", "[provider][http]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <filesystem>
#include <string>

#include <llmdlq/llm/ollama_client.hpp>
#include <llmdlq/llm/openai_compatible_client.hpp>
#include <llmdlq/llm/recovery_ladder.hpp>
#include <llmdlq/llm/testing.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/provider_schema.hpp>

#include "conformance/suite_files.hpp"
#include "llm/scripted_server.hpp"
#include "support/envelope_check.hpp"

namespace provider_stand_in_test {

namespace {

using llmdlq::provider_profile;
namespace t = llmdlq::test;

std::string receipt_schema_text() {
  return t::read_file(std::filesystem::path(LLMDLQ_SOURCE_DIR) / "examples/data/receipt.schema.json");
}

// The request body each provider's API takes a schema in.
boost::json::object request_for(provider_profile p, const boost::json::value& schema, bool strict) {
  boost::json::object body{{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "the receipt"}}}}};
  switch (p) {
    case provider_profile::gemini: body["generationConfig"] = {{"responseJsonSchema", schema}}; break;
    case provider_profile::anthropic: body["output_format"] = {{"type", "json_schema"}, {"schema", schema}}; break;
    case provider_profile::ollama: body["format"] = schema; break;
    case provider_profile::full:
    case provider_profile::openai_strict:
      body["response_format"] = {{"type", "json_schema"},
                                 {"json_schema", {{"name", "response"}, {"strict", strict}, {"schema", schema}}}};
      break;
  }
  return body;
}

// What the stand-in answers `body`: its status and body.
std::pair<int, std::string> post(t::scripted_server& server, const boost::json::object& body) {
  httplib::Client http("127.0.0.1", server.port());
  const auto reply = http.Post("/v1/chat/completions", boost::json::serialize(body), "application/json");
  REQUIRE(reply);
  return {reply->status, reply->body};
}

constexpr provider_profile strict_profiles[] = {provider_profile::openai_strict, provider_profile::gemini,
                                                provider_profile::anthropic, provider_profile::ollama,
                                                provider_profile::full};

}  // namespace

TEST_CASE("A stand-in as strict as each provider takes every schema lowered for it, over HTTP", "[provider][http]") {
  LLMDLQ_SUITE_OR_SKIP(dir, "json-schema-test-suite/tests/draft2020-12");
  std::vector<boost::json::value> schemas{boost::json::parse(receipt_schema_text())};
  for (const auto& file : t::json_files_in(dir)) {
    const boost::json::value groups = boost::json::parse(t::read_file(file));
    for (const auto& group : groups.as_array()) {
      if (const auto* s = group.as_object().if_contains("schema")) schemas.push_back(*s);
    }
  }
  for (const auto p : strict_profiles) {
    t::scripted_server server;
    REQUIRE(server.listening());
    server.answer_with([p, fallback = t::strict_as(p)](const t::recorded_request& r) {
      return fallback(r).value_or(t::chat_completion("{}"));
    });
    std::size_t sent_strict = 0;
    for (const auto& s : schemas) {
      const auto lowered = llmdlq::lower_schema(s, p);
      REQUIRE(lowered.has_value());
      if (!lowered->strict) continue;
      INFO(llmdlq::to_string(p) << ": " << lowered->text());
      CHECK(post(server, request_for(p, lowered->schema, true)).first == 200);
      ++sent_strict;
    }
    INFO(llmdlq::to_string(p));
    CHECK(sent_strict >= 30);
  }
}

TEST_CASE("The receipt schema as written is refused with each strict provider's 400, the request's fault",
          "[provider][http]") {
  const auto receipt = boost::json::parse(receipt_schema_text());
  for (const auto p : {provider_profile::openai_strict, provider_profile::anthropic}) {
    INFO(llmdlq::to_string(p));
    t::scripted_server server;
    REQUIRE(server.listening());
    server.answer_with(t::strict_as(p));
    const auto [status, body] = post(server, request_for(p, receipt, true));
    CHECK(status == 400);
    llmdlq::call_outcome outcome;
    outcome.http_status = status;
    outcome.body = body;
    const auto decision = llmdlq::classify_call(outcome);
    CHECK(decision.verdict == llmdlq::call_verdict::fix_request);
    CHECK(decision.reason == "request_rejected");
    // The provider's own shape.
    const auto error = boost::json::parse(body);
    if (p == provider_profile::openai_strict) {
      CHECK(error.at("error").at("param") == "response_format");
      CHECK(error.at("error").at("message").as_string().starts_with("Invalid schema for response_format"));
    } else {
      CHECK(error.at("type") == "error");
      CHECK(error.at("error").at("type") == "invalid_request_error");
    }
  }
  // Gemini and Ollama ignore what they do not take: the same schema goes through.
  for (const auto p : {provider_profile::gemini, provider_profile::ollama}) {
    t::scripted_server server;
    server.answer_with([fallback = t::strict_as(p)](const t::recorded_request& r) {
      return fallback(r).value_or(t::chat_completion("{}"));
    });
    CHECK(post(server, request_for(p, receipt, true)).first == 200);
  }
  // Without strict mode OpenAI takes any schema.
  t::scripted_server server;
  server.answer_with([fallback = t::strict_as(provider_profile::openai_strict)](const t::recorded_request& r) {
    return fallback(r).value_or(t::chat_completion("{}"));
  });
  CHECK(post(server, request_for(provider_profile::openai_strict, receipt, false)).first == 200);
}

TEST_CASE("The ladder recovers through a stand-in as strict as OpenAI a letter the schema as written could not",
          "[provider][http][ladder]") {
  const std::string receipt = receipt_schema_text();
  const auto schema = llmdlq::schema::compile(receipt);
  REQUIRE(schema.has_value());
  llmdlq::request_context ctx;
  ctx.idempotency_key = "receipt-42";
  ctx.model.name = "gpt-4o-mini";
  ctx.model.max_tokens = 256;
  ctx.finish_reason = "length";
  const auto cut = llmdlq::process_llm_response(
      R"({"merchant": {"name": "Jumbo"}, "date": "2026-03-01", "currency": "EUR", "total": 8.1, "items": [{"descr)",
      *schema, ctx);
  REQUIRE_FALSE(cut.has_value());
  // What a model held to the lowered schema answers: every property, the optional ones null.
  const std::string answer = R"({"receipt_id": null, "merchant": {"name": "Jumbo", "vat_id": null, "iban": null,
      "email": null}, "date": "2026-03-01", "issued_at": null, "currency": "EUR", "total": 8.1, "tax": null,
      "payment_method": null, "card_last4": null, "items": [{"description": "Brood", "sku": null, "quantity": 1,
      "unit_price": 8.1, "amount": 8.1, "vat_rate": null}], "confidence": null})";

  for (const auto provider : {provider_profile::full, provider_profile::openai_strict}) {
    INFO(llmdlq::to_string(provider));
    t::scripted_server server({t::chat_completion(answer)});
    REQUIRE(server.listening());
    server.answer_with(t::strict_as(provider_profile::openai_strict));
    auto client = llmdlq::openai_compatible_client::open({.base_url = server.base_url()});
    REQUIRE(client.has_value());
    llmdlq::recovery_ladder_options options;
    options.provider = provider;
    options.sleep = [](std::chrono::milliseconds) {};
    auto ladder = llmdlq::recovery_ladder::create(receipt, *client, options);
    REQUIRE(ladder.has_value());
    llmdlq::envelope letter = cut.error();
    const auto result = ladder->run(letter);
    REQUIRE(server.calls() == 1);
    const auto sent = server.requests().at(0).json().at("response_format").at("json_schema");
    CHECK(sent.at("strict") == true);
    if (provider == provider_profile::full) {
      // Today's request: the schema as written, which OpenAI refuses. Not the letter's fault:
      // it is not exhausted, and the run would stop with OpenAI's words.
      CHECK(result.reason == llmdlq::stop_reason::request_refused);
      CHECK(result.effect() == llmdlq::stop_effect::later);
      CHECK(result.detail.find("Invalid schema for response_format") != std::string::npos);
      CHECK_FALSE(result.output.has_value());
    } else {
      CHECK(result.reason == llmdlq::stop_reason::recovered);
      REQUIRE(result.output.has_value());
      const auto value = boost::json::parse(*result.output).as_object();
      CHECK_FALSE(value.contains("receipt_id"));           // a forced null, mapped back
      CHECK(value.at("merchant").at("vat_id").is_null());  // a null the schema allows
      CHECK(schema->is_valid(boost::json::parse(*result.output)));
    }
  }
}

}  // namespace provider_stand_in_test

#endif
