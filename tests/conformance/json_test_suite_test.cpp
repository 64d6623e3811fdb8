// SPDX-License-Identifier: MIT
// JSONTestSuite: every y_ case must parse and every n_ case must be rejected,
// by the simdjson fast path and by the Boost.JSON path alike.
#include <iostream>

#include <llmdlq/json_parser.hpp>

#include "catch.hpp"
#include "conformance/suite_files.hpp"

namespace json_test_suite_test {

TEST_CASE("JSONTestSuite test_parsing: y_ accepted, n_ rejected, i_ never crash",
          "[conformance][json-test-suite]") {
  LLMDLQ_SUITE_OR_SKIP(suite, "json-test-suite/test_parsing");
  llmdlq::parse_options options;
  options.max_depth = 1024;  // n_structure_100000_opening_arrays must fail on syntax, not depth
  llmdlq::json_parser parser(options);

  int y_total = 0, y_passed = 0, n_total = 0, n_passed = 0, i_accepted = 0, i_total = 0;
  for (const auto& file : llmdlq::test::json_files_in(suite)) {
    const std::string name = file.filename().string();
    const std::string text = llmdlq::test::read_file(file);
    const auto fast = parser.parse(text);
    const auto dom = llmdlq::parse_value(text, options);
    INFO(name);
    // The two paths are one contract: they must agree on every input.
    CHECK(fast.has_value() == dom.has_value());
    if (!fast) {
      // A rejected document always gets a position inside (or just past) it.
      CHECK(fast.error().offset <= text.size());
      CHECK(!fast.error().message.empty());
    }
    switch (name[0]) {
      case 'y':
        ++y_total;
        y_passed += fast.has_value();
        CHECK(fast.has_value());
        break;
      case 'n':
        ++n_total;
        n_passed += !fast.has_value();
        CHECK_FALSE(fast.has_value());
        break;
      default:
        ++i_total;
        i_accepted += fast.has_value();
        break;
    }
  }
  std::cout << "JSONTestSuite y_ accepted: " << y_passed << "/" << y_total << "\n"
            << "JSONTestSuite n_ rejected: " << n_passed << "/" << n_total << "\n"
            << "JSONTestSuite i_ accepted: " << i_accepted << "/" << i_total
            << " (implementation-defined cases: reported, not judged)\n";
  CHECK(y_total > 0);
  CHECK(n_total > 0);
}

}  // namespace json_test_suite_test
