// SPDX-License-Identifier: MIT
// The envelope's JSON form: exact round trips, typed errors on bad input,
// timestamps and identifiers.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

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

TEST_CASE("dlq ids are UUIDv7: unique, and ordered by time", "[envelope]") {
  std::set<std::string> ids;
  const auto early = llmdlq::make_envelope(llmdlq::failure_category::empty, "", "", {});
  for (int i = 0; i < 1000; ++i) ids.insert(llmdlq::make_envelope(llmdlq::failure_category::empty, "", "", {}).dlq_id);
  CHECK(ids.size() == 1000);
  llmdlq::process_options later;
  later.clock = [&] { return early.created_at + std::chrono::milliseconds(5); };
  CHECK(llmdlq::make_envelope(llmdlq::failure_category::empty, "", "", {}, later).dlq_id > early.dlq_id);
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

namespace {

std::string sha256_of(std::string_view text) { return llmdlq::captured_text::of(text).sha256; }

// One envelope with every field set to valid, short values.
llmdlq::envelope populated_envelope() {
  llmdlq::envelope e;
  e.dlq_id = "0190a6d2-3c4b-7def-8123-456789abcdef";
  e.created_at = *llmdlq::parse_rfc3339("2026-09-28T15:42:05.123Z");
  e.idempotency_key = "k-1";
  e.idempotency_key_derived = true;
  e.record_id = "r-1";
  e.correlation_id = "c-1";
  e.trace_id = "t-1";
  e.source_ref = {"s3://bucket/scan.png", "abc"};
  e.prompt = {"extract", "7", sha256_of("prompt")};
  e.model = {"openai", "gpt-4o-mini", "2024-07-18", 0.2, 1024, 42};
  e.versions = {"s1", "p7", "m", "ocr9", "pipe3"};
  e.failure.category = llmdlq::failure_category::schema;
  e.failure.code = "structural_schema_mismatch";
  e.failure.message = "1 schema error";
  e.failure.errors = {{"/total", "/properties/total/type", "type", "expected number"}};
  e.failure.syntax = llmdlq::text_location{3, 1, 4};
  e.triage = llmdlq::triage_for(llmdlq::failure_category::schema, false);
  e.confidence = {0.5, 0.9};
  e.raw_response = llmdlq::captured_text::of("raw\x80");
  e.raw_response.cut = true;
  e.original_input = llmdlq::captured_text::of("in\xff put");
  e.original_input->cut = true;
  e.attempts = {1, 2, e.created_at, e.created_at, {{"local_repair", "failed", 3, e.created_at}}};
  e.origin = {"svc", "w1", "topic", 0, 99};
  e.expires_at = e.created_at + std::chrono::hours(24);
  e.extensions["tenant"] = "nl-east";
  return e;
}

}  // namespace
TEST_CASE("non-finite numbers never reach the JSON", "[envelope]") {
  auto e = populated_envelope();
  e.model.temperature = std::numeric_limits<double>::quiet_NaN();
  e.confidence.score = std::numeric_limits<double>::infinity();
  e.confidence.threshold = -std::numeric_limits<double>::infinity();
  const std::string json = llmdlq::serialize(e);
  CHECK(json.find("temperature") == std::string::npos);
  CHECK(json.find("\"confidence\"") == std::string::npos);
  CHECK(json.find("Infinity") == std::string::npos);
  CHECK(json.find("NaN") == std::string::npos);
  CHECK(llmdlq::parse_envelope(json).has_value());
  llmdlq::fit_envelope(e, 256u << 10);  // removes them, so the envelope round-trips exactly
  CHECK_FALSE(e.model.temperature.has_value());
  CHECK_FALSE(e.confidence.score.has_value());
  llmdlq::test::check_envelope(e);
  auto read = boost::json::parse(json);
  read.as_object()["confidence"] = boost::json::object{{"score", 1e308}};
  CHECK(llmdlq::envelope_from_json(read).has_value());
}

TEST_CASE("reading an envelope rejects empty or missing required fields", "[envelope]") {
  const auto good = boost::json::parse(llmdlq::serialize(populated_envelope()));
  REQUIRE(llmdlq::envelope_from_json(good).has_value());
  const auto rejected_at = [&](const std::string& pointer, const boost::json::value& replacement) {
    auto broken = good;
    if (replacement.is_null()) {
      const auto slash = pointer.rfind('/');
      broken.at_pointer(pointer.substr(0, slash)).as_object().erase(pointer.substr(slash + 1));
    } else {
      broken.at_pointer(pointer) = replacement;
    }
    const auto e = llmdlq::envelope_from_json(broken);
    return e.has_value() ? std::string("accepted") : e.error().path;
  };
  CHECK(rejected_at("/failure/category", "") == "/failure/category");
  CHECK(rejected_at("/failure/category", nullptr) == "/failure/category");
  CHECK(rejected_at("/created_at", "") == "/created_at");
  CHECK(rejected_at("/created_at", nullptr) == "/created_at");
  CHECK(rejected_at("/dlq_id", "") == "/dlq_id");
  CHECK(rejected_at("/dlq_id", "not-a-uuid") == "/dlq_id");
  CHECK(rejected_at("/envelope_version", "") == "/envelope_version");
  CHECK(rejected_at("/failure/code", "") == "/failure/code");
  CHECK(rejected_at("/failure/errors", nullptr) == "/failure/errors");
  CHECK(rejected_at("/triage/auto_replayable", nullptr) == "/triage/auto_replayable");
  CHECK(rejected_at("/record_id", "") == "/record_id");
  CHECK(rejected_at("/raw_response/sha256", "") == "/raw_response/sha256");
  CHECK(rejected_at("/attempts/count", 0) == "/attempts/count");
}

namespace {

// Breaks one constraint of `schema` at a time in `instance` (part of a valid
// envelope), calls `check(path of the broken field)`, and mends it again.
class schema_violations {
 public:
  explicit schema_violations(std::function<void(const std::string&)> check) : check_(std::move(check)) {}

  void walk(const boost::json::object& schema, boost::json::value& instance, const std::string& path) {
    if (const auto* type = schema.if_contains("type")) {
      replace(instance, path, wrong_type(type->as_string()));
    }
    if (const auto* value = schema.if_contains("const")) {
      replace(instance, path, value->is_string() ? boost::json::value("not-" + std::string(value->as_string()))
                                                       : boost::json::value(false));
    }
    if (schema.contains("enum")) replace(instance, path, "not-a-member");
    if (schema.contains("pattern")) replace(instance, path, "Z");
    if (const auto* format = schema.if_contains("format")) {
      if (*format == "date-time") replace(instance, path, "2026-02-30T00:00:00.000Z");
      if (*format == "json-pointer") replace(instance, path, "a~2");
    }
    if (schema.contains("minLength")) replace(instance, path, "");
    if (const auto* minimum = schema.if_contains("minimum")) replace(instance, path, minimum->as_int64() - 1);
    if (schema.contains("minProperties")) replace(instance, path, boost::json::object());
    if (auto* object = instance.if_object()) {
      if (const auto* extra = schema.if_contains("additionalProperties"); extra && *extra == false) {
        object->emplace("unexpected", 1);
        run(path + "/unexpected");
        object->erase("unexpected");
      }
      if (const auto* required = schema.if_contains("required")) {
        for (const auto& name : required->as_array()) {
          const std::string key(name.as_string());
          REQUIRE(object->contains(key));  // the populated envelope has every field
          const boost::json::value kept = object->at(key);
          object->erase(key);
          run(path + "/" + key);
          object->emplace(key, kept);
        }
      }
      if (const auto* properties = schema.if_contains("properties")) {
        for (const auto& [key, property] : properties->as_object()) {
          INFO("the populated envelope lacks " << path << "/" << std::string(key));
          REQUIRE(object->contains(key));
          walk(property.as_object(), object->at(key), path + "/" + std::string(key));
        }
      }
    }
    if (auto* array = instance.if_array(); array && schema.contains("items")) {
      REQUIRE_FALSE(array->empty());
      walk(schema.at("items").as_object(), array->at(0), path + "/0");
    }
  }

  [[nodiscard]] std::size_t count() const noexcept { return count_; }

 private:
  static boost::json::value wrong_type(std::string_view type) {
    if (type == "string") return 7;
    if (type == "integer") return 1.5;
    if (type == "number" || type == "boolean") return "7";
    if (type == "object") return boost::json::array();
    return boost::json::object();
  }
  void replace(boost::json::value& instance, const std::string& expected, boost::json::value broken) {
    const boost::json::value kept = instance;
    instance = std::move(broken);
    run(expected);
    instance = kept;
  }
  void run(const std::string& expected) {
    ++count_;
    check_(expected);
  }

  std::function<void(const std::string&)> check_;
  std::size_t count_ = 0;
};

}  // namespace

TEST_CASE("reading an envelope rejects whatever its JSON Schema rejects, at the same field", "[envelope]") {
  std::ifstream in(std::filesystem::path(LLMDLQ_SOURCE_DIR) / "schemas" / "envelope-v1.json");
  const auto schema = boost::json::parse(std::string{std::istreambuf_iterator<char>(in), {}});
  auto envelope = boost::json::parse(llmdlq::serialize(llmdlq::test::check_envelope(populated_envelope())));
  llmdlq::json_parser parser;
  schema_violations violations([&](const std::string& expected) {
    const std::string json = boost::json::serialize(envelope);
    INFO(expected << ": " << json);
    auto doc = parser.parse(json);
    REQUIRE(doc.has_value());
    CHECK_FALSE(llmdlq::test::envelope_schema().validate(*doc).empty());
    const auto read = llmdlq::envelope_from_json(envelope);
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().path == expected);
  });
  violations.walk(schema.as_object(), envelope, "");
  CHECK(violations.count() > 150);
}
