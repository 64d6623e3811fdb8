// SPDX-License-Identifier: MIT
// Test cases that misuse LLMDLQ_SKIP, each a planted failure a skip could
// hide; skip_rule_check.cmake runs them one by one and requires each to fail
// (or, the last two, to skip and to pass). Not registered as tests of their own.
#include <string>

#include "catch.hpp"
#include "support/skip.hpp"

namespace planted_skips {

TEST_CASE("a failed assertion, then a skip") {
  CHECK(1 + 1 == 3);
  LLMDLQ_SKIP("planted");  // check-tests: allow skip-after-assertion planted
}

TEST_CASE("a passed assertion, then a skip") {
  CHECK(1 + 1 == 2);
  LLMDLQ_SKIP("planted");  // check-tests: allow skip-after-assertion planted
}

TEST_CASE("a skip in one section, a failed assertion in another") {
  SECTION("needs the device") { LLMDLQ_SKIP("planted"); }  // check-tests: allow skip-in-section planted
  SECTION("needs nothing") { CHECK(std::string("a") == "b"); }
}

TEST_CASE("a failed assertion in one generated case, a skip in the next") {
  const int round = GENERATE(1, 2);
  if (round == 2) LLMDLQ_SKIP("planted");  // check-tests: allow skip-in-section planted
  CHECK(round == 0);
}

namespace {
struct fixture {
  fixture() { LLMDLQ_SKIP("planted"); }  // check-tests: allow skip-in-fixture planted; returns from the constructor only
};
}  // namespace

TEST_CASE("a skip in a fixture's constructor, and the test going on") {
  const fixture f;
  CHECK(false);
}

TEST_CASE("a skip before any assertion") {
  LLMDLQ_SKIP("planted");
  CHECK(false);  // never reached
}

TEST_CASE("no skip") { CHECK(true); }

}  // namespace planted_skips
