// SPDX-License-Identifier: MIT
// File modes in tests: a umask set for a scope, and a file's permission bits.
#pragma once

#include <sys/stat.h>

#include <filesystem>

namespace llmdlq::test {

/// Sets the process's umask until the end of the scope.
class scoped_umask {
 public:
  explicit scoped_umask(mode_t mask) : previous_(::umask(mask)) {}
  ~scoped_umask() { ::umask(previous_); }
  scoped_umask(const scoped_umask&) = delete;
  scoped_umask& operator=(const scoped_umask&) = delete;

 private:
  mode_t previous_;
};

/// The permission bits of `path` (not following a symbolic link), or -1 when it is missing.
inline int mode_of(const std::filesystem::path& path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0 ? static_cast<int>(info.st_mode & 07777) : -1;
}

}  // namespace llmdlq::test
