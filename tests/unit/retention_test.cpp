// SPDX-License-Identifier: MIT
// retention_policy: the default, the poison override, per-category and
// per-triage overrides, measured from the first failure; and process_options
// taking a plain duration as before.
#include <llmdlq/process.hpp>
#include <llmdlq/purge.hpp>
#include <llmdlq/retention.hpp>

#include <boost/json.hpp>

#include "catch.hpp"

namespace retention_test {

namespace {

using namespace std::chrono_literals;
constexpr auto day = std::chrono::hours(24);

llmdlq::timestamp at(const char* text) { return *llmdlq::parse_rfc3339(text); }

llmdlq::envelope failed(llmdlq::failure_category category, const llmdlq::process_options& options,
                        std::uint32_t attempt = 1) {
  llmdlq::request_context context;
  context.idempotency_key = "retention";
  context.attempt = attempt;
  return llmdlq::make_envelope({.category = category, .message = "test"}, "raw", context, options);
}

llmdlq::process_options at_noon() {
  llmdlq::process_options options;
  options.clock = [] { return at("2026-11-29T12:00:00.000Z"); };
  return options;
}

}  // namespace

TEST_CASE("by default a dead letter is kept 30 days, a poison pill 14", "[retention]") {
  const auto options = at_noon();
  CHECK(failed(llmdlq::failure_category::syntax, options).expires_at == at("2026-12-29T12:00:00.000Z"));
  CHECK(failed(llmdlq::failure_category::schema, options).expires_at == at("2026-12-29T12:00:00.000Z"));
  CHECK(failed(llmdlq::failure_category::poison, options).expires_at == at("2026-12-13T12:00:00.000Z"));
}

TEST_CASE("a plain duration keeps everything that long, poison included", "[retention]") {
  auto options = at_noon();
  options.retention = std::chrono::hours(24);
  CHECK(failed(llmdlq::failure_category::syntax, options).expires_at == at("2026-11-30T12:00:00.000Z"));
  CHECK(failed(llmdlq::failure_category::poison, options).expires_at == at("2026-11-30T12:00:00.000Z"));
  options.retention = 90s;
  CHECK(failed(llmdlq::failure_category::poison, options).expires_at == at("2026-11-29T12:01:30.000Z"));
}

TEST_CASE("a triage override wins over a category override, which wins over the default", "[retention]") {
  auto options = at_noon();
  options.retention.default_retention = 10 * day;
  options.retention.by_category[llmdlq::failure_category::semantic] = 5 * day;
  options.retention.by_category[llmdlq::failure_category::low_confidence] = 3 * day;
  // semantic and low_confidence are both triaged ambiguous
  options.retention.by_triage[llmdlq::triage_class::ambiguous] = 60 * day;
  const auto semantic = failed(llmdlq::failure_category::semantic, options);
  REQUIRE(semantic.triage.kind == llmdlq::triage_class::ambiguous);
  CHECK(options.retention.retention_for(semantic) == 60 * day);
  CHECK(semantic.expires_at == at("2027-01-28T12:00:00.000Z"));
  CHECK(options.retention.retention_for(failed(llmdlq::failure_category::schema, options)) == 10 * day);
  CHECK(options.retention.retention_for(failed(llmdlq::failure_category::poison, options)) == 14 * day);
  options.retention.by_triage.clear();
  CHECK(options.retention.retention_for(failed(llmdlq::failure_category::low_confidence, options)) == 3 * day);
}

TEST_CASE("retention runs from the first failure, else from creation", "[retention]") {
  const llmdlq::retention_policy policy;
  llmdlq::envelope e = failed(llmdlq::failure_category::syntax, at_noon(), /*attempt=*/2);
  REQUIRE_FALSE(e.attempts.first_failure_at.has_value());
  CHECK(policy.expires_at(e) == e.created_at + 30 * day);
  e.attempts.first_failure_at = e.created_at - 7 * day;
  CHECK(policy.expires_at(e) == e.created_at + 23 * day);
}

TEST_CASE("a purge report counts records and their expiry range, and reads as JSON", "[retention][purge]") {
  auto report = llmdlq::purge_report::for_request(
      {.now = at("2026-06-01T00:00:00.000Z"), .operator_name = "alice", .dry_run = true});
  CHECK(boost::json::serialize(llmdlq::to_json(report)) ==
        R"({"count":0,"operator":"alice","at":"2026-06-01T00:00:00.000Z","dry_run":true})");
  report.add(at("2026-05-02T00:00:00.000Z"));
  report.add(at("2026-05-01T00:00:00.000Z"));
  report.add(at("2026-05-03T00:00:00.000Z"));
  CHECK(report.count == 3);
  CHECK(boost::json::serialize(llmdlq::to_json(report)) ==
        R"({"count":3,"oldest_expires_at":"2026-05-01T00:00:00.000Z","newest_expires_at":"2026-05-03T00:00:00.000Z",)"
        R"("operator":"alice","at":"2026-06-01T00:00:00.000Z","dry_run":true})");
  llmdlq::envelope e;
  CHECK_FALSE(llmdlq::expired(e, report.at));
  e.expires_at = report.at;
  CHECK(llmdlq::expired(e, report.at));
  e.expires_at = report.at + 1ms;
  CHECK_FALSE(llmdlq::expired(e, report.at));
}

}  // namespace retention_test
