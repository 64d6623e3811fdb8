// SPDX-License-Identifier: MIT
// Ends a test case that cannot run here (its data, server or device is
// missing): the test program then exits 77, which ctest reports Skipped.
// A skip may come only before the test case's first assertion, so that it
// can never hide one: tests/main.cpp counts the assertions, fails a skip
// that follows one, and fails an assertion that follows a skip.
#pragma once

#include <cstddef>
#include <cstdio>
#include <sstream>
#include <string>

#include "catch.hpp"

namespace llmdlq::test {

/// What the running test case has done, as tests/main.cpp's listener saw it.
struct test_case_record {
  std::size_t assertions = 0;  // assertions ended, not counting INFO or WARN
  int open_sections = 0;       // SECTIONs entered and not left, the test case's own not counted
  bool skipped = false;
  std::string skip_reason;
  std::size_t assertions_after_skip = 0;
};

inline test_case_record& running_test_case() {
  static test_case_record record;
  return record;
}

/// Why the running test case may not skip now: it has asserted, or it is
/// inside a SECTION, which Catch would then take for its last; empty if it may.
inline std::string skip_refusal() {
  const auto& record = running_test_case();
  if (record.assertions > 0) return std::to_string(record.assertions) + " assertions before it would be hidden";
  if (record.open_sections > 0) return "inside a SECTION it would hide the sections after it";
  return {};
}

/// Marks the running test case skipped and says why; false, marking
/// nothing, where skip_refusal() says it may not.
inline bool mark_skipped(const std::string& reason) {
  auto& record = running_test_case();
  if (!skip_refusal().empty()) return false;
  if (!record.skipped) std::printf("skipped: %s\n", reason.c_str());
  record.skipped = true;
  record.skip_reason = reason;
  return true;
}

}  // namespace llmdlq::test

// Refuses a skip where skip_refusal() says no, else marks it and ends the
// test case with `end`.
#define LLMDLQ_SKIP_THEN_(reason, end)                                                                        \
  do {                                                                                                        \
    std::ostringstream llmdlq_skip_reason_;                                                                   \
    llmdlq_skip_reason_ << reason;                                                                            \
    if (!::llmdlq::test::mark_skipped(llmdlq_skip_reason_.str()))                                             \
      FAIL("a skip here is refused (" << ::llmdlq::test::skip_refusal() << "): " << llmdlq_skip_reason_.str()); \
    end;                                                                                                      \
  } while (false)

/// Reports the current test case skipped, saying why, and returns from it:
/// only at the top of a TEST_CASE, before its first assertion, and only for
/// what a machine may lack. A test whose subject is broken fails.
#if CATCH_VERSION_MAJOR >= 3
#  define LLMDLQ_SKIP(reason) LLMDLQ_SKIP_THEN_(reason, SKIP(llmdlq_skip_reason_.str()))
#else
#  define LLMDLQ_SKIP(reason) LLMDLQ_SKIP_THEN_(reason, return)
#endif
