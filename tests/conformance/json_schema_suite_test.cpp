// SPDX-License-Identifier: MIT
// JSON-Schema-Test-Suite, drafts 4, 6, 7, 2019-09 and 2020-12 (each folder
// compiled with its draft as the default): every case validated on
// simdjson's tape (the fast path), on simdjson elements and on Boost.JSON
// values, yes/no and collecting errors; all must agree with the suite and
// with each other.
#include <iomanip>
#include <iostream>
#include <set>

#include <boost/json.hpp>
#include <llmdlq/schema.hpp>

#include "catch.hpp"
#include "conformance/suite_files.hpp"

namespace json_schema_suite_test {

namespace fs = std::filesystem;

namespace {

struct tally {
  int passed = 0;
  int total = 0;
};

// The suite's remotes, served as http://localhost:1234/<path under remotes/>.
std::map<std::string, std::string, std::less<>> load_remotes(const fs::path& root) {
  std::map<std::string, std::string, std::less<>> remotes;
  for (const auto& entry : fs::recursive_directory_iterator(root / "remotes")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    const auto relative = fs::relative(entry.path(), root / "remotes").generic_string();
    remotes.emplace("http://localhost:1234/" + relative, llmdlq::test::read_file(entry.path()));
  }
  return remotes;
}

std::set<std::string> load_known_failures() {
  std::set<std::string> known;
  std::istringstream lines(llmdlq::test::read_file(fs::path(LLMDLQ_SOURCE_DIR) / "tests" / "conformance" /
                                                   "known-failures.txt"));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    known.insert(line.substr(0, line.find(" -- ")));
  }
  return known;
}

// Runs one suite file; returns the ids ("file :: case :: test") that failed.
std::vector<std::string> run_file(const fs::path& file, const std::string& name,
                                  const llmdlq::compile_options& options, tally& count) {
  std::vector<std::string> failures;
  const auto cases = boost::json::parse(llmdlq::test::read_file(file)).as_array();
  llmdlq::parse_options parse;
  parse.max_depth = 1024;
  llmdlq::json_parser parser(parse);
  for (const auto& test_case : cases) {
    const auto& c = test_case.as_object();
    const std::string case_name(c.at("description").as_string());
    const auto schema = llmdlq::schema::compile(c.at("schema"), options);
    for (const auto& test : c.at("tests").as_array()) {
      const auto& t = test.as_object();
      const std::string id = name + " :: " + case_name + " :: " + std::string(t.at("description").as_string());
      const bool expected = t.at("valid").as_bool();
      ++count.total;
      if (!schema) {
        failures.push_back(id + " (schema did not compile: " + schema.error().message + " at " +
                           schema.error().location + ")");
        continue;
      }
      const auto& data = t.at("data");
      const std::string text = boost::json::serialize(data);
      const auto doc = parser.parse(text);
      INFO(id);
      REQUIRE(doc.has_value());
      const bool fast = schema->is_valid(*doc);
      const bool element = schema->is_valid(doc->root());
      const bool dom = schema->is_valid(data);
      const auto errors = schema->validate(*doc);
      // The six ways of validating (tape, simdjson element or Boost.JSON
      // value; yes/no or collecting) are one contract.
      CHECK(fast == element);
      CHECK(fast == dom);
      CHECK(errors.empty() == fast);
      CHECK(errors == schema->validate(doc->root()));
      CHECK(errors == schema->validate(data));
      if (fast == expected) {
        ++count.passed;
      } else {
        failures.push_back(id);
      }
    }
  }
  return failures;
}

void print(const std::string& name, const tally& t) {
  std::cout << "  " << std::left << std::setw(56) << name << std::right << std::setw(4) << t.passed
            << "/" << t.total << (t.passed == t.total ? "" : "  <-") << "\n";
}

// Every required file of one draft's folder: all must pass but the known failures.
void run_required(const std::string& folder, llmdlq::dialect draft) {
  LLMDLQ_SUITE_OR_SKIP(root, "json-schema-test-suite");
  llmdlq::compile_options options;
  options.remotes = load_remotes(root);
  options.default_dialect = draft;
  const auto known = load_known_failures();

  tally all;
  std::vector<std::string> unexpected;
  std::cout << "JSON-Schema-Test-Suite " << folder << " (required):\n";
  for (const auto& file : llmdlq::test::json_files_in(root / "tests" / folder)) {
    const std::string name = folder + "/" + file.filename().string();
    tally t;
    for (const auto& failure : run_file(file, name, options, t)) {
      if (!known.count(failure)) unexpected.push_back(failure);
    }
    print(name, t);
    all.passed += t.passed;
    all.total += t.total;
  }
  print("total", all);
  for (const auto& failure : unexpected) std::cout << "  FAILED " << failure << "\n";
  CHECK(unexpected.empty());
  CHECK(all.total > 400);
}

// One draft's optional files, reported (format asserted in optional/format).
void run_optional(const std::string& folder, llmdlq::dialect draft) {
  LLMDLQ_SUITE_OR_SKIP(root, "json-schema-test-suite");
  llmdlq::compile_options options;
  options.remotes = load_remotes(root);
  options.default_dialect = draft;
  const auto optional = root / "tests" / folder / "optional";
  tally all;
  std::vector<std::string> failed;
  std::cout << "JSON-Schema-Test-Suite " << folder << " (optional, reported):\n";
  for (const auto& [dir, assert_format] : {std::pair{optional, false}, std::pair{optional / "format", true}}) {
    options.format_assertion = assert_format;
    for (const auto& file : llmdlq::test::json_files_in(dir)) {
      const std::string name = folder + "/" + fs::relative(file, optional.parent_path()).generic_string();
      tally t;
      for (auto& failure : run_file(file, name, options, t)) failed.push_back(std::move(failure));
      print(name, t);
      all.passed += t.passed;
      all.total += t.total;
    }
  }
  print("total", all);
  for (const auto& failure : failed) std::cout << "  not passed: " << failure << "\n";
}

}  // namespace

TEST_CASE("JSON-Schema-Test-Suite draft4: required files pass", "[conformance][json-schema]") {
  run_required("draft4", llmdlq::dialect::draft4);
}
TEST_CASE("JSON-Schema-Test-Suite draft6: required files pass", "[conformance][json-schema]") {
  run_required("draft6", llmdlq::dialect::draft6);
}
TEST_CASE("JSON-Schema-Test-Suite draft7: required files pass", "[conformance][json-schema]") {
  run_required("draft7", llmdlq::dialect::draft7);
}
TEST_CASE("JSON-Schema-Test-Suite draft2019-09: required files pass", "[conformance][json-schema]") {
  run_required("draft2019-09", llmdlq::dialect::draft2019_09);
}
TEST_CASE("JSON-Schema-Test-Suite draft2020-12: required files pass", "[conformance][json-schema]") {
  run_required("draft2020-12", llmdlq::dialect::draft2020_12);
}

TEST_CASE("JSON-Schema-Test-Suite: optional files of every draft (format asserted in optional/format)",
          "[conformance][json-schema]") {
  run_optional("draft4", llmdlq::dialect::draft4);
  run_optional("draft6", llmdlq::dialect::draft6);
  run_optional("draft7", llmdlq::dialect::draft7);
  run_optional("draft2019-09", llmdlq::dialect::draft2019_09);
  run_optional("draft2020-12", llmdlq::dialect::draft2020_12);
}

}  // namespace json_schema_suite_test
