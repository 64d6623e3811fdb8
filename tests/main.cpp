// SPDX-License-Identifier: MIT
// The Catch2 test runner shared by every test binary. It exits 77 (ctest's
// SKIP_RETURN_CODE) when every test case it ran was skipped with
// LLMDLQ_SKIP, and fails a run in which a test case asserted anything after
// its skip: a skip never hides an assertion (support/skip.hpp).
#define CATCH_CONFIG_RUNNER
#include "catch.hpp"

#include <cstddef>
#include <cstdio>
#include <string>

#include "support/skip.hpp"

namespace {

#if CATCH_VERSION_MAJOR >= 3
using listener_base = Catch::EventListenerBase;
#else
using listener_base = Catch::TestEventListenerBase;
#endif

struct run_totals {
  std::size_t ran = 0;
  std::size_t skipped = 0;
  std::size_t asserted_after_skip = 0;
};
run_totals totals;

class skip_guard final : public listener_base {
 public:
  using listener_base::listener_base;

  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    llmdlq::test::running_test_case() = {};
    llmdlq::test::running_test_case().open_sections = -1;  // the test case is a section of its own
    name_ = info.name;
    listener_base::testCaseStarting(info);
  }

  void sectionStarting(const Catch::SectionInfo& info) override {
    ++llmdlq::test::running_test_case().open_sections;
    listener_base::sectionStarting(info);
  }
  void sectionEnded(const Catch::SectionStats& stats) override {
    --llmdlq::test::running_test_case().open_sections;
    listener_base::sectionEnded(stats);
  }

#if CATCH_VERSION_MAJOR >= 3
  void assertionEnded(const Catch::AssertionStats& stats) override { count(stats); }
#else
  bool assertionEnded(const Catch::AssertionStats& stats) override {
    count(stats);
    return true;
  }
#endif

  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    const auto& record = llmdlq::test::running_test_case();
    if (!record.skipped) {
      ++totals.ran;
    } else if (record.assertions_after_skip == 0) {
      ++totals.skipped;
    } else {
      ++totals.asserted_after_skip;
      std::fprintf(stderr, "error: \"%s\" was skipped (%s), then made %zu assertions the skip would hide\n",
                   name_.c_str(), record.skip_reason.c_str(), record.assertions_after_skip);
    }
    listener_base::testCaseEnded(stats);
  }

 private:
  std::string name_;

  static void count(const Catch::AssertionStats& stats) {
    const auto type = stats.assertionResult.getResultType();
    if (type == Catch::ResultWas::Info || type == Catch::ResultWas::Warning) return;
#if CATCH_VERSION_MAJOR >= 3
    if (type == Catch::ResultWas::ExplicitSkip) return;
#endif
    auto& record = llmdlq::test::running_test_case();
    ++(record.skipped ? record.assertions_after_skip : record.assertions);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(skip_guard)

int main(int argc, char* argv[]) {
  const int failed = Catch::Session().run(argc, argv);
#if CATCH_VERSION_MAJOR >= 3
  // Catch2 v3 ends a run whose every test case was skipped with 4.
  if (failed == 4 && totals.asserted_after_skip == 0 && totals.skipped > 0 && totals.ran == 0) return 77;
#endif
  if (failed != 0) return failed;
  if (totals.asserted_after_skip > 0) return 1;
  if (totals.skipped > 0 && totals.ran == 0) return 77;
  return 0;
}
