// SPDX-License-Identifier: MIT
// The envelope's JSON form: exact round trips, typed errors on bad input,
// timestamps and identifiers, and the size limit.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <llmdlq/envelope.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"

namespace envelope_test {

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
  context.cancelled_at = llmdlq::cancel_point{12, 5};
  context.original_input = "ОРИГИНАЛ කොළඹ";
  context.origin = {"svc", "w1", "topic", 0, 99};
  context.extensions["list"] = boost::json::array{1, "two", nullptr};
  llmdlq::process_options options;
  options.min_confidence = 0.9;
  auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::schema,
                                  .message = "1 schema error",
                                  .errors = {{"/total", "/properties/total/type", "type", "expected number"},
                                             {"/owner", "/properties/owner/$ref/allOf/0/$ref", "$ref",
                                              "the schema cannot be evaluated here",
                                              llmdlq::schema_defect::reference_loop}},
                                  .syntax = llmdlq::text_location{3, 1, 4}},
                                 R"({"total":"1"})", context, options);
  CHECK(e.failure.cancelled_at == llmdlq::cancel_point{12, 5});
  e.attempts.history.push_back({"repair_prompt", "schema", 120, e.created_at, "llama-3.1-8b", 840, "3f9a0c2e7d1b4a65"});
  llmdlq::test::check_envelope(e);
}

TEST_CASE("dlq ids: one per key and attempt, ordered by the input's receive time when given", "[envelope]") {
  std::set<std::string> ids;
  llmdlq::request_context context;
  for (int i = 0; i < 1000; ++i) {
    context.idempotency_key = "msg-" + std::to_string(i);
    ids.insert(llmdlq::make_envelope({.category = llmdlq::failure_category::empty}, "", context).dlq_id);
  }
  CHECK(ids.size() == 1000);
  context.received_at = llmdlq::timestamp(std::chrono::milliseconds(1'780'000'000'000));
  const auto early = llmdlq::make_envelope({.category = llmdlq::failure_category::empty}, "", context);
  context.idempotency_key = "msg-0";  // a smaller key, received later
  *context.received_at += std::chrono::milliseconds(5);
  CHECK(llmdlq::make_envelope({.category = llmdlq::failure_category::empty}, "", context).dlq_id > early.dlq_id);
}

TEST_CASE("invalid UTF-8 from the host never breaks the envelope's JSON", "[envelope]") {
  llmdlq::request_context context;
  context.record_id = "id-\xFF\xFE";
  context.extensions["bad\xC0"] = "value\xE9";
  const auto e =
      llmdlq::make_envelope({.category = llmdlq::failure_category::poison, .message = "binary"}, "raw\x80", context);
  llmdlq::test::check_envelope(e);
  CHECK(e.record_id == "id-\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(e.raw_response.base64);
  CHECK(e.raw_response.text == "cmF3gA==");
}

TEST_CASE("reading an envelope names the field that is wrong", "[envelope]") {
  const auto good = llmdlq::serialize(llmdlq::make_envelope({.category = llmdlq::failure_category::empty}, "", {}));
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

using limits = llmdlq::envelope_limits;

std::string sha256_of(std::string_view text) { return llmdlq::captured_text::of(text).sha256; }

// Bytes `text` takes inside a JSON string: control characters as \u00XX
// except the five with a short escape, quotes and backslashes escaped.
std::size_t escaped_size(std::string_view text) {
  std::size_t size = 0;
  for (const char c : text) {
    switch (c) {
      case '\b': case '\t': case '\n': case '\f': case '\r': case '"': case '\\': size += 2; break;
      default: size += static_cast<unsigned char>(c) < 0x20 ? 6 : 1;
    }
  }
  return size;
}

bool ends_with_hash_of(const std::string& cut, const std::string& whole) {
  return cut.ends_with("\u2026sha256:" + sha256_of(whole)) &&
         whole.starts_with(cut.substr(0, cut.size() - std::string("\u2026sha256:").size() - 64));
}

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
  e.failure.errors = {{"/owner", "/properties/owner/$ref", "$ref", "the schema cannot be evaluated here",
                       llmdlq::schema_defect::unresolved_reference},
                      {"/total", "/properties/total/type", "type", "expected number"}};
  e.failure.syntax = llmdlq::text_location{3, 1, 4};
  e.failure.cancelled_at = llmdlq::cancel_point{3, 2};
  e.triage = llmdlq::triage_for(llmdlq::failure_category::schema, false);
  e.confidence = {0.5, 0.9};
  e.raw_response = llmdlq::captured_text::of("raw\x80");
  e.raw_response.cut = true;
  e.original_input = llmdlq::captured_text::of("in\xff put");
  e.original_input->cut = true;
  e.raw_response.sealed = llmdlq::sealed_text{"k2026", "xchacha20poly1305-ietf", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                                              "c2VhbGVk", 4, true};
  e.original_input->sealed = e.raw_response.sealed;
  e.redactions = {{"raw_response", "iban", "token", 2, "/customer/iban", "k2026", {{12, 18}, {40, 22}}}};
  e.attempts = {1, 2, e.created_at, e.created_at,
                {{"repair_prompt", "schema", 3, e.created_at, "llama-3.1-8b", 812, "3f9a0c2e7d1b4a65"}}};
  e.origin = {"svc", "w1", "topic", 0, 99};
  e.tool_call = llmdlq::tool_call_reference{"record_receipt", "call_7x", 1};
  e.redrive = llmdlq::redrive_reference{"0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b", 2};
  e.expires_at = e.created_at + std::chrono::hours(24);
  e.extensions["tenant"] = "nl-east";
  return e;
}

}  // namespace

TEST_CASE("a 10 MB property name, id or key gives an envelope within the cap", "[envelope]") {
  const auto schema = llmdlq::schema::compile(R"({"type":"object","additionalProperties":false})");
  REQUIRE(schema.has_value());
  const std::string name(10u << 20, 'n');
  const std::string raw = "{\"" + name + "\": 1}";
  llmdlq::request_context context;
  context.idempotency_key = std::string(10u << 20, 'k');
  context.record_id = std::string(10u << 20, 'r');
  context.trace_id = std::string(1u << 20, '"');
  const llmdlq::process_options options;
  const auto result = llmdlq::process_llm_response(raw, *schema, context, options);
  REQUIRE_FALSE(result.has_value());
  const auto& e = result.error();
  CHECK(llmdlq::serialize(e).size() <= options.max_envelope_bytes);
  llmdlq::test::check_envelope(e);
  CHECK(ends_with_hash_of(e.idempotency_key, context.idempotency_key));
  CHECK(ends_with_hash_of(e.record_id, context.record_id));
  CHECK(ends_with_hash_of(e.trace_id, context.trace_id));
  CHECK(escaped_size(e.trace_id) <= limits::identifier);
  REQUIRE_FALSE(e.failure.errors.empty());
  CHECK(escaped_size(e.failure.errors[0].instance_path) <= limits::error_text);
  CHECK(ends_with_hash_of(e.failure.errors[0].instance_path, "/" + name));
  CHECK(escaped_size(e.failure.errors[0].message) <= limits::error_text);
  CHECK(e.raw_response.length == raw.size());
  CHECK(e.raw_response.cut);
}

TEST_CASE("text that grows when escaped keeps the longest prefix that fits", "[envelope]") {
  std::string raw;
  for (int i = 0; i < 100000; ++i) raw += "\x01\"\\\n\u00e9";
  llmdlq::process_options options;
  options.max_envelope_bytes = 64u << 10;
  const auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::poison, .message = "control bytes"},
                                       raw, {}, options);
  const std::size_t size = llmdlq::serialize(e).size();
  CHECK(size <= options.max_envelope_bytes);
  CHECK(size >= options.max_envelope_bytes - 16);  // the room is used, not left empty
  CHECK(e.raw_response.cut);
  REQUIRE(e.raw_response.text.has_value());
  CHECK(escaped_size(*e.raw_response.text) > (48u << 10));
  CHECK(raw.starts_with(*e.raw_response.text));
  CHECK(e.raw_response.length == raw.size());
  CHECK(e.raw_response.sha256 == sha256_of(raw));
  llmdlq::test::check_envelope(e);
}

TEST_CASE("the raw response and the original input share the room", "[envelope]") {
  llmdlq::process_options options;
  options.max_envelope_bytes = 64u << 10;
  const std::string raw(1u << 20, 'r');
  llmdlq::request_context context;
  std::string input;

  SECTION("both too long: each keeps about half") {
    input.assign(1u << 20, '\t');
    context.original_input = input;
    const auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::syntax}, raw, context, options);
    REQUIRE(e.original_input.has_value());
    CHECK(e.raw_response.cut);
    CHECK(e.original_input->cut);
    const std::size_t raw_json = escaped_size(*e.raw_response.text);
    const std::size_t input_json = escaped_size(*e.original_input->text);
    CHECK(raw_json > (30u << 10));
    CHECK(input_json + 8 >= raw_json);
    CHECK(raw_json + 8 >= input_json);
    CHECK(e.original_input->length == context.original_input.size());
    CHECK(e.original_input->sha256 == sha256_of(context.original_input));
    CHECK(llmdlq::serialize(e).size() <= options.max_envelope_bytes);
    llmdlq::test::check_envelope(e);
  }
  SECTION("a short input stays whole, the response gets the rest") {
    input.assign(10u << 10, 'i');
    context.original_input = input;
    const auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::syntax}, raw, context, options);
    REQUIRE(e.original_input.has_value());
    CHECK_FALSE(e.original_input->cut);
    CHECK(e.original_input->text == context.original_input);
    CHECK(e.raw_response.cut);
    CHECK(llmdlq::serialize(e).size() >= options.max_envelope_bytes - 16);
    llmdlq::test::check_envelope(e);
  }
}

TEST_CASE("an envelope that cannot fit is reduced to its identity, never dropped", "[envelope]") {
  auto e = populated_envelope();
  const std::string hostile = [] {
    std::string text;
    while (text.size() < (1u << 20)) text += "\x02\"\u20ac~0/";
    return text;
  }();
  for (std::string* field : {&e.idempotency_key, &e.record_id, &e.correlation_id, &e.trace_id, &e.source_ref.uri,
                             &e.source_ref.sha256, &e.prompt.template_id, &e.prompt.version, &e.model.provider,
                             &e.model.name, &e.model.version, &e.versions.schema, &e.versions.prompt,
                             &e.versions.model, &e.versions.ocr, &e.versions.pipeline, &e.failure.message,
                             &e.origin.service, &e.origin.worker, &e.origin.topic}) {
    *field = hostile;
  }
  e.failure.code = std::string(1u << 20, 'c');
  // The longest numbers and names each field can hold.
  e.failure.category = llmdlq::failure_category::low_confidence;
  e.failure.syntax = llmdlq::text_location{~0ull, ~0ull, ~0ull};
  e.failure.cancelled_at = llmdlq::cancel_point{~0ull, ~0ull};
  e.triage = {llmdlq::triage_class::version_drift, llmdlq::recommended_action::escalate_model, true};
  e.confidence = {-1.7976931348623157e308, -2.2250738585072014e-308};
  e.attempts.count = e.attempts.max = ~0u;
  e.origin.partition = std::numeric_limits<std::int32_t>::max();
  e.origin.offset = std::numeric_limits<std::int64_t>::max();
  e.tool_call = llmdlq::tool_call_reference{hostile, hostile, std::numeric_limits<std::uint32_t>::max()};
  e.redrive = llmdlq::redrive_reference{"0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b",
                                        std::numeric_limits<std::uint32_t>::max()};
  const std::string item = hostile.substr(0, 8 << 10);
  e.redactions.assign(40,
                      {"original_input", "national_id_nl", "token", ~0ull, "/" + item, "k2026-12", {{~0ull, ~0ull}}});
  e.failure.errors.assign(300, {"/" + item, item, item, item});
  e.attempts.history.assign(300, {item, item, 1, e.created_at});
  e.extensions["big"] = hostile;
  e.raw_response = llmdlq::captured_text::of(hostile);
  e.original_input = llmdlq::captured_text::of(hostile + "x");
  const auto raw = e.raw_response;
  const auto input = *e.original_input;

  const std::size_t size = llmdlq::fit_envelope(e, 0);  // raised to the smallest limit
  CHECK(size == llmdlq::serialize(e).size());
  CHECK(size <= limits::min_bytes);
  llmdlq::test::check_envelope(e);
  CHECK(e.extensions.contains("llmdlq_reduced"));
  CHECK(ends_with_hash_of(e.idempotency_key, hostile));
  CHECK(ends_with_hash_of(e.record_id, hostile));
  CHECK(ends_with_hash_of(e.origin.topic, hostile));
  CHECK(e.failure.category == llmdlq::failure_category::low_confidence);
  CHECK(e.failure.syntax->offset == ~0ull);
  CHECK(e.failure.cancelled_at == llmdlq::cancel_point{~0ull, ~0ull});
  CHECK(e.origin.offset == std::numeric_limits<std::int64_t>::max());
  CHECK(e.failure.code == std::string(limits::label, 'c'));
  CHECK(e.failure.errors.empty());
  CHECK(e.raw_response.length == raw.length);
  CHECK(e.raw_response.sha256 == raw.sha256);
  CHECK(e.original_input->length == input.length);
  CHECK(e.original_input->sha256 == input.sha256);
  CHECK(e.raw_response.cut);
  CHECK(e.original_input->cut);
}

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

namespace {

// Random envelopes whose every field may be hostile: control bytes, quotes,
// backslashes, JSON Pointer escapes, multi-byte UTF-8 and U+FFFD (what
// cleaning leaves of invalid bytes), from empty to a few MB.
class hostile_envelopes {
 public:
  explicit hostile_envelopes(std::uint64_t seed) : rng_(seed) {}

  std::uint64_t pick(std::uint64_t bound) { return std::uniform_int_distribution<std::uint64_t>(0, bound - 1)(rng_); }
  bool chance(int percent) { return pick(100) < static_cast<std::uint64_t>(percent); }

  // Mostly short, sometimes a few KiB, now and then megabytes.
  std::size_t size(int large_percent = 4) {
    if (chance(large_percent)) return pick(3u << 20);
    return chance(35) ? pick(4097) : pick(65);
  }

  std::string text(std::size_t size) {
    static constexpr std::string_view pieces[] = {
        "a", "Z", "7", " ", "\"", "\\", "/", "~0", "~1", std::string_view("\0", 1), "\x01", "\x1f", "\n", "\t", "\r",
        "\b", "\f", "\x7f", "\u00e9", "\u20ac", "\U0001F600", "\uFFFD", "\u2026", "sha256:"};
    std::string pattern;
    const std::size_t count = 1 + pick(64);
    for (std::size_t i = 0; i < count; ++i) pattern += pieces[pick(std::size(pieces))];
    std::string out;
    out.reserve(size + pattern.size());
    while (out.size() < size) out += pattern;
    return out;
  }
  std::string text() { return text(size()); }
  std::string non_empty_text() {
    auto t = text();
    return t.empty() ? "x" : t;
  }
  std::string code() {
    static constexpr std::string_view alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_.-";
    std::string out(1 + size(), 'a');
    for (std::size_t i = 0; i < std::min<std::size_t>(out.size(), 256); ++i) out[i] = alphabet[pick(alphabet.size())];
    return out;
  }
  std::optional<double> number() {
    if (chance(40)) return std::nullopt;
    constexpr double specials[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(), -0.0, 4.9e-324, -1.7976931348623157e308};
    if (chance(30)) return specials[pick(std::size(specials))];
    return std::uniform_real_distribution<double>(-2, 2)(rng_);
  }
  std::int64_t integer(std::int64_t low) {
    return std::uniform_int_distribution<std::int64_t>(low, std::numeric_limits<std::int64_t>::max())(rng_);
  }
  llmdlq::timestamp time() {
    return llmdlq::timestamp(std::chrono::milliseconds(946684800000 + static_cast<std::int64_t>(pick(3155760000000))));
  }
  llmdlq::captured_text captured() {
    if (chance(15)) {  // bytes that are not UTF-8: stored in base64
      std::string bytes(size(30), '\xff');
      for (std::size_t i = 0; i < std::min<std::size_t>(bytes.size(), 512); ++i) bytes[i] = static_cast<char>(pick(256));
      return llmdlq::captured_text::of(bytes);
    }
    return llmdlq::captured_text::of(text(size(30)));
  }

  llmdlq::envelope next() {
    llmdlq::envelope e;
    e.dlq_id = "0190a6d2-3c4b-7def-8123-456789abcdef";
    e.created_at = time();
    e.idempotency_key = text();
    e.idempotency_key_derived = chance(50);
    e.record_id = text();
    e.correlation_id = text();
    e.trace_id = text();
    e.source_ref = {text(), text()};
    e.prompt = {text(), text(), chance(50) ? sha256_of(text(8)) : ""};
    e.model = {text(), text(), text(), number(), std::nullopt, std::nullopt};
    if (chance(50)) e.model.max_tokens = integer(std::numeric_limits<std::int64_t>::min());
    if (chance(50)) e.model.seed = integer(std::numeric_limits<std::int64_t>::min());
    e.versions = {text(), text(), text(), text(), text()};
    e.failure.category = static_cast<llmdlq::failure_category>(pick(8));
    e.failure.code = code();
    e.failure.message = text();
    const std::size_t errors = chance(10) ? pick(400) : pick(6);
    for (std::size_t i = 0; i < errors; ++i) {
      e.failure.errors.push_back({chance(20) ? "" : "/" + text(), text(), non_empty_text(), text()});
    }
    if (chance(50)) e.failure.syntax = llmdlq::text_location{pick(~0ull), 1 + pick(1000), 1 + pick(~0ull - 1)};
    if (chance(30)) {
      e.failure.cancelled_at = llmdlq::cancel_point{pick(~0ull), {}};
      if (chance(50)) e.failure.cancelled_at->tokens = pick(~0ull);
    }
    e.triage = llmdlq::triage_for(e.failure.category, chance(50));
    e.confidence = {number(), number()};
    e.raw_response = captured();
    if (chance(70)) e.original_input = captured();
    e.attempts.count = static_cast<std::uint32_t>(1 + pick(0xFFFFFFFEu));
    e.attempts.max = static_cast<std::uint32_t>(pick(0x100000000u));
    if (chance(50)) e.attempts.first_failure_at = time();
    if (chance(50)) e.attempts.last_failure_at = time();
    const std::size_t history = chance(10) ? pick(200) : pick(3);
    for (std::size_t i = 0; i < history; ++i) {
      e.attempts.history.push_back({non_empty_text(), non_empty_text(), integer(0),
                                    chance(50) ? std::optional(time()) : std::nullopt,
                                    chance(50) ? non_empty_text() : std::string(),
                                    chance(50) ? std::optional(integer(0)) : std::nullopt,
                                    chance(50) ? non_empty_text() : std::string()});
    }
    e.origin = {text(), text(), text(), std::nullopt, std::nullopt};
    if (chance(50)) e.origin.partition = static_cast<std::int32_t>(pick(0x80000000u));
    if (chance(50)) e.origin.offset = integer(0);
    if (chance(30)) {
      e.tool_call = llmdlq::tool_call_reference{text(), non_empty_text(), std::nullopt};
      if (chance(50)) e.tool_call->id.clear();
      if (chance(50)) e.tool_call->index = static_cast<std::uint32_t>(pick(64));
    }
    if (chance(20)) {
      e.redrive = llmdlq::redrive_reference{llmdlq::derive_dlq_id(text(), 1), static_cast<std::uint32_t>(1 + pick(4))};
    }
    if (chance(50)) e.expires_at = time();
    const std::size_t members = chance(50) ? pick(8) : 0;
    for (std::size_t i = 0; i < members; ++i) {
      e.extensions[text(pick(40))] = chance(30) ? boost::json::value(boost::json::array{text(), 1.5, nullptr})
                                                : boost::json::value(text());
    }
    return e;
  }

  std::size_t max_bytes() {
    constexpr std::size_t choices[] = {0, 1, 4095, 4096, 4097, 6000, 8192, 16384, 65536, 256u << 10, 1u << 20};
    return chance(25) ? 4096 + pick(2u << 20) : choices[pick(std::size(choices))];
  }

 private:
  std::mt19937_64 rng_;
};

// `after` is `before`, or `before` cut to `limit` bytes of JSON with its mark.
bool bounded(const std::string& before, const std::string& after, std::size_t limit, std::string_view mark) {
  if (escaped_size(std::string_view(before).substr(0, limit + 1)) <= limit && before.size() <= limit) {
    return after == before;
  }
  if (escaped_size(after) > limit) return false;
  if (mark == "hash") return ends_with_hash_of(after, before);
  return after.ends_with(mark) && before.starts_with(after.substr(0, after.size() - mark.size()));
}

}  // namespace

TEST_CASE("property: whatever it holds, a fitted envelope is within its limit, valid and faithful", "[envelope]") {
  constexpr int runs = 80;
  hostile_envelopes make(20261201);
  // What the runs made and what fitting did with it: each must have
  // happened a few times for the checks below to have said anything.
  std::map<std::string, int> seen;
  for (int run = 0; run < runs; ++run) {
    const llmdlq::envelope before = make.next();
    const std::size_t max_bytes = make.max_bytes();
    const std::size_t limit = std::max(max_bytes, limits::min_bytes);
    INFO("run " << run << ", max_bytes " << max_bytes);
    llmdlq::envelope e = before;
    const std::size_t reported = llmdlq::fit_envelope(e, max_bytes);
    const std::string json = llmdlq::serialize(e);
    if (max_bytes < limits::min_bytes) ++seen["a limit below the least"];
    const bool input_base64 = before.original_input && before.original_input->base64;
    if (before.raw_response.base64 || input_base64) ++seen["a text in base64"];
    if (!before.original_input) ++seen["no original input"];
    if (!e.raw_response.cut && !(e.original_input && e.original_input->cut)) ++seen["neither text cut"];
    if (e.extensions.contains("llmdlq_reduced")) ++seen["reduced"];
    if (e.idempotency_key != before.idempotency_key) ++seen["an identifier cut"];
    if (e.failure.errors.size() < before.failure.errors.size()) ++seen["errors dropped"];
    if (e.raw_response.cut && !(e.original_input && e.original_input->cut)) ++seen["the raw response cut"];
    if (!e.raw_response.cut && e.original_input && e.original_input->cut) ++seen["the original input cut"];
    if (e.raw_response.cut && e.original_input && e.original_input->cut) ++seen["both texts cut"];
    REQUIRE(json.size() <= limit);
    CHECK(reported >= json.size());
    CHECK(json.find("Infinity") == std::string::npos);
    CHECK(json.find("NaN") == std::string::npos);
    llmdlq::test::check_envelope(e);

    // Identity and prose: unchanged, or cut with their marks.
    CHECK(bounded(before.idempotency_key, e.idempotency_key, limits::identifier, "hash"));
    CHECK(bounded(before.record_id, e.record_id, limits::identifier, "hash"));
    CHECK(bounded(before.correlation_id, e.correlation_id, limits::identifier, "hash"));
    CHECK(bounded(before.trace_id, e.trace_id, limits::identifier, "hash"));
    CHECK(bounded(before.source_ref.sha256, e.source_ref.sha256, limits::label, "hash"));
    CHECK(bounded(before.origin.topic, e.origin.topic, limits::label, "hash"));
    CHECK(bounded(before.failure.code, e.failure.code, limits::label, ""));
    const bool reduced = e.extensions.contains("llmdlq_reduced");
    if (!reduced) {
      CHECK(bounded(before.failure.message, e.failure.message, limits::message, "\u2026"));
      CHECK(bounded(before.source_ref.uri, e.source_ref.uri, limits::uri, "hash"));
      CHECK(bounded(before.versions.schema, e.versions.schema, limits::label, "hash"));
    }
    REQUIRE(e.failure.errors.size() <= before.failure.errors.size());
    for (std::size_t i = 0; i < e.failure.errors.size(); ++i) {
      CHECK(bounded(before.failure.errors[i].instance_path, e.failure.errors[i].instance_path, limits::error_text, "hash"));
      CHECK(bounded(before.failure.errors[i].message, e.failure.errors[i].message, limits::error_text, "\u2026"));
    }
    CHECK(e.failure.category == before.failure.category);
    CHECK(e.triage == before.triage);
    CHECK(e.attempts.count == before.attempts.count);

    // The texts: whole, or a prefix marked cut; length and hash of the whole.
    const auto kept = [&](const llmdlq::captured_text& was, const llmdlq::captured_text& is) {
      CHECK(is.length == was.length);
      CHECK(is.sha256 == was.sha256);
      REQUIRE(is.text.has_value());
      CHECK(was.text->starts_with(*is.text));
      CHECK(is.cut == (is.text->size() < was.text->size()));
      return is.base64 ? is.text->size() : escaped_size(*is.text);
    };
    const std::size_t raw_json = kept(before.raw_response, e.raw_response);
    const std::size_t input_json = before.original_input ? kept(*before.original_input, *e.original_input) : 0;
    const bool raw_cut = e.raw_response.cut;
    const bool input_cut = e.original_input && e.original_input->cut;
    if (raw_cut || input_cut) CHECK(json.size() + 16 >= limit);  // the room went to the texts
    // Fair shares: equal within a code point's escape and a cut flag's bytes.
    if (raw_cut && input_cut) {
      CHECK(raw_json + 16 >= input_json);
      CHECK(input_json + 16 >= raw_json);
    } else if (raw_cut && before.original_input) {
      CHECK(raw_json + 16 >= input_json);
    } else if (input_cut) {
      CHECK(input_json + 16 >= raw_json);
    }

    // Deterministic, and a second pass changes nothing.
    llmdlq::envelope again = before;
    llmdlq::fit_envelope(again, max_bytes);
    CHECK(again == e);
    llmdlq::fit_envelope(again, max_bytes);
    CHECK(again == e);
  }
  for (const char* kind : {"a limit below the least", "a text in base64", "no original input", "neither text cut",
                           "reduced", "an identifier cut", "errors dropped", "the raw response cut",
                           "the original input cut", "both texts cut"}) {
    INFO(kind);
    CHECK(seen[kind] >= 3);
  }
}

TEST_CASE("an attempt counts against attempts.max when a model answered it", "[envelope]") {
  using llmdlq::attempt_weight;
  const auto weight = [](std::string strategy, std::string outcome) {
    llmdlq::attempt_record a;
    a.strategy = std::move(strategy);
    a.outcome = std::move(outcome);
    return llmdlq::weight_of(a);
  };
  CHECK(weight("repair_prompt", "schema") == attempt_weight::counted);
  CHECK(weight("escalate_model", "recovered") == attempt_weight::counted);
  CHECK(weight("repair_prompt", "call_started") == attempt_weight::counted);  // died midway: it may have answered
  CHECK(weight("repair_prompt", "call_failed") == attempt_weight::unanswered);
  CHECK(weight("escalate_model", "call_failed") == attempt_weight::unanswered);
  CHECK(weight("local_repair", "recovered") == attempt_weight::local);
  CHECK(weight("revalidate", "schema") == attempt_weight::local);
  CHECK(weight("relax_schema", "failed") == attempt_weight::local);
}

}  // namespace envelope_test
