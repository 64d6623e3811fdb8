// SPDX-License-Identifier: MIT
// The envelope's JSON form: exact round trips, typed errors on bad input,
// timestamps and identifiers.
#include <set>

#include <boost/json/parse.hpp>

#include <llmdlq/envelope.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"

TEST_CASE("RFC 3339 timestamps: formatted with milliseconds, parsed with any offset", "[envelope]") {
  const auto t = llmdlq::parse_rfc3339("2026-09-28T17:42:05.123+02:00");
  REQUIRE(t.has_value());
  CHECK(llmdlq::format_rfc3339(*t) == "2026-09-28T15:42:05.123Z");
  CHECK(llmdlq::parse_rfc3339("2026-09-28T15:42:05.123456789Z") == t);
  CHECK(llmdlq::format_rfc3339(*llmdlq::parse_rfc3339("1999-12-31t23:59:59z")) == "1999-12-31T23:59:59.000Z");
  CHECK_FALSE(llmdlq::parse_rfc3339("2026-02-30T00:00:00Z").has_value());
  CHECK_FALSE(llmdlq::parse_rfc3339("yesterday").has_value());
}

TEST_CASE("a fully populated envelope round-trips exactly", "[envelope]") {
  llmdlq::request_context context;
  context.idempotency_key = "k-1";
  context.record_id = "r-1";
  context.correlation_id = "c-1";
  context.trace_id = "t-1";
  context.source_ref = {"s3://bucket/scan.png", "abc"};
  context.prompt = {"extract", "7", ""};
  context.rendered_prompt = "prompt text";
  context.model = {"openai", "gpt-4o-mini", "2024-07-18", 0.2, 1024, 42};
  context.versions = {"s1", "p7", "m", "ocr9", "pipe3"};
  context.confidence = 0.5;
  context.original_input = "ОРИГИНАЛ කොළඹ";
  context.origin = {"svc", "w1", "topic", 0, 99};
  context.extensions["list"] = boost::json::array{1, "two", nullptr};
  llmdlq::process_options options;
  options.min_confidence = 0.9;
  auto e = llmdlq::make_envelope(llmdlq::failure_category::schema, "1 schema error", R"({"total":"1"})", context,
                                 options, {{"/total", "/properties/total/type", "type", "expected number"}},
                                 llmdlq::text_location{3, 1, 4});
  e.attempts.history.push_back({"local_repair", "failed", 0, e.created_at});
  llmdlq::test::check_envelope(e);
}

TEST_CASE("dlq ids: one per key and attempt, ordered by the input's receive time when given", "[envelope]") {
  std::set<std::string> ids;
  llmdlq::request_context context;
  for (int i = 0; i < 1000; ++i) {
    context.idempotency_key = "msg-" + std::to_string(i);
    ids.insert(llmdlq::make_envelope(llmdlq::failure_category::empty, "", "", context).dlq_id);
  }
  CHECK(ids.size() == 1000);
  context.received_at = llmdlq::timestamp(std::chrono::milliseconds(1'780'000'000'000));
  const auto early = llmdlq::make_envelope(llmdlq::failure_category::empty, "", "", context);
  context.idempotency_key = "msg-0";  // a smaller key, received later
  *context.received_at += std::chrono::milliseconds(5);
  CHECK(llmdlq::make_envelope(llmdlq::failure_category::empty, "", "", context).dlq_id > early.dlq_id);
}

TEST_CASE("invalid UTF-8 from the host never breaks the envelope's JSON", "[envelope]") {
  llmdlq::request_context context;
  context.record_id = "id-\xFF\xFE";
  context.extensions["bad\xC0"] = "value\xE9";
  const auto e = llmdlq::make_envelope(llmdlq::failure_category::poison, "binary", "raw\x80", context);
  llmdlq::test::check_envelope(e);
  CHECK(e.record_id == "id-\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(e.raw_response.base64);
  CHECK(e.raw_response.text == "cmF3gA==");
}

TEST_CASE("reading an envelope names the field that is wrong", "[envelope]") {
  const auto good = llmdlq::serialize(llmdlq::make_envelope(llmdlq::failure_category::empty, "", "", {}));
  auto broken = boost::json::parse(good);
  broken.at("failure").at("category") = "weird";
  auto e = llmdlq::envelope_from_json(broken);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().path == "/failure/category");
  broken = boost::json::parse(good);
  broken.at("attempts").at("count") = "two";
  e = llmdlq::envelope_from_json(broken);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().path == "/attempts/count");
  broken = boost::json::parse(good);
  broken.as_object().erase("raw_response");
  CHECK(llmdlq::envelope_from_json(broken).error().path == "/raw_response");
  broken = boost::json::parse(good);
  broken.at("envelope_version") = "2";
  CHECK(llmdlq::envelope_from_json(broken).error().path == "/envelope_version");
  CHECK_FALSE(llmdlq::parse_envelope("{").has_value());
}
