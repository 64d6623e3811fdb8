// SPDX-License-Identifier: MIT
// `llmdlq validate` as a user runs it: output lines, exit codes, stderr.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "catch.hpp"
#include "support/skip.hpp"
#include "tools/run_tool.hpp"

namespace validate_command_test {

using llmdlq::test::run_llmdlq;
using llmdlq::test::temp_dir;

namespace {

constexpr std::string_view schema_json = R"({
  "type": "object", "required": ["total"],
  "properties": {"total": {"type": "number", "minimum": 0}, "date": {"format": "date"}}
})";

}  // namespace

TEST_CASE("validate: one verdict line per file, exit 1 when any is invalid", "[tools][validate]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto good = dir.write("good.json", R"({"total": 3})");
  const auto bad = dir.write("bad.json", R"({"total": -3})");
  const auto broken = dir.write("broken.json", "{\n  \"total\": 3,\n}");

  auto run = run_llmdlq("validate --schema " + schema + " " + good);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "{\"valid\":true,\"dialect\":\"draft2020-12\"}\n");

  run = run_llmdlq("validate --schema " + schema + " " + good + " " + bad + " " + broken);
  CHECK(run.exit_code == 1);
  CHECK(
      run.out ==
      "{\"valid\":true,\"dialect\":\"draft2020-12\"}\n"
      R"({"valid":false,"errors":[{"instance_path":"/total","schema_path":"/properties/total/minimum","keyword":"minimum","message":"must be >= 0, found -3"}],"dialect":"draft2020-12"})"
      "\n"
      R"({"valid":false,"syntax":{"offset":16,"line":3,"column":1,"message":"trailing comma before '}'"},"dialect":"draft2020-12"})"
      "\n");
  CHECK(run.err.empty());
}

TEST_CASE("validate --jsonl: one document per line of standard input", "[tools][validate]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto run = run_llmdlq("validate --jsonl --schema " + schema,
                              "{\"total\": 1}\n{\"total\": \"1\"}\n[\n{\"total\": 2}\r\n");
  CHECK(run.exit_code == 1);
  CHECK(
      run.out ==
      "{\"valid\":true,\"dialect\":\"draft2020-12\"}\n"
      R"({"valid":false,"errors":[{"instance_path":"/total","schema_path":"/properties/total/type","keyword":"type","message":"expected number, found string"}],"dialect":"draft2020-12"})"
      "\n"
      R"({"valid":false,"syntax":{"offset":1,"line":1,"column":2,"message":"the input ends where a value or ']' was expected"},"dialect":"draft2020-12"})"
      "\n{\"valid\":true,\"dialect\":\"draft2020-12\"}\n");
}

TEST_CASE("validate: standard input as one document when no file is given", "[tools][validate]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto run = run_llmdlq("validate --schema " + schema, "{\n\"total\": 0\n}\n");
  CHECK(run.exit_code == 0);
  CHECK(run.out == "{\"valid\":true,\"dialect\":\"draft2020-12\"}\n");
}

TEST_CASE("validate: format is asserted only with --format-assertion", "[tools][validate]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto doc = dir.write("doc.json", R"({"total": 1, "date": "2026-13-01"})");
  CHECK(run_llmdlq("validate --schema " + schema + " " + doc).exit_code == 0);
  const auto run = run_llmdlq("validate --format-assertion --schema " + schema + " " + doc);
  CHECK(run.exit_code == 1);
  CHECK(run.out.find(R"("keyword":"format","message":"is not a valid date")") != std::string::npos);
}

TEST_CASE("validate: invalid UTF-8 in a document is a positioned syntax error", "[tools][validate]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto doc = dir.write("doc.json", "{\"total\": 1, \"name\": \"Caf\xE9\"}");
  const auto run = run_llmdlq("validate --schema " + schema + " " + doc);
  CHECK(run.exit_code == 1);
  CHECK(
      run.out ==
      R"({"valid":false,"syntax":{"offset":25,"line":1,"column":26,"message":"invalid UTF-8 in a string"},"dialect":"draft2020-12"})"
      "\n");
}

TEST_CASE("validate: schema problems exit 2 with a message naming the location", "[tools][validate]") {
  temp_dir dir;
  const auto doc = dir.write("doc.json", "{}");
  auto run = run_llmdlq("validate --schema " + dir.write("s.json", R"({"properties": {"a": {"minimum": "x"}}})") + " " +
                        doc);
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK(run.err.find("at /properties/a/minimum: minimum must be a number") != std::string::npos);

  run = run_llmdlq("validate --schema " + dir.write("t.json", R"({"type": "object",})") + " " + doc);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("the schema is not JSON") != std::string::npos);

  run = run_llmdlq("validate --strict-references --schema " + dir.write("u.json", R"({"$ref": "other.json"})") + " " +
                   doc);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("cannot resolve other.json") != std::string::npos);

  run = run_llmdlq("validate --schema " + (dir.path() / "missing.json").string() + " " + doc);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("cannot read the schema " + (dir.path() / "missing.json").string()) != std::string::npos);
  CHECK(run.err.find("No such file or directory") != std::string::npos);
}

TEST_CASE("validate: broken references are warnings, and fail only the documents that reach them",
          "[tools][validate]") {
  temp_dir dir;
  const auto schema = dir.write("s.json", R"({"properties": {"name": {"type": "string"},
      "remote": {"$ref": "other.json"}, "looping": {"$ref": "#/$defs/loop"}},
      "$defs": {"loop": {"allOf": [{"$ref": "#/$defs/loop"}]}}})");
  const auto good = dir.write("good.json", R"({"name": "x"})");
  const auto remote = dir.write("remote.json", R"({"remote": 1})");
  const auto looping = dir.write("looping.json", R"({"looping": 1})");
  auto run = run_llmdlq("validate --schema " + schema + " " + good);
  CHECK(run.exit_code == 0);
  CHECK(run.err ==
        "llmdlq validate: warning: /properties/remote/$ref: cannot resolve other.json: no schema is registered as "
        "other.json; an instance that reaches it fails (unresolved_reference)\n"
        "llmdlq validate: warning: /$defs/loop/allOf/0/$ref: subschemas apply each other in place in a loop that "
        "never descends into the value: #/$defs/loop -> #/$defs/loop/allOf/0 -> #/$defs/loop; an instance that "
        "reaches it fails (reference_loop)\n");
  run = run_llmdlq("validate --schema " + schema + " " + remote + " " + looping);
  CHECK(run.exit_code == 1);
  CHECK(run.out.find(R"("instance_path":"/remote","schema_path":"/properties/remote/$ref","keyword":"$ref")") !=
        std::string::npos);
  CHECK(run.out.find(R"("defect":"unresolved_reference")") != std::string::npos);
  CHECK(run.out.find(R"("defect":"reference_loop")") != std::string::npos);
  run = run_llmdlq("validate --strict-references --schema " + schema + " " + good);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("invalid schema " + schema + " at /properties/remote/$ref: cannot resolve other.json") !=
        std::string::npos);
}

TEST_CASE("validate: an unreadable document exits 2 but the others are still checked", "[tools][validate]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto good = dir.write("good.json", R"({"total": 3})");
  const auto missing = (dir.path() / "missing.json").string();
  const auto run = run_llmdlq("validate --schema " + schema + " " + missing + " " + good + " " + dir.path().string());
  CHECK(run.exit_code == 2);
  CHECK(run.out.find(R"("read_error":"No such file or directory")") != std::string::npos);
  CHECK(run.out.find(R"("read_error":"Is a directory")") != std::string::npos);
  CHECK(run.out.find("{\"valid\":true,\"dialect\":\"draft2020-12\"}\n") != std::string::npos);
  CHECK(run.err.find("cannot read the document " + missing + ": No such file or directory") != std::string::npos);
}

TEST_CASE("validate: usage errors exit 2", "[tools][validate]") {
  CHECK(run_llmdlq("validate").exit_code == 2);
  CHECK(run_llmdlq("validate --schema").exit_code == 2);
  CHECK(run_llmdlq("validate --schema x.json --bogus").exit_code == 2);
  CHECK(run_llmdlq("validate --schema x.json --remote nodir").exit_code == 2);
  CHECK(run_llmdlq("frobnicate").exit_code == 2);
  CHECK(run_llmdlq("validate --help").exit_code == 0);
}

TEST_CASE("validate --remote maps a URI prefix to a folder", "[tools][validate]") {
  temp_dir dir;
  std::filesystem::create_directories(dir.path() / "defs");
  dir.write("defs/money.json", R"({"type": "number", "minimum": 0})");
  const auto schema = dir.write("schema.json", R"({"$ref": "http://localhost:1234/money.json"})");
  const auto doc = dir.write("doc.json", "-1");
  const auto run = run_llmdlq("validate --schema " + schema +
                              " --remote http://localhost:1234/=" + (dir.path() / "defs").string() + " " + doc);
  CHECK(run.exit_code == 1);
  CHECK(run.out.find(R"("schema_path":"/$ref/minimum")") != std::string::npos);
}

TEST_CASE("validate: a read error on standard input exits 2", "[tools][validate]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  for (const char* mode : {"", " --jsonl"}) {
    INFO(mode);
    const auto run = llmdlq::test::run_llmdlq_reading("validate --schema " + schema + mode, dir.path().string());
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());
    // --jsonl reads lines; without it, standard input is one document.
    CHECK(run.err.find(*mode != '\0'
                           ? "cannot read standard input: Is a directory"
                           : "cannot read the document on standard input: Is a directory") != std::string::npos);
  }
}

TEST_CASE("validate --jsonl: a line over the document limit is invalid, and the next is read", "[tools][validate]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", R"({"type": "array"})");
  const std::string huge = "[" + std::string(16u << 20, ' ') + "]";
  const auto run = run_llmdlq("validate --jsonl --schema " + schema, huge + "\n[]\n");
  CHECK(run.exit_code == 1);
  CHECK(
      run.out ==
      "{\"valid\":false,\"too_large\":{\"length\":16777218,\"limit\":16777216},\"dialect\":\"draft2020-12\"}\n{\"valid\":true,\"dialect\":\"draft2020-12\"}\n");
}

TEST_CASE("every command: results that do not reach standard output are exit 3, never 0", "[tools]") {
  if (!std::filesystem::exists("/dev/full")) LLMDLQ_SKIP("/dev/full is missing: no output that fails");
  llmdlq::test::temp_dir dir;
  const auto schema = dir.write("schema.json", R"({"type": "object"})");
  const auto document = dir.write("doc.json", "{}");
  const auto to_full = [&](const std::string& arguments) {
    const std::string command = "'" + std::string(LLMDLQ_TOOL) + "' " + arguments + " </dev/null >/dev/full 2>'" +
                                (dir.path() / "err").string() + "'";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  CHECK(to_full("validate --schema " + schema + " " + document) == 3);
  CHECK(llmdlq::test::slurp(dir.path() / "err").find("cannot write standard output") != std::string::npos);
  CHECK(to_full("validate --help") == 3);
  CHECK(to_full("repair " + document) == 3);
  // A failure of its own keeps its code.
  CHECK(to_full("validate --schema " + dir.path().string() + "/missing.json " + document) == 2);
}

// Schemas that refer to each other by $id and by file name, from one directory,
// as a user keeps them; a draft-07 one among them keeps its own meaning.
TEST_CASE("validate --catalog: schemas in a directory refer to each other", "[tools][validate]") {
  temp_dir dir;
  std::filesystem::create_directories(dir.path() / "catalog" / "common");
  const std::string catalog = (dir.path() / "catalog").string();
  dir.write("catalog/address.json", R"({"$schema": "http://json-schema.org/draft-07/schema#",
    "$id": "https://schemas.example.com/address.json", "type": "object",
    "properties": {"city": {"type": "string"}}, "required": ["city"], "dependencies": {"zip": ["city"]}})");
  dir.write("catalog/common/money.json", R"({"type": "object", "required": ["amount", "currency"],
    "properties": {"amount": {"type": "number"}, "currency": {"pattern": "^[A-Z]{3}\\-?$"}}})");
  const auto schema = dir.write("order.json", R"({"type": "object", "properties": {
    "ship_to": {"$ref": "https://schemas.example.com/address.json"},
    "total": {"$ref": "common/money.json"}}})");
  const auto good = dir.write("good.json",
                              R"({"ship_to": {"city": "Utrecht"}, "total": {"amount": 3, "currency": "EUR"}})");
  const auto bad = dir.write("bad.json", R"({"ship_to": {}, "total": {"amount": "3", "currency": "EUR"}})");
  auto run = run_llmdlq("validate --schema " + schema + " --catalog " + catalog + " " + good + " " + bad);
  CHECK(run.exit_code == 1);
  CHECK(run.out.starts_with("{\"valid\":true,\"dialect\":\"draft2020-12\"}\n{\"valid\":false"));
  CHECK(run.out.find(R"("instance_path":"/ship_to","schema_path":"/properties/ship_to/$ref/required")") !=
        std::string::npos);
  CHECK(run.out.find(R"("instance_path":"/total/amount")") != std::string::npos);
  // Without the catalogue the reference cannot be resolved: a warning, and a failure where a document reaches it.
  run = run_llmdlq("validate --schema " + schema + " " + good);
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("warning: /properties/ship_to/$ref: cannot resolve") != std::string::npos);
  CHECK(run.err.find("https://schemas.example.com/address.json") != std::string::npos);
  run = run_llmdlq("validate --strict-references --schema " + schema + " " + good);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("https://schemas.example.com/address.json") != std::string::npos);
  run = run_llmdlq("validate --schema " + schema + " --catalog " + catalog + "-missing " + good);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--catalog wants a directory") != std::string::npos);
  // A pattern with `\-`: accepted as JavaScript reads it, refused in strict Unicode mode.
  run = run_llmdlq("validate --strict-patterns --schema " + schema + " --catalog " + catalog + " " + good);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("invalid regular expression") != std::string::npos);
}

TEST_CASE("validate --draft: a schema without $schema read as draft-07", "[tools][validate]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", R"({"items": [{"type": "integer"}], "additionalItems": false,
    "properties": {"n": {"$ref": "#/definitions/positive", "type": "string"}},
    "definitions": {"positive": {"type": "integer", "exclusiveMinimum": 0}}})");
  const auto doc = dir.write("doc.json", R"({"n": 3})");
  const auto list = dir.write("list.json", R"([1, 2])");
  auto run = run_llmdlq("validate --draft draft7 --schema " + schema + " " + doc + " " + list);
  CHECK(
      run.out ==
      "{\"valid\":true,\"dialect\":\"draft7\"}\n"
      R"v({"valid":false,"errors":[{"instance_path":"/1","schema_path":"/additionalItems","keyword":"additionalItems","message":"no item is allowed at index 1 (at most 1)"}],"dialect":"draft7"})v"
      "\n");
  // As 2020-12, `$ref` and its sibling both apply.
  run = run_llmdlq("validate --schema " + schema + " " + doc);
  CHECK(run.exit_code == 1);
  CHECK(run.out.find(R"("schema_path":"/properties/n/type")") != std::string::npos);
  run = run_llmdlq("validate --draft draft5 --schema " + schema + " " + doc);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--draft wants draft4") != std::string::npos);
}

}  // namespace validate_command_test
