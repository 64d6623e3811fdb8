// SPDX-License-Identifier: MIT
// The forward pass (validation while parsing, schema::is_valid_text) held
// to the tape evaluator on texts written elsewhere: every instance of every
// draft's suite, compact and spread over lines, each also with one value
// changed; and every JSONTestSuite parsing case, whose verdict must be the
// parser's. When the pass decides, it decides as the tape evaluator does;
// is_valid_text always does.
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <llmdlq/detail/schema/schema_access.hpp>
#include <llmdlq/detail/schema/forward_evaluator.hpp>
#include <llmdlq/json_parser.hpp>
#include <llmdlq/schema.hpp>

#include "catch.hpp"
#include "conformance/suite_files.hpp"

namespace forward_pass_test {

namespace fs = std::filesystem;
using llmdlq::detail::forward_verdict;

struct tally {
  std::uint64_t texts = 0, valid = 0, invalid = 0, undecided = 0;
};

// The text with a space, a newline or a tab after every structural
// character outside strings: the pass must skip whitespace where JSON allows it.
std::string spread(const std::string& compact) {
  static constexpr const char* fillers[] = {" ", "\n  ", "\t", "\r\n"};
  std::string out;
  bool in_string = false;
  std::size_t turn = 0;
  for (std::size_t i = 0; i < compact.size(); ++i) {
    const char c = compact[i];
    out += c;
    if (in_string) {
      if (c == '\\') {
        out += compact[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[' || c == ',' || c == ':' || c == '}' || c == ']') {
      out += fillers[turn++ % 4];
    }
  }
  return out;
}

// One value of the instance changed: its first scalar (depth first) replaced
// by a value of another type, so that nearly valid texts are judged too.
bool change_first_scalar(boost::json::value& v) {
  if (v.is_object()) {
    for (auto& member : v.as_object()) {
      if (change_first_scalar(member.value())) return true;
    }
    return false;
  }
  if (v.is_array()) {
    for (auto& element : v.as_array()) {
      if (change_first_scalar(element)) return true;
    }
    return false;
  }
  if (v.is_string()) {
    v = 7;
  } else if (v.is_number()) {
    v = "7";
  } else {
    v = v.is_null() ? boost::json::value(1.5) : boost::json::value(nullptr);
  }
  return true;
}

// The pass's verdict on `text` against the tape evaluator's, and is_valid_text's.
void judge(const llmdlq::schema& schema, const std::string& text, const std::string& where, tally& count) {
  llmdlq::json_parser parser;
  auto doc = parser.parse(text);
  REQUIRE(doc);
  const bool tape = schema.is_valid(*doc);
  const auto verdict =
      llmdlq::detail::judge_text(llmdlq::detail::schema_access::of(schema), text, false, std::nullopt, {});
  ++count.texts;
  switch (verdict) {
    case forward_verdict::valid: ++count.valid; break;
    case forward_verdict::invalid: ++count.invalid; break;
    case forward_verdict::undecided: ++count.undecided; break;
  }
  if (verdict != forward_verdict::undecided && (verdict == forward_verdict::valid) != tape) {
    FAIL_CHECK(where << ": the forward pass says " << (tape ? "invalid" : "valid") << ", the tape evaluator "
                     << (tape ? "valid" : "invalid") << ": " << text);
  }
  if (schema.is_valid_text(text) != tape) FAIL_CHECK(where << ": is_valid_text differs: " << text);
}

std::map<std::string, std::string, std::less<>> load_remotes(const fs::path& root) {
  std::map<std::string, std::string, std::less<>> remotes;
  for (const auto& entry : fs::recursive_directory_iterator(root / "remotes")) {
    if (!entry.is_regular_file()) continue;
    const auto relative = fs::relative(entry.path(), root / "remotes").generic_string();
    remotes.emplace("http://localhost:1234/" + relative, llmdlq::test::read_file(entry.path()));
  }
  return remotes;
}

void run_folder(const fs::path& root, const fs::path& folder, llmdlq::compile_options options, tally& count) {
  if (!fs::is_directory(folder)) return;
  for (const auto& file : llmdlq::test::json_files_in(folder)) {
    const auto cases = boost::json::parse(llmdlq::test::read_file(file)).as_array();
    for (const auto& test_case : cases) {
      const auto& c = test_case.as_object();
      auto schema = llmdlq::schema::compile(c.at("schema"), options);
      if (!schema) continue;  // what the compiler rejects is the conformance test's to judge
      for (const auto& test : c.at("tests").as_array()) {
        const auto& data = test.as_object().at("data");
        const std::string where = fs::relative(file, root).generic_string();
        const std::string compact = boost::json::serialize(data);
        judge(*schema, compact, where, count);
        judge(*schema, spread(compact), where + " (spread)", count);
        boost::json::value changed = data;
        if (change_first_scalar(changed)) judge(*schema, boost::json::serialize(changed), where + " (changed)", count);
      }
    }
  }
}

TEST_CASE("forward pass: every suite instance, as written, spread and changed, judged as the tape evaluator does",
          "[conformance][json-schema][forward]") {
  LLMDLQ_SUITE_OR_SKIP(root, "json-schema-test-suite");
  const std::pair<const char*, llmdlq::dialect> drafts[] = {
      {"draft4", llmdlq::dialect::draft4},           {"draft6", llmdlq::dialect::draft6},
      {"draft7", llmdlq::dialect::draft7},           {"draft2019-09", llmdlq::dialect::draft2019_09},
      {"draft2020-12", llmdlq::dialect::draft2020_12}};
  tally count;
  for (const auto& [folder, draft] : drafts) {
    llmdlq::compile_options options;
    options.remotes = load_remotes(root);
    options.default_dialect = draft;
    run_folder(root, root / "tests" / folder, options, count);
    run_folder(root, root / "tests" / folder / "optional", options, count);
    options.format_assertion = true;
    run_folder(root, root / "tests" / folder / "optional" / "format", options, count);
  }
  std::cout << "forward pass: " << count.texts << " texts judged, " << count.valid << " valid and " << count.invalid
            << " invalid by the pass, " << count.undecided << " left to the tape evaluator\n";
  CHECK(count.texts > 10000);
  CHECK(count.valid + count.invalid > count.texts / 2);  // the pass decides most of them
}

TEST_CASE("forward pass: every JSONTestSuite parsing case gets the parser's verdict",
          "[conformance][json][forward]") {
  LLMDLQ_SUITE_OR_SKIP(dir, "json-test-suite/test_parsing");
  const auto any = llmdlq::schema::compile(R"({"type": ["object", "array", "string", "number", "boolean", "null"]})");
  REQUIRE(any);
  const auto& prog = llmdlq::detail::schema_access::of(*any);
  std::uint64_t files = 0, decided = 0;
  for (const auto& file : llmdlq::test::json_files_in(dir)) {
    const std::string text = llmdlq::test::read_file(file);
    const bool parses = llmdlq::json_parser().accepts(text);
    const auto verdict = llmdlq::detail::judge_text(prog, text, false, std::nullopt, {});
    ++files;
    decided += verdict != forward_verdict::undecided;
    INFO(file.filename().string());
    CHECK(verdict != forward_verdict::invalid);  // every JSON text is valid against this schema
    if (verdict == forward_verdict::valid) CHECK(parses);
    CHECK(any->is_valid_text(text) == parses);
  }
  std::cout << "forward pass: " << files << " JSONTestSuite parsing cases, " << decided << " read to a verdict\n";
  CHECK(files > 300);
}

}  // namespace forward_pass_test
