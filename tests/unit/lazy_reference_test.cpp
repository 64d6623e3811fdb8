// SPDX-License-Identifier: MIT
// References that cannot be evaluated, in every draft: a `$ref` to nothing
// and subschemas that apply each other in place forever compile with a
// warning, judge the instances that never reach them, and fail with a typed
// error every instance that does, on every validation path (tape, forward
// pass, simdjson, Boost.JSON, process) — and refuse_broken_references keeps
// them compile errors.
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>
#include <fmt/format.h>

#include <llmdlq/json_parser.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/schema.hpp>

#include "catch.hpp"
#include "support/compiled_schema.hpp"
#include "support/envelope_check.hpp"

namespace lazy_reference_test {

namespace {

using llmdlq::schema_defect;

struct draft {
  std::string_view meta;
  std::string_view definitions;  ///< where the draft keeps reusable subschemas
};

constexpr draft drafts[] = {
    {"http://json-schema.org/draft-04/schema#", "definitions"},
    {"http://json-schema.org/draft-06/schema#", "definitions"},
    {"http://json-schema.org/draft-07/schema#", "definitions"},
    {"https://json-schema.org/draft/2019-09/schema", "$defs"},
    {"https://json-schema.org/draft/2020-12/schema", "$defs"},
};

// A catalogue's shape: properties that never reach the broken parts beside
// one that reaches a definition's missing definition, one that reaches a
// document no one has, and one whose definition includes itself in place.
std::string broken_schema(const draft& d) {
  return fmt::format(R"({{
    "$schema": "{0}",
    "type": "object",
    "properties": {{
      "name": {{"type": "string"}},
      "nested": {{"$ref": "#/{1}/a/{1}/missing"}},
      "remote": {{"$ref": "https://schemas.example.com/absent.json#/{1}/x"}},
      "looping": {{"$ref": "#/{1}/loop"}}
    }},
    "{1}": {{
      "a": {{"type": "object"}},
      "loop": {{"allOf": [{{"$ref": "#/{1}/loop"}}]}}
    }}
  }})",
                     d.meta, d.definitions);
}

using llmdlq::test::compiled;

// The verdict of every validation path, which must agree.
bool judged_valid(const llmdlq::schema& schema, std::string_view json) {
  llmdlq::json_parser parser;
  const auto document = parser.parse(json);
  REQUIRE(document);
  const bool tape = schema.is_valid(*document);
  CHECK(schema.is_valid(document->root()) == tape);
  CHECK(schema.is_valid(boost::json::parse(json)) == tape);
  CHECK(schema.is_valid_text(json) == tape);
  CHECK(schema.validate(*document).empty() == tape);
  CHECK(schema.validate(boost::json::parse(json)).empty() == tape);
  return tape;
}

std::vector<llmdlq::validation_error> errors_of(const llmdlq::schema& schema, std::string_view json) {
  llmdlq::json_parser parser;
  const auto document = parser.parse(json);
  REQUIRE(document);
  return schema.validate(*document);
}

bool any_warning_names(const llmdlq::schema& schema, std::string_view what) {
  for (const auto& w : schema.warnings()) {
    if (w.find(what) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("broken references compile with warnings that name each, in every draft", "[schema][lazy]") {
  for (const auto& d : drafts) {
    CAPTURE(d.meta);
    const auto schema = compiled(broken_schema(d));
    CHECK(schema.warnings().size() == 3);
    CHECK(any_warning_names(schema, "/properties/nested/$ref: cannot resolve"));
    CHECK(any_warning_names(schema, "/properties/remote/$ref: cannot resolve"));
    CHECK(any_warning_names(schema, "absent.json"));
    CHECK(any_warning_names(schema, fmt::format("#/{}/loop -> #/{}/loop/allOf/0", d.definitions, d.definitions)));
    CHECK(any_warning_names(schema, "(reference_loop)"));
    CHECK(any_warning_names(schema, "(unresolved_reference)"));
  }
}

TEST_CASE("an instance that never reaches a broken reference is judged as usual", "[schema][lazy]") {
  for (const auto& d : drafts) {
    CAPTURE(d.meta);
    const auto schema = compiled(broken_schema(d));
    CHECK(judged_valid(schema, R"({"name": "Albert Heijn"})"));
    CHECK_FALSE(judged_valid(schema, R"({"name": 7})"));
    const auto errors = errors_of(schema, R"({"name": 7})");
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].keyword == "type");
    CHECK(errors[0].defect == schema_defect::none);
  }
}

TEST_CASE("an instance that reaches a broken reference fails with a typed error", "[schema][lazy]") {
  for (const auto& d : drafts) {
    CAPTURE(d.meta);
    const auto schema = compiled(broken_schema(d));
    for (const auto& [member, defect, schema_path] :
         {std::tuple{"nested", schema_defect::unresolved_reference, "/properties/nested/$ref"},
          std::tuple{"remote", schema_defect::unresolved_reference, "/properties/remote/$ref"},
          std::tuple{"looping", schema_defect::reference_loop, "/properties/looping/$ref/allOf/0/$ref"}}) {
      CAPTURE(member);
      const std::string instance = fmt::format(R"({{"name": "x", "{}": {{}}}})", member);
      CHECK_FALSE(judged_valid(schema, instance));
      const auto errors = errors_of(schema, instance);
      REQUIRE(errors.size() == 1);
      CHECK(errors[0].defect == defect);
      CHECK(errors[0].instance_path == fmt::format("/{}", member));
      CHECK(errors[0].schema_path == schema_path);
      CHECK(errors[0].message.find(std::string(to_string(defect))) != std::string::npos);
    }
  }
}

TEST_CASE("a broken reference fails an instance however it is reached", "[schema][lazy]") {
  // Under `not`, a failure would pass: a defect still fails the validation.
  const auto negated = compiled(R"({"not": {"$ref": "#/$defs/missing"}})");
  for (const std::string_view instance : {"1", R"("text")", "{}", "[1, 2]", "null"}) {
    CAPTURE(instance);
    CHECK_FALSE(judged_valid(negated, instance));
    const auto errors = errors_of(negated, instance);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].defect == schema_defect::unresolved_reference);
    CHECK(errors[0].keyword == "$ref");
    CHECK(errors[0].schema_path == "/not/$ref");
  }
  // In a branch tried quietly (oneOf), where the path that reached it keeps no error of its own.
  const auto branches = compiled(R"({"oneOf": [{"type": "integer"}, {"$ref": "other.json"}]})");
  CHECK_FALSE(judged_valid(branches, "1"));
  bool typed = false;
  for (const auto& e : errors_of(branches, "1")) typed = typed || e.defect == schema_defect::unresolved_reference;
  CHECK(typed);
  // With the error cap reached by another error, the defect takes the last place.
  llmdlq::json_parser parser;
  const auto document = parser.parse("1");
  REQUIRE(document);
  llmdlq::validate_options one;
  one.max_errors = 1;
  const auto capped =
      compiled(R"({"allOf": [{"not": {"$ref": "#/$defs/missing"}}, {"type": "string"}]})").validate(*document, one);
  REQUIRE(capped.size() == 1);
  CHECK(capped[0].defect == schema_defect::unresolved_reference);
  CHECK(capped[0].schema_path == "/allOf/0/not/$ref");
}

TEST_CASE("a schema that applies itself in place fails every instance, without recursing", "[schema][lazy]") {
  for (const auto* text : {R"({"$ref": "#"})", R"({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]},
                                                              "b": {"not": {"$ref": "#/$defs/a"}}},
                                                    "$ref": "#/$defs/a"})",
                           R"({"definitions": {"a": {"anyOf": [{"$ref": "#/definitions/a"}, {"type": "string"}]}},
                               "$ref": "#/definitions/a", "$schema": "http://json-schema.org/draft-07/schema#"})"}) {
    CAPTURE(text);
    const auto schema = compiled(text);
    CHECK(any_warning_names(schema, "(reference_loop)"));
    for (const std::string_view instance : {"1", R"({"a": [1, {"b": 2}]})"}) {
      CHECK_FALSE(judged_valid(schema, instance));
      const auto errors = errors_of(schema, instance);
      REQUIRE_FALSE(errors.empty());
      bool typed = false;
      for (const auto& e : errors) typed = typed || e.defect == schema_defect::reference_loop;
      CHECK(typed);
    }
  }
  // Recursion through properties descends into the instance: no loop, no warning.
  const auto tree = compiled(R"({"properties": {"child": {"$ref": "#"}}, "required": ["id"]})");
  CHECK(tree.warnings().empty());
  CHECK(judged_valid(tree, R"({"id": 1, "child": {"id": 2}})"));
}

TEST_CASE("refuse_broken_references keeps both kinds compile errors, in every draft", "[schema][lazy]") {
  llmdlq::compile_options strict;
  strict.refuse_broken_references = true;
  for (const auto& d : drafts) {
    CAPTURE(d.meta);
    const auto unresolved = llmdlq::schema::compile(
        fmt::format(R"({{"$schema": "{}", "properties": {{"a": {{"$ref": "#/{}/missing"}}}}}})", d.meta, d.definitions),
        strict);
    REQUIRE_FALSE(unresolved);
    CHECK(unresolved.error().code == llmdlq::schema_errc::unresolved_reference);
    CHECK(unresolved.error().location == "/properties/a/$ref");
    const auto looping = llmdlq::schema::compile(
        fmt::format(R"({{"$schema": "{0}", "{1}": {{"loop": {{"allOf": [{{"$ref": "#/{1}/loop"}}]}}}},
                        "properties": {{"a": {{"$ref": "#/{1}/loop"}}}}}})",
                    d.meta, d.definitions),
        strict);
    REQUIRE_FALSE(looping);
    CHECK(looping.error().code == llmdlq::schema_errc::infinite_recursion);
    CHECK(looping.error().message.find("#/" + std::string(d.definitions) + "/loop") != std::string::npos);
    CHECK(compiled(broken_schema(d)).warnings().size() == 3);  // and without the switch, they compile
  }
}

TEST_CASE("process judges a response that reaches a broken reference a schema failure, in every draft",
          "[schema][lazy][process]") {
  for (const auto& d : drafts) {
    CAPTURE(d.meta);
    const auto schema = compiled(broken_schema(d));
    llmdlq::process_options options;
    CHECK(llmdlq::process_llm_response(R"({"name": "Albert Heijn"})", schema, {}, options).has_value());
    for (const auto& [response, defect] :
         {std::pair{R"({"name": "x", "remote": {}})", schema_defect::unresolved_reference},
          std::pair{R"({"nested": []})", schema_defect::unresolved_reference},
          std::pair{R"({"looping": 1})", schema_defect::reference_loop}}) {
      CAPTURE(response);
      const auto result = llmdlq::process_llm_response(response, schema, {}, options);
      REQUIRE_FALSE(result.has_value());
      const auto& letter = llmdlq::test::check_envelope(result.error());  // and read back, defect and all
      CHECK(letter.failure.category == llmdlq::failure_category::schema);
      CHECK_FALSE(letter.triage.auto_replayable);
      REQUIRE(letter.failure.errors.size() == 1);
      CHECK(letter.failure.errors[0].keyword == "$ref");
      CHECK(letter.failure.errors[0].defect == defect);
      CHECK(letter.failure.errors[0].message.find("the schema cannot be evaluated here") != std::string::npos);
    }
  }
}

}  // namespace lazy_reference_test
