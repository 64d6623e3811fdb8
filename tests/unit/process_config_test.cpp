// SPDX-License-Identifier: MIT
// process_config's parts, and the deprecated process_options a host written
// against it still passes: converted member by member, judged alike, checked
// under the member's own name.
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include <llmdlq/metrics.hpp>
#include <llmdlq/pipeline.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/process_config.hpp>

#include "catch.hpp"

namespace process_config_test {

namespace {

const llmdlq::timestamp fixed_time{std::chrono::seconds(1'800'000'000)};

// Every member set to something other than its default.
llmdlq::process_options every_member_set() {
  llmdlq::process_options o;
  o.repair = llmdlq::repair_mode::off;
  o.accept_repairs = llmdlq::repair_tiers{llmdlq::repair_tier::lossless};
  o.coerce = true;
  o.min_confidence = 0.75;
  o.limits.max_size = 4096;
  o.limits.max_depth = 7;
  o.guard.detect_instruction_phrases = false;
  o.max_errors = 3;
  o.failure_code_prefix = "ocr";
  o.failure_code = [](llmdlq::failure_category) { return std::string("custom"); };
  o.checks.push_back(llmdlq::content_check{});
  o.redaction = llmdlq::redactor::none();
  o.clock = [] { return fixed_time; };
  o.retention = std::chrono::hours(5);
  o.max_envelope_bytes = 100'000;
  o.max_attempts = 9;
  o.metrics = std::make_shared<llmdlq::metrics>();
  return o;
}

}  // namespace

TEST_CASE("the deprecated process_options converts to the parts member by member, and back", "[process]") {
  const llmdlq::process_options o = every_member_set();
  const llmdlq::process_config config = o;

  const llmdlq::judging_options& j = config.judging;
  CHECK(j.repair == llmdlq::repair_mode::off);
  CHECK(j.accept_repairs.allows(llmdlq::repair_tier::lossless));
  CHECK_FALSE(j.accept_repairs.allows(llmdlq::repair_tier::syntactic));
  CHECK(j.coerce);
  CHECK(j.min_confidence == 0.75);
  CHECK(j.limits.max_size == 4096);
  CHECK(j.limits.max_depth == 7);
  CHECK_FALSE(j.guard.detect_instruction_phrases);
  CHECK(j.max_errors == 3);
  CHECK(j.checks.size() == 1);

  const llmdlq::envelope_policy& e = config.envelope;
  CHECK(e.failure_code_prefix == "ocr");
  REQUIRE(e.failure_code);
  CHECK(e.failure_code(llmdlq::failure_category::syntax) == "custom");
  REQUIRE(e.clock);
  CHECK(e.clock() == fixed_time);
  llmdlq::envelope letter;
  letter.attempts.first_failure_at = fixed_time;
  CHECK(e.retention.expires_at(letter) == fixed_time + std::chrono::hours(5));
  CHECK(e.max_envelope_bytes == 100'000);
  CHECK(e.max_attempts == 9);

  CHECK_FALSE(config.privacy.redaction.active());
  CHECK(config.privacy.cipher == nullptr);
  CHECK(config.metrics == o.metrics);

  // A pipeline made from the aggregate still gives one back, with the same members.
  const auto schema = llmdlq::schema::compile(R"({"type": "object"})");
  REQUIRE(schema.has_value());
  const llmdlq::pipeline p{*schema, o};
  const llmdlq::process_options back = p.options();
  CHECK(back.repair == o.repair);
  CHECK(back.coerce);
  CHECK(back.min_confidence == o.min_confidence);
  CHECK(back.limits.max_size == o.limits.max_size);
  CHECK(back.max_errors == o.max_errors);
  CHECK(back.failure_code_prefix == o.failure_code_prefix);
  CHECK(back.failure_code(llmdlq::failure_category::syntax) == "custom");
  CHECK(back.checks.size() == 1);
  CHECK_FALSE(back.redaction.active());
  CHECK(back.clock() == fixed_time);
  CHECK(back.max_envelope_bytes == o.max_envelope_bytes);
  CHECK(back.max_attempts == o.max_attempts);
  CHECK(back.metrics == o.metrics);
}

TEST_CASE("a host's process_options judges as the process_config it converts to", "[process]") {
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "required": ["total"]})");
  REQUIRE(schema.has_value());
  llmdlq::process_options o;
  o.failure_code_prefix = "ocr";
  o.clock = [] { return fixed_time; };
  o.max_errors = 1;
  llmdlq::process_config config;
  config.envelope.failure_code_prefix = "ocr";
  config.envelope.clock = [] { return fixed_time; };
  config.judging.max_errors = 1;
  llmdlq::request_context context;
  context.idempotency_key = "k";

  const auto old_way = llmdlq::process_llm_response(R"({"sum": 1})", *schema, context, o);
  const auto new_way = llmdlq::process_llm_response(R"({"sum": 1})", *schema, context, config);
  REQUIRE_FALSE(old_way.has_value());
  REQUIRE_FALSE(new_way.has_value());
  CHECK(old_way.error().failure.code == "ocr_schema_violation");
  CHECK(old_way.error().created_at == fixed_time);
  CHECK(llmdlq::serialize(old_way.error()) == llmdlq::serialize(new_way.error()));
  const auto made_old = llmdlq::make_envelope({.category = llmdlq::failure_category::poison}, "x", context, o);
  const auto made_new = llmdlq::make_envelope({.category = llmdlq::failure_category::poison}, "x", context, config);
  CHECK(llmdlq::serialize(made_old) == llmdlq::serialize(made_new));
}

TEST_CASE("check_options names the member at fault as the host wrote it", "[process]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  llmdlq::judging_options judging;
  judging.min_confidence = nan;
  REQUIRE_FALSE(llmdlq::check_options(judging).has_value());
  CHECK(llmdlq::check_options(judging).error().option == "min_confidence");
  CHECK(llmdlq::check_options(judging).error().message == "must be a finite number, not nan");

  llmdlq::process_config config;
  config.judging.min_confidence = nan;
  REQUIRE_FALSE(llmdlq::check_options(config).has_value());
  CHECK(llmdlq::check_options(config).error().option == "judging.min_confidence");

  llmdlq::process_options old;
  old.min_confidence = nan;
  REQUIRE_FALSE(llmdlq::check_options(old).has_value());
  CHECK(llmdlq::check_options(old).error().option == "min_confidence");

  config.judging.min_confidence = 0.5;
  CHECK(llmdlq::check_options(config).has_value());
}

}  // namespace process_config_test
