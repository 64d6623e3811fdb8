// SPDX-License-Identifier: MIT
// lower_schema, check_provider_schema and map_forced_nulls: schemas lowered
// for each provider are taken by its strict mode as its documentation
// states it, what the provider no longer enforces is said, and an answer's
// forced nulls come back out without changing any verdict of the user's
// schema.
#include <filesystem>
#include <random>
#include <set>

#include <boost/json.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/provider_schema.hpp>
#include <llmdlq/schema.hpp>
#include <llmdlq/stream_judge.hpp>

#include "catch.hpp"
#include "conformance/suite_files.hpp"

namespace provider_schema_test {

namespace {

using llmdlq::provider_profile;
using change = llmdlq::lowering_note::change;

constexpr provider_profile all_profiles[] = {provider_profile::full, provider_profile::openai_strict,
                                             provider_profile::gemini, provider_profile::anthropic,
                                             provider_profile::ollama};

std::string receipt_schema_text() {
  return llmdlq::test::read_file(std::filesystem::path(LLMDLQ_SOURCE_DIR) / "examples/data/receipt.schema.json");
}

// The README's quick start, and docs/streaming.md's.
constexpr const char* readme_schema = R"({"type": "object", "required": ["merchant", "total"],
    "properties": {"merchant": {"type": "string"}, "total": {"type": "number", "minimum": 0}}})";
constexpr const char* streaming_schema = R"({"type": "object", "additionalProperties": false,
    "properties": {"total": {"type": "number"}, "currency": {"enum": ["EUR", "USD"]}}})";

boost::json::value json(std::string_view text) { return boost::json::parse(text); }

llmdlq::lowered_schema lowered(std::string_view text, provider_profile profile) {
  auto l = llmdlq::lower_schema(text, profile);
  REQUIRE(l.has_value());
  return *std::move(l);
}

bool has_note(const llmdlq::lowered_schema& l, std::string_view pointer, change what) {
  return std::any_of(l.notes.begin(), l.notes.end(),
                     [&](const auto& n) { return n.pointer == pointer && n.what == what; });
}

// Every schema of a JSON-Schema-Test-Suite folder (each test group's).
std::vector<boost::json::value> suite_schemas(const std::filesystem::path& dir) {
  std::vector<boost::json::value> schemas;
  for (const auto& file : llmdlq::test::json_files_in(dir)) {
    const boost::json::value groups = boost::json::parse(llmdlq::test::read_file(file));
    for (const auto& group : groups.as_array()) {
      if (const auto* schema = group.as_object().if_contains("schema")) schemas.push_back(*schema);
    }
  }
  return schemas;
}

}  // namespace

TEST_CASE("lower_schema: the receipt schema as OpenAI's strict mode takes it, and what OpenAI no longer enforces",
          "[provider]") {
  const std::string receipt = receipt_schema_text();
  // As written, OpenAI refuses it: the first optional property.
  const auto refused = llmdlq::check_provider_schema(json(receipt), provider_profile::openai_strict);
  REQUIRE(refused.has_value());
  CHECK(refused->message == "'$schema' is not permitted");

  const auto l = lowered(receipt, provider_profile::openai_strict);
  CHECK(l.strict);
  CHECK(l.reason.empty());
  CHECK_FALSE(llmdlq::check_provider_schema(l.schema, provider_profile::openai_strict).has_value());
  const auto& root = l.schema.as_object();
  // Every property required; an optional one nullable.
  CHECK(root.at("required").as_array().size() == root.at("properties").as_object().size());
  CHECK(root.at("properties").at("receipt_id") == json(R"({"type": ["string", "null"], "format": "uuid"})"));
  CHECK(root.at("properties").at("payment_method") ==
        json(R"({"anyOf": [{"enum": ["cash", "card", "mobile", "other"]}, {"type": "null"}]})"));
  // What OpenAI will not enforce, by JSON Pointer into the user's schema.
  CHECK(has_note(l, "/properties/merchant/properties/name/minLength", change::dropped));
  CHECK(has_note(l, "/properties/merchant/properties/name/maxLength", change::dropped));
  CHECK(has_note(l, "/properties/merchant/properties/iban/format", change::dropped));  // a custom format
  CHECK(has_note(l, "/properties/date/x-dlq-rule", change::dropped));
  CHECK(has_note(l, "/properties/receipt_id", change::nullable));
  CHECK_FALSE(has_note(l, "/properties/merchant/properties/email/format", change::dropped));  // email is taken
  // The nulls forced: not vat_id's, which the user's schema allows.
  REQUIRE(l.nulls);
  CHECK(l.nulls->properties.contains("/properties/receipt_id"));
  CHECK(l.nulls->properties.contains("/properties/items/items/properties/sku"));
  CHECK_FALSE(l.nulls->properties.contains("/properties/merchant/properties/vat_id"));
  CHECK(has_note(l, "/properties/merchant/properties/vat_id", change::nullable));
}

TEST_CASE("lower_schema: Anthropic's bounds go into the description, its recursion and limits make it non-strict",
          "[provider]") {
  const auto l = lowered(receipt_schema_text(), provider_profile::anthropic);
  CHECK(l.strict);
  const auto& name = l.schema.at("properties").at("merchant").at("properties").at("name").as_object();
  CHECK_FALSE(name.contains("maxLength"));
  CHECK(name.at("description") == "(minLength: 1, maxLength: 200)");
  CHECK(has_note(l, "/properties/merchant/properties/name/maxLength", change::described));
  // Optional properties stay optional: Anthropic takes them (up to 24).
  CHECK_FALSE(l.nulls);
  // maxItems is refused by Anthropic: described (minItems 1 is taken).
  CHECK(has_note(l, "/properties/items/maxItems", change::described));
  CHECK_FALSE(has_note(l, "/properties/items/minItems", change::described));

  const auto tree = lowered(R"({"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
      "required": ["children"]})",
                            provider_profile::anthropic);
  CHECK_FALSE(tree.strict);
  CHECK(tree.reason == "recursive schemas are not supported");
  // OpenAI takes the same recursion.
  CHECK(lowered(R"({"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
      "required": ["children"]})",
                provider_profile::openai_strict)
            .strict);
}

TEST_CASE("lower_schema: what cannot be expressed is sent without strict mode, with the reason, or refused",
          "[provider]") {
  // A root anyOf, for OpenAI.
  const char* either = R"({"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                                     {"type": "object", "properties": {"b": {"type": "number"}}}]})";
  const auto l = lowered(either, provider_profile::openai_strict);
  CHECK_FALSE(l.strict);
  CHECK(l.reason.find("schema must be a JSON Schema of 'type: \"object\"'") != std::string::npos);
  llmdlq::lowering_options refuse;
  refuse.refuse_non_strict = true;
  const auto refused = llmdlq::lower_schema(either, provider_profile::openai_strict, refuse);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("type: \"object\"") != std::string::npos);
  // A map (names not listed) cannot be closed without refusing every answer.
  const auto map = lowered(R"({"type": "object", "additionalProperties": {"type": "integer"}})",
                           provider_profile::openai_strict);
  CHECK_FALSE(map.strict);
  CHECK(map.reason.find("cannot be closed") != std::string::npos);
  // A reference to another document, for every profile but full.
  const char* remote = R"({"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}})";
  for (const auto p : {provider_profile::openai_strict, provider_profile::gemini, provider_profile::anthropic,
                       provider_profile::ollama}) {
    CHECK_FALSE(lowered(remote, p).strict);
  }
  CHECK(lowered(remote, provider_profile::full).strict);
  // Not JSON at all is an error whatever the options.
  CHECK_FALSE(llmdlq::lower_schema("{\"type\":", provider_profile::gemini).has_value());
}

TEST_CASE("check_provider_schema refuses what each provider's documentation says it refuses", "[provider]") {
  const auto refuses = [](std::string_view schema, provider_profile p, std::string_view words) {
    INFO(schema);
    const auto r = llmdlq::check_provider_schema(json(schema), p);
    REQUIRE(r.has_value());
    CHECK(r->message.find(words) != std::string::npos);
  };
  const auto takes = [](std::string_view schema, provider_profile p) {
    INFO(schema);
    CHECK_FALSE(llmdlq::check_provider_schema(json(schema), p).has_value());
  };
  using p = provider_profile;
  takes(R"({"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}, "required": ["a"],
            "additionalProperties": false})",
        p::openai_strict);
  refuses(R"({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}, "required": ["a"],
              "additionalProperties": false})",
          p::openai_strict, "'minLength' is not permitted");
  refuses(R"({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})", p::openai_strict,
          "'additionalProperties' is required to be supplied and to be false");
  refuses(R"({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false})",
          p::openai_strict, "Missing 'a'");
  refuses(R"({"type": "object", "properties": {"d": {"type": "string", "format": "iban"}}, "required": ["d"],
              "additionalProperties": false})",
          p::openai_strict, "format 'iban' is not supported");
  // Ten levels of objects are taken, eleven are not.
  const auto nested = [](int levels) {
    std::string s = R"({"type": "string"})";
    for (int i = 0; i < levels; ++i) {
      s = R"({"type": "object", "properties": {"n": )" + s + R"(}, "required": ["n"], "additionalProperties": false})";
    }
    return s;
  };
  takes(nested(10), p::openai_strict);
  refuses(nested(11), p::openai_strict, "11 levels of nesting exceeds limit of 10");
  // 1,000 enum values in all are taken, 1,001 are not.
  const auto with_enum = [](int n) {
    boost::json::array values;
    for (int i = 0; i < n; ++i) values.emplace_back(i);
    return boost::json::serialize(boost::json::object{{"type", "object"},
                                                      {"properties", {{"e", {{"enum", values}}}}},
                                                      {"required", {"e"}},
                                                      {"additionalProperties", false}});
  };
  takes(with_enum(1000), p::openai_strict);
  refuses(with_enum(1001), p::openai_strict, "1001 enum values exceeds the limit of 1000");
  // Anthropic: no numeric bounds, minItems 0 or 1, 24 optional properties.
  refuses(R"({"type": "object", "properties": {"n": {"type": "number", "minimum": 0}}, "additionalProperties": false})",
          p::anthropic, "'minimum' is not permitted");
  refuses(R"({"type": "array", "items": {"type": "string"}, "minItems": 2})", p::anthropic,
          "minItems values other than 0 or 1");
  boost::json::object many{{"type", "object"}, {"additionalProperties", false}};
  boost::json::object properties;
  for (int i = 0; i < 25; ++i) properties["p" + std::to_string(i)] = {{"type", "string"}};
  many["properties"] = properties;
  refuses(boost::json::serialize(many), p::anthropic, "25 optional parameters exceeds the limit of 24");
  // Gemini and Ollama ignore what they do not take, and refuse a reference outside the schema.
  takes(R"({"type": "object", "properties": {"a": {"type": "string", "x-unknown": 1, "minLength": 2}}})", p::gemini);
  takes(R"({"type": "object", "not": {"required": ["a"]}})", p::ollama);
  refuses(R"({"type": "object", "properties": {"a": {"$ref": "other.json"}}})", p::ollama, "cannot be resolved");
  // full takes anything.
  takes(R"({"anyOf": [true, {"not": {}}]})", p::full);
}

TEST_CASE("lower_schema: every schema of the official suites lowers for every profile to what its strict mode takes",
          "[provider]") {
  LLMDLQ_SUITE_OR_SKIP(dir, "json-schema-test-suite/tests/draft2020-12");
  auto schemas = suite_schemas(dir);
  LLMDLQ_SUITE_OR_SKIP(draft7, "json-schema-test-suite/tests/draft7");
  for (auto& s : suite_schemas(draft7)) schemas.push_back(std::move(s));
  for (const char* text : {readme_schema, streaming_schema}) schemas.push_back(json(text));
  schemas.push_back(json(receipt_schema_text()));
  REQUIRE(schemas.size() > 600);
  for (const auto p : all_profiles) {
    std::size_t strict = 0;
    for (const auto& s : schemas) {
      INFO(llmdlq::to_string(p) << ": " << boost::json::serialize(s));
      const auto l = llmdlq::lower_schema(s, p);
      REQUIRE(l.has_value());
      if (!l->strict) {
        CHECK_FALSE(l->reason.empty());
        continue;
      }
      ++strict;
      // What is sent in strict mode is what the provider's strict mode takes.
      CHECK_FALSE(llmdlq::check_provider_schema(l->schema, p).has_value());
    }
    INFO(llmdlq::to_string(p));
    CHECK(strict >= 30);
    if (p == provider_profile::full) CHECK(strict == schemas.size());
  }
}

namespace {

// `document` with a null (at the end of its object) for each property the
// lowered schema requires and it lacks: all of them, as a model under the
// lowered schema writes it, or only those whose null the user's schema
// allows, which mapping back keeps.
void fill_nulls(boost::json::value& document, const boost::json::value& schema, const std::string& at,
                const llmdlq::forced_nulls& nulls, bool forced_too) {
  const auto* s = schema.if_object();
  if (s == nullptr) return;
  if (const auto* any = s->if_contains("anyOf")) {
    for (std::size_t i = 0; i < any->as_array().size(); ++i) {
      fill_nulls(document, any->as_array()[i], at + "/anyOf/" + std::to_string(i), nulls, forced_too);
    }
  }
  if (auto* o = document.if_object(); o && s->contains("properties")) {
    for (const auto& [name, sub] : s->at("properties").as_object()) {
      const std::string place = at + "/properties/" + std::string(name);
      if (auto* member = o->if_contains(name)) {
        fill_nulls(*member, sub, place, nulls, forced_too);
      } else if (forced_too || !nulls.properties.contains(place)) {
        o->emplace(name, nullptr);
      }
    }
  }
  if (auto* a = document.if_array(); a && s->contains("items")) {
    for (auto& e : *a) fill_nulls(e, s->at("items"), at + "/items", nulls, forced_too);
  }
}

// A receipt with each optional part present or not, and now and then a
// fault (a wrong type, a name too many). (A null where the user's schema
// forbids one is, under the lowered schema, how a model leaves a property
// out: mapped back, it is left out.)
boost::json::value random_receipt(std::mt19937& rng) {
  auto coin = [&](int in) { return std::uniform_int_distribution<int>(0, in - 1)(rng) == 0; };
  boost::json::object merchant{{"name", "Albert Heijn"}};
  if (coin(2)) merchant["vat_id"] = coin(3) ? boost::json::value(nullptr) : boost::json::value("NL123456789B01");
  if (coin(2)) merchant["email"] = "kassa@example.com";
  boost::json::array items;
  const int n = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int i = 0; i < n; ++i) {
    boost::json::object item{{"description", "Brood"}, {"quantity", 1}, {"unit_price", 2.5}, {"amount", 2.5}};
    if (coin(2)) item["sku"] = "AH-123";
    if (coin(3)) item["vat_rate"] = 9;
    items.push_back(std::move(item));
  }
  boost::json::object r{
      {"merchant", merchant}, {"date", "2026-03-01"}, {"currency", "EUR"}, {"total", 2.5}, {"items", items}};
  if (coin(2)) r["receipt_id"] = "2f1d3c4b-5a69-4788-9abc-def012345678";
  if (coin(2)) r["payment_method"] = "card";
  if (coin(2)) r["tax"] = 0.21;
  if (coin(10)) r["total"] = "2.50";  // a wrong type
  if (coin(10)) r["tip"] = 1;         // a name the schema forbids
  return r;
}

}  // namespace

TEST_CASE("map_forced_nulls: a lowered answer mapped back judges as the user's own document would", "[provider]") {
  llmdlq::compile_options options;
  options.format_assertion = true;
  const std::string receipt = receipt_schema_text();
  const auto original = llmdlq::schema::compile(receipt, options);
  REQUIRE(original.has_value());
  const auto l = lowered(receipt, provider_profile::openai_strict);
  REQUIRE(l.nulls);
  const auto lowered_compiled = llmdlq::schema::compile(l.text());
  REQUIRE(lowered_compiled.has_value());
  std::mt19937 rng(20261206);
  std::size_t valid = 0, mapped_nulls = 0;
  for (int round = 0; round < 400; ++round) {
    const boost::json::value document = random_receipt(rng);
    boost::json::value answer = document, kept = document;
    fill_nulls(answer, l.schema, "", *l.nulls, true);
    fill_nulls(kept, l.schema, "", *l.nulls, false);
    const std::string answer_text = boost::json::serialize(answer);
    INFO(answer_text);
    const bool valid_before = original->is_valid(document);
    valid += valid_before ? 1 : 0;
    // What the user's schema takes, the lowered one takes once its nulls are written.
    if (valid_before) CHECK(lowered_compiled->is_valid(answer));
    const auto mapped = llmdlq::map_forced_nulls(answer_text, *l.nulls);
    mapped_nulls += mapped.actions.size();
    // Mapped back, the answer is the document (with the nulls the user's
    // schema allows, which the model had to write), and so is its verdict.
    const auto back = boost::json::parse(mapped.json);
    CHECK(back == kept);
    CHECK(original->is_valid(back) == valid_before);
    for (const auto& a : mapped.actions) {
      CHECK(a.code == "forced_null");
      CHECK(a.tier == llmdlq::repair_tier::lossless);
      CHECK(answer_text.substr(a.begin, a.end - a.begin) == a.before);
    }
  }
  CHECK(valid > 100);
  CHECK(mapped_nulls > 400);
}

TEST_CASE("map_forced_nulls: the separators go with the members cut, whatever their place and spacing", "[provider]") {
  const auto l = lowered(R"({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"},
      "c": {"type": ["string", "null"]}, "o": {"type": "object", "properties": {"x": {"type": "number"}}}}})",
                         provider_profile::openai_strict);
  REQUIRE(l.nulls);
  const auto mapped = [&](std::string_view text) { return llmdlq::map_forced_nulls(text, *l.nulls).json; };
  CHECK(mapped(R"({"a": null, "b": 1, "c": null, "o": null})") == R"({"b": 1, "c": null})");
  CHECK(mapped(R"({"a": "x", "b": null, "c": "y", "o": {"x": null}})") == R"({"a": "x", "c": "y", "o": {}})");
  CHECK(mapped("{\n  \"a\": null,\n  \"b\": null\n}") == "{\n  \n}");
  CHECK(mapped(R"({"b":2,"a":null})") == R"({"b":2})");
  CHECK(mapped(R"({"\u0061": null, "b": 2})") == R"({"b": 2})");  // an escaped name is the same name
  // A null the user's schema allows stays ("c"), and so does a value that is not null.
  CHECK(mapped(R"({"c": null, "a": "x"})") == R"({"c": null, "a": "x"})");
  const auto actions = llmdlq::map_forced_nulls(R"({"a": null, "o": {"x": null}})", *l.nulls).actions;
  REQUIRE(actions.size() == 2);
  CHECK(actions[0].path == "/a");
  CHECK(actions[1].path == "/o/x");
}

TEST_CASE("map_forced_nulls follows a schema whose anyOf leads back to itself, once", "[provider]") {
  const auto l = lowered(R"({"type": "object", "properties": {"x": {"type": "string"}, "t": {"$ref": "#/$defs/a"}},
      "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "string"}]}}})",
                         provider_profile::openai_strict);
  REQUIRE(l.nulls);
  CHECK(llmdlq::map_forced_nulls(R"({"t": "s", "x": null})", *l.nulls).json == R"({"t": "s"})");
}

TEST_CASE("maxProperties: a streamed answer's forced nulls count for nothing the whole does not count",
          "[provider][stream]") {
  const char* text = R"({"type": "object", "maxProperties": 2,
      "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "integer"}}})";
  const auto schema = llmdlq::schema::compile(text);
  REQUIRE(schema.has_value());
  llmdlq::process_config config;
  config.judging.forced_nulls = lowered(text, provider_profile::openai_strict).nulls;
  const std::string answer = R"({"a": null, "b": 1, "c": 2})";
  CHECK(llmdlq::process_llm_response(answer, *schema, {}, config).has_value());
  for (const auto repair : {llmdlq::repair_mode::off, llmdlq::repair_mode::local}) {
    config.judging.repair = repair;
    llmdlq::stream_judge judge(*schema, {}, config);
    CHECK_FALSE(judge.feed(answer).dead);
    CHECK(judge.finish().has_value());
  }
}

TEST_CASE("process_llm_response maps forced nulls back before judging, and says so", "[provider][process]") {
  const std::string receipt = receipt_schema_text();
  const auto schema = llmdlq::schema::compile(receipt);
  REQUIRE(schema.has_value());
  const auto l = lowered(receipt, provider_profile::openai_strict);
  const std::string answer = R"({"receipt_id": null, "merchant": {"name": "Jumbo", "vat_id": null, "iban": null,
      "email": null}, "date": "2026-03-01", "issued_at": null, "currency": "EUR", "total": 8.1, "tax": null,
      "payment_method": null, "card_last4": null, "items": [{"description": "Brood", "sku": null, "quantity": 1,
      "unit_price": 8.1, "amount": 8.1, "vat_rate": null}], "confidence": null})";
  llmdlq::process_config config;
  // Without the mapping, the provider's nulls fail the user's schema.
  CHECK_FALSE(llmdlq::process_llm_response(answer, *schema, {}, config).has_value());
  config.judging.forced_nulls = l.nulls;
  const auto accepted = llmdlq::process_llm_response(answer, *schema, {}, config);
  REQUIRE(accepted.has_value());
  const auto value = accepted->value();
  CHECK_FALSE(value.as_object().contains("receipt_id"));
  CHECK(value.at("merchant").as_object().contains("vat_id"));  // the user's schema allows null there
  CHECK_FALSE(value.at("items").at(0).as_object().contains("sku"));
  CHECK(std::count_if(accepted->repairs.begin(), accepted->repairs.end(),
                      [](const auto& a) { return a.code == "forced_null"; }) == 10);
  // A fault of the answer's own is still one.
  std::string wrong = answer;
  wrong.replace(wrong.find("8.1,"), 3, "\"8.1\"");
  CHECK_FALSE(llmdlq::process_llm_response(wrong, *schema, {}, config).has_value());

  // Streamed, the forced nulls do not kill the answer, and the whole is judged as above;
  // the fault of its own still does, where it is.
  for (const auto repair : {llmdlq::repair_mode::off, llmdlq::repair_mode::local}) {
    config.judging.repair = repair;
    llmdlq::stream_judge judge(*schema, {}, config);
    for (std::size_t at = 0; at < answer.size(); at += 7) judge.feed(std::string_view(answer).substr(at, 7));
    CHECK_FALSE(judge.verdict().dead);
    CHECK(judge.finish("stop").has_value());
    llmdlq::stream_judge faulty(*schema, {}, config);
    faulty.feed(wrong);
    CHECK(faulty.verdict().dead);
    CHECK(faulty.verdict().errors.at(0).instance_path == "/total");
  }
}

}  // namespace provider_schema_test
