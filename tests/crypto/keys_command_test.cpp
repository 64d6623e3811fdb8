// SPDX-License-Identifier: MIT
// `llmdlq keys` on key directories that are not what they seem: a key file
// that is a symbolic link, a directory another user owns.
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

namespace keys_command_test {

using llmdlq::file_key_provider;
using llmdlq::test::run_llmdlq;
using llmdlq::test::slurp;

TEST_CASE("llmdlq keys shred refuses a key that is a symbolic link, and leaves the key bytes and the link",
          "[crypto][keys]") {
  llmdlq::test::temp_dir scratch;
  const auto keys = scratch.path() / "keys";
  REQUIRE(file_key_provider::generate(keys, "k1"));
  REQUIRE(file_key_provider::generate(keys, "k2", false));
  // The key lives elsewhere; the directory holds a link to it.
  const auto elsewhere = scratch.path() / "k2.key";
  std::filesystem::rename(keys / "k2.key", elsewhere);
  std::filesystem::create_symlink(elsewhere, keys / "k2.key");
  const std::string bytes = slurp(elsewhere);

  const auto run = run_llmdlq("keys shred k2 --keys " + keys.string());
  INFO(run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.err.find((keys / "k2.key").string() + " is a symbolic link") != std::string::npos);
  CHECK(std::filesystem::is_symlink(keys / "k2.key"));
  CHECK(slurp(elsewhere) == bytes);
  CHECK(bytes.find_first_not_of('\0') != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(keys / "k2.shredded"));
  // Without the link, the key itself is shredded.
  std::filesystem::remove(keys / "k2.key");
  std::filesystem::rename(elsewhere, keys / "k2.key");
  const auto shredded = run_llmdlq("keys shred k2 --keys " + keys.string());
  INFO(shredded.err);
  CHECK(shredded.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(keys / "k2.key"));
  CHECK(std::filesystem::exists(keys / "k2.shredded"));
}

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

}  // namespace keys_command_test
