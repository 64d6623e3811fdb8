// SPDX-License-Identifier: MIT
// `llmdlq keys` on key directories that are not what they seem: a key file
// that is a symbolic link, a directory another user owns, a key directory
// that is a link or is reached through one, and one swapped while it runs.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

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

namespace {

// A world-writable sticky directory, as /tmp is, inside a scratch folder:
// root's key directories and nobody's files side by side.
struct shared_directory {
  llmdlq::test::temp_dir scratch;
  std::filesystem::path d = scratch.path() / "D";
  shared_directory() {
    std::filesystem::create_directory(d);
    REQUIRE(::chmod(d.c_str(), 01777) == 0);
  }
};

// A directory of nobody's, 0777, at `path`.
void make_nobodys_directory(const llmdlq::test::other_user& nobody, const std::filesystem::path& path) {
  std::filesystem::create_directory(path);
  REQUIRE(::chmod(path.c_str(), 0777) == 0);
  llmdlq::test::give_to(nobody, path);
}

// A symbolic link at `link` to `target`, owned by `owner`.
void make_link(const llmdlq::test::other_user& owner, const std::filesystem::path& target,
               const std::filesystem::path& link) {
  std::filesystem::create_symlink(target, link);
  llmdlq::test::give_to(owner, link);
}

// Every `*.key` file under `directory`, however deep.
std::vector<std::string> key_files_under(const std::filesystem::path& directory) {
  std::vector<std::string> found;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(directory, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->path().extension() == ".key" && !it->is_symlink()) found.push_back(it->path().string());
  }
  return found;
}

const llmdlq::test::other_user root_user{0, 0, "root"};

}  // namespace

TEST_CASE("llmdlq keys, run by root, refuses a key directory that is a symbolic link, whoever owns the link",
          "[crypto][keys][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  shared_directory shared;
  const auto real = shared.d / "real";
  REQUIRE(file_key_provider::generate(real, "k0"));  // root's, 0700: a key directory that passes every check
  const auto owner = GENERATE_COPY(nobody, root_user);
  CAPTURE(owner.name);
  const auto k1 = shared.d / "k1";
  make_link(owner, real, k1);

  for (const std::string action : {"generate kA", "list", "use k0", "shred k0"}) {
    CAPTURE(action);
    const auto run = run_llmdlq("keys " + action + " --keys " + k1.string());
    INFO(run.err);
    CHECK(run.exit_code == 1);
    CHECK(run.err.find(k1.string() + " is a symbolic link: a key directory is opened by its own path only") !=
          std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(real / "kA.key"));
  CHECK(std::filesystem::exists(real / "k0.key"));
  // The path it links to is the way.
  const auto direct = run_llmdlq("keys generate kA --keys " + real.string());
  INFO(direct.err);
  CHECK(direct.exit_code == 0);
  CHECK(std::filesystem::exists(real / "kA.key"));
}

TEST_CASE("llmdlq keys, run by root, follows a link on the way only when root owns it and it leads nowhere "
          "nobody controls",
          "[crypto][keys][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  shared_directory shared;
  const auto d = shared.d;
  const auto nobdir = d / "nobdir";
  make_nobodys_directory(nobody, nobdir);
  // Root's key directory, itself as it should be, inside nobody's directory.
  REQUIRE(::mkdir((nobdir / "keys2").c_str(), 0700) == 0);
  std::filesystem::create_directory(d / "safe");
  REQUIRE(::chmod((d / "safe").c_str(), 0755) == 0);

  // D/k4 -> D/nobdir/keys2, made by nobody: the key directory is a link.
  make_link(nobody, nobdir / "keys2", d / "k4");
  auto run = run_llmdlq("keys generate kA --keys " + (d / "k4").string());
  INFO(run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.err.find((d / "k4").string() + " is a symbolic link: a key directory is opened by its own path only") !=
        std::string::npos);

  // A link on the way that nobody owns is not followed, wherever it leads.
  make_link(nobody, d / "safe", d / "k5");
  run = run_llmdlq("keys generate kA --keys " + (d / "k5" / "keys").string());
  INFO(run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.err.find((d / "k5").string() + " is a symbolic link that belongs to " + llmdlq::test::named(nobody)) !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(d / "safe" / "keys"));

  // Root's link into nobody's directory: followed, and refused there.
  make_link(root_user, nobdir, d / "k6");
  run = run_llmdlq("keys generate kA --keys " + (d / "k6" / "keys2").string());
  INFO(run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("is in " + nobdir.string() + ", which belongs to " + llmdlq::test::named(nobody)) !=
        std::string::npos);
  // So is the path written out, and a way back into it through `..`.
  for (const auto& way : {nobdir / "keys2", d / "safe" / ".." / "nobdir" / "keys2"}) {
    run = run_llmdlq("keys generate kA --keys " + way.string());
    INFO(run.err);
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("is in " + nobdir.string() + ", which belongs to " + llmdlq::test::named(nobody)) !=
          std::string::npos);
  }
  CHECK(key_files_under(nobdir).empty());

  // Root's link to root's directory leads where it says.
  make_link(root_user, d / "safe", d / "k7");
  run = run_llmdlq("keys generate kA --keys " + (d / "k7" / "keys").string());
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(std::filesystem::exists(d / "safe" / "keys" / "kA.key"));
  CHECK(run_llmdlq("keys list --keys " + (d / "k7" / "keys").string()).out == "kA  current\n");
}

TEST_CASE("llmdlq keys generate, run by root while nobody swaps a directory and a link, never writes a key where "
          "nobody controls it",
          "[crypto][keys][owner][race]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  shared_directory shared;
  const auto d = shared.d;
  const auto nobdir = d / "nobdir";
  make_nobodys_directory(nobody, nobdir);
  // Root's own key directory, which a link of nobody's names while the check looks.
  const auto rootkeys = d / "rootkeys";
  REQUIRE(file_key_provider::generate(rootkeys, "k0"));
  // nobody's two entries, swapped all the time: D/nobdir/keys2 is now a
  // directory of nobody's (0777), now a link to root's key directory.
  make_nobodys_directory(nobody, nobdir / "keys2");
  make_link(nobody, rootkeys, nobdir / "other");
  make_link(nobody, nobdir / "keys2", d / "k4");  // D/k4 -> D/nobdir/keys2
  make_link(root_user, nobdir, d / "k5");         // root's link into nobody's directory

  const pid_t swapper = ::fork();
  REQUIRE(swapper >= 0);
  if (swapper == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(nobody.gid) != 0 || ::setuid(nobody.uid) != 0) ::_exit(2);
    const std::string a = (nobdir / "keys2").string();
    const std::string b = (nobdir / "other").string();
    while (true) ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE);
  }
  const struct stop_at_exit {
    pid_t pid;
    ~stop_at_exit() {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } stop{swapper};
  llmdlq::test::temp_dir io;
  const auto err = (io.path() / "stderr").string();
  int refused = 0;
  std::vector<std::string> accepted;
  constexpr int runs = 300;  // by turns through D/k4 and through root's link D/k5
  for (int i = 0; i < runs; ++i) {
    const auto keys = i % 2 == 0 ? d / "k4" : d / "k5" / "keys2";
    const std::string id = "k" + std::to_string(i);
    const int code = llmdlq::test::exit_code_of(
        llmdlq::test::start_llmdlq({"keys", "generate", id, "--keys", keys.string()}, "/dev/null", "/dev/null", err));
    if (code == 1) {
      ++refused;
    } else {
      accepted.push_back(id + " via " + keys.string() + ": exit " + std::to_string(code) + ", " +
                         llmdlq::test::slurp(err));
    }
  }
  CAPTURE(accepted);
  CHECK(refused == runs);
  // Whichever way the entries stood: nothing in nobody's directories, nothing new in root's.
  CHECK(key_files_under(nobdir).empty());
  CHECK(key_files_under(rootkeys) == std::vector<std::string>{(rootkeys / "k0.key").string()});
}

}  // namespace keys_command_test
