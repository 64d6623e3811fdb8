// SPDX-License-Identifier: MIT
// `llmdlq keys` on key directories that are not what they seem: a directory
// another user owns.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "llmdlq/crypto/file_key_provider.hpp"
#include "support/other_user.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

using llmdlq::file_key_provider;
using llmdlq::test::run_llmdlq;

TEST_CASE("llmdlq keys, run by root, refuses a key directory nobody owns", "[crypto][keys][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  llmdlq::test::temp_dir scratch;
  REQUIRE(::chmod(scratch.path().c_str(), 0755) == 0);
  const auto keys = scratch.path() / "keys";
  REQUIRE(file_key_provider::generate(keys, "k1"));
  llmdlq::test::give_to(nobody, keys);
  // nobody, who owns the directory, makes a key of their own current.
  const auto theirs = llmdlq::test::run_llmdlq_reading("keys generate theirs --keys " + keys.string(), "/dev/null",
                                                       llmdlq::test::launcher_as(nobody));
  INFO(theirs.err);
  REQUIRE(theirs.exit_code == 0);

  for (const std::string action : {"list", "generate k2", "use k1", "shred k1"}) {
    CAPTURE(action);
    const auto run = run_llmdlq("keys " + action + " --keys " + keys.string());
    INFO(run.err);
    CHECK(run.exit_code == 1);
    CHECK(run.err.find(keys.string() + " belongs to " + llmdlq::test::named(nobody) + ", mode 0700") !=
          std::string::npos);
  }
  CHECK(std::filesystem::exists(keys / "k1.key"));
  CHECK_FALSE(std::filesystem::exists(keys / "k2.key"));
}
