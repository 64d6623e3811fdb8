// SPDX-License-Identifier: MIT
// Another user for tests of who may own a file: `nobody` gets files (chown)
// and acts (a child under its uid). Only root can do either, so a test that
// needs it reports itself skipped elsewhere.
#pragma once

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "catch.hpp"
#include "support/skip.hpp"

namespace llmdlq::test {

struct other_user {
  uid_t uid = 65534;
  gid_t gid = 65534;
  std::string name = "nobody";
};

inline other_user nobody() {
  other_user user;
  if (const struct passwd* entry = ::getpwnam("nobody")) {
    user.uid = entry->pw_uid;
    user.gid = entry->pw_gid;
  }
  return user;
}

/// How a message names nobody: "uid 65534 (nobody)".
inline std::string named(const other_user& user) {
  return "uid " + std::to_string(user.uid) + " (" + user.name + ")";
}

/// Gives `path` (itself, not where a link leads) to `user`.
inline void give_to(const other_user& user, const std::filesystem::path& path) {
  REQUIRE(::lchown(path.c_str(), user.uid, user.gid) == 0);
}

/// The owner of `path` (not following a link), or -1 when it is missing.
inline long owner_of(const std::filesystem::path& path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0 ? static_cast<long>(info.st_uid) : -1;
}

/// Runs `action` in a child under `user`'s uid and gid, no other groups;
/// whether it returned true.
inline bool run_as(const other_user& user, const std::function<bool()>& action) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) ::_exit(2);
    ::_exit(action() ? 0 : 1);
  }
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// The launcher that runs a command as `user` (for run_llmdlq_reading).
inline std::string launcher_as(const other_user& user) {
  return "/usr/bin/setpriv --reuid=" + std::to_string(user.uid) + " --regid=" + std::to_string(user.gid) +
         " --clear-groups";
}

}  // namespace llmdlq::test

/// Skips the test case unless it runs as root, which alone can give a file to another user.
#define LLMDLQ_REQUIRE_ROOT()                                                       \
  do {                                                                              \
    if (::geteuid() != 0) LLMDLQ_SKIP("not running as root: cannot give files to another user"); \
  } while (false)
