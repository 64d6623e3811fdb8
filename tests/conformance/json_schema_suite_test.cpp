// SPDX-License-Identifier: MIT
// JSON-Schema-Test-Suite, drafts 4, 6, 7, 2019-09 and 2020-12 (each folder
// compiled with its draft as the default): every case validated on
// simdjson's tape (the fast path), on simdjson elements and on Boost.JSON
// values, yes/no and collecting errors; all must agree with the suite and
// with each other.
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

// The ids ("file :: case :: test") listed in tests/conformance/<list> whose
// file lies in `folder` (e.g. "draft7/" or "draft7/optional/").
std::set<std::string> load_known_failures(const std::string& list, const std::string& folder) {
  std::set<std::string> known;
  std::istringstream lines(llmdlq::test::read_file(fs::path(LLMDLQ_SOURCE_DIR) / "tests" / "conformance" / list));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::string id = line.substr(0, line.find(" -- "));
    if (id.starts_with(folder)) known.insert(std::move(id));
  }
  return known;
}

// The known failures that no longer fail: their lines must go, or they
// would hide a case that breaks again.
std::vector<std::string> passing(const std::set<std::string>& known, const std::set<std::string>& failed) {
  std::vector<std::string> stale;
  for (const auto& id : known) {
    if (!failed.count(id)) stale.push_back(id);
  }
  return stale;
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

// Compares one run with its list of known failures, and its count of cases
// with the fewest it must have run (a folder that lost files fails).
void judge(const std::vector<std::string>& failures, const std::set<std::string>& known, const tally& all,
           int minimum, const std::string& list) {
  std::set<std::string> failed;
  std::vector<std::string> unexpected;
  for (const auto& failure : failures) {
    failed.insert(failure);
    if (!known.count(failure)) unexpected.push_back(failure);
  }
  const auto stale = passing(known, failed);
  for (const auto& failure : unexpected) std::cout << "  FAILED " << failure << "\n";
  for (const auto& id : stale) std::cout << "  PASSED, but listed in " << list << ": " << id << "\n";
  CHECK(unexpected.empty());
  CHECK(stale.empty());
  CHECK(all.total >= minimum);
  CHECK(all.passed + static_cast<int>(failed.size()) == all.total);  // one case per id: a line names one case
}

// Every required file of one draft's folder: all must pass but the known failures.
void run_required(const std::string& folder, llmdlq::dialect draft, int minimum) {
  LLMDLQ_SUITE_OR_SKIP(root, "json-schema-test-suite");
  llmdlq::compile_options options;
  options.remotes = load_remotes(root);
  options.default_dialect = draft;
  const auto known = load_known_failures("known-failures.txt", folder + "/");

  tally all;
  std::vector<std::string> failures;
  std::cout << "JSON-Schema-Test-Suite " << folder << " (required):\n";
  for (const auto& file : llmdlq::test::json_files_in(root / "tests" / folder)) {
    const std::string name = folder + "/" + file.filename().string();
    tally t;
    for (auto& failure : run_file(file, name, options, t)) failures.push_back(std::move(failure));
    print(name, t);
    all.passed += t.passed;
    all.total += t.total;
  }
  print("total", all);
  judge(failures, known, all, minimum, "known-failures.txt");
}

// One draft's optional files (optional/format with format assertion on):
// all must pass but the known failures of known-failures-optional.txt.
void run_optional(const std::string& folder, llmdlq::dialect draft, int minimum) {
  LLMDLQ_SUITE_OR_SKIP(root, "json-schema-test-suite");
  llmdlq::compile_options options;
  options.remotes = load_remotes(root);
  options.default_dialect = draft;
  const auto known = load_known_failures("known-failures-optional.txt", folder + "/optional/");
  const auto optional = root / "tests" / folder / "optional";
  tally all;
  std::vector<std::string> failures;
  std::cout << "JSON-Schema-Test-Suite " << folder << " (optional):\n";
  for (const auto& [dir, assert_format] : {std::pair{optional, false}, std::pair{optional / "format", true}}) {
    options.format_assertion = assert_format;
    for (const auto& file : llmdlq::test::json_files_in(dir)) {
      const std::string name = folder + "/" + fs::relative(file, optional.parent_path()).generic_string();
      tally t;
      for (auto& failure : run_file(file, name, options, t)) failures.push_back(std::move(failure));
      print(name, t);
      all.passed += t.passed;
      all.total += t.total;
    }
  }
  print("total", all);
  judge(failures, known, all, minimum, "known-failures-optional.txt");
}

}  // namespace

// The fewest cases each folder must run: the suite's counts today.
TEST_CASE("JSON-Schema-Test-Suite draft4: required files pass", "[conformance][json-schema]") {
  run_required("draft4", llmdlq::dialect::draft4, 618);
}
TEST_CASE("JSON-Schema-Test-Suite draft6: required files pass", "[conformance][json-schema]") {
  run_required("draft6", llmdlq::dialect::draft6, 839);
}
TEST_CASE("JSON-Schema-Test-Suite draft7: required files pass", "[conformance][json-schema]") {
  run_required("draft7", llmdlq::dialect::draft7, 927);
}
TEST_CASE("JSON-Schema-Test-Suite draft2019-09: required files pass", "[conformance][json-schema]") {
  run_required("draft2019-09", llmdlq::dialect::draft2019_09, 1259);
}
TEST_CASE("JSON-Schema-Test-Suite draft2020-12: required files pass", "[conformance][json-schema]") {
  run_required("draft2020-12", llmdlq::dialect::draft2020_12, 1299);
}

TEST_CASE("JSON-Schema-Test-Suite draft4: optional files pass but the known failures", "[conformance][json-schema]") {
  run_optional("draft4", llmdlq::dialect::draft4, 319);
}
TEST_CASE("JSON-Schema-Test-Suite draft6: optional files pass but the known failures", "[conformance][json-schema]") {
  run_optional("draft6", llmdlq::dialect::draft6, 431);
}
TEST_CASE("JSON-Schema-Test-Suite draft7: optional files pass but the known failures", "[conformance][json-schema]") {
  run_optional("draft7", llmdlq::dialect::draft7, 794);
}
TEST_CASE("JSON-Schema-Test-Suite draft2019-09: optional files pass but the known failures",
          "[conformance][json-schema]") {
  run_optional("draft2019-09", llmdlq::dialect::draft2019_09, 915);
}
TEST_CASE("JSON-Schema-Test-Suite draft2020-12: optional files pass but the known failures",
          "[conformance][json-schema]") {
  run_optional("draft2020-12", llmdlq::dialect::draft2020_12, 926);
}

}  // namespace json_schema_suite_test
