// SPDX-License-Identifier: MIT
// The catalogue-shaped benchmark cases (benchmarks/catalog_cases.hpp): every
// schema compiles, every instance gets the verdict the generator built it
// for on both text paths, each case holds the counts it claims, and the same
// build generates the same bytes. A peer's verdicts are compared with these,
// so a generator that drifted would make the comparison meaningless.
#include <cstddef>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <llmdlq/json_parser.hpp>
#include <llmdlq/schema.hpp>

#include "../../benchmarks/catalog_cases.hpp"
#include "catch.hpp"

namespace catalog_cases_test {

std::string receipt_schema_text() {
  std::ifstream in(LLMDLQ_SOURCE_DIR "/examples/data/receipt.schema.json");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("catalog cases: every schema compiles and every verdict is the generator's", "[catalog]") {
  const std::string receipt = receipt_schema_text();
  REQUIRE(!receipt.empty());
  const auto cases = llmdlq_bench::catalog::make_cases(receipt);
  REQUIRE(cases.size() == 9);
  std::set<std::string> dialects, names;
  llmdlq::json_parser parser;
  for (const auto& c : cases) {
    INFO("case " << c.name);
    names.insert(c.name);
    dialects.insert(c.dialect);
    CHECK(c.schema.find(c.dialect == "draft-07" ? "draft-07/schema" : "draft/2020-12/schema") != std::string::npos);
    // Many instances, mostly valid, some not.
    CHECK(c.instances.size() >= 200);
    CHECK(c.expected_invalid > 0);
    CHECK(c.expected_valid > 4 * c.expected_invalid);
    CHECK(c.expected_valid + c.expected_invalid == c.instances.size());

    auto schema = llmdlq::schema::compile(c.schema);
    REQUIRE(schema);
    std::size_t claimed_valid = 0, accepted = 0, accepted_text = 0, wrong = 0;
    for (const auto& inst : c.instances) {
      claimed_valid += inst.valid ? 1 : 0;
      auto doc = parser.parse(inst.text);
      REQUIRE(doc);
      const bool tape = schema->is_valid(*doc);
      const bool text = schema->is_valid_text(inst.text);
      accepted += tape ? 1 : 0;
      accepted_text += text ? 1 : 0;
      if (tape != inst.valid || text != inst.valid) {
        if (++wrong <= 3) UNSCOPED_INFO("wrong verdict on " << inst.text.substr(0, 300));
      }
    }
    CHECK(wrong == 0);
    CHECK(claimed_valid == c.expected_valid);
    CHECK(accepted == c.expected_valid);
    CHECK(accepted_text == c.expected_valid);
  }
  CHECK(names.size() == cases.size());
  CHECK(dialects == std::set<std::string>{"draft-07", "2020-12"});
}

TEST_CASE("catalog cases: the same bytes every time", "[catalog]") {
  const std::string receipt = receipt_schema_text();
  const auto a = llmdlq_bench::catalog::make_cases(receipt);
  const auto b = llmdlq_bench::catalog::make_cases(receipt);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("case " << a[i].name);
    CHECK(a[i].schema == b[i].schema);
    REQUIRE(a[i].instances.size() == b[i].instances.size());
    std::size_t differ = 0;
    for (std::size_t j = 0; j < a[i].instances.size(); ++j) {
      differ += a[i].instances[j].text != b[i].instances[j].text ? 1 : 0;
    }
    CHECK(differ == 0);
  }
}

}  // namespace catalog_cases_test
