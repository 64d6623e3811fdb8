// SPDX-License-Identifier: MIT
// Files that hold dead letters belong to their owner alone: created 0600
// whatever the umask, and refused when they are a symbolic link to a file or
// when group or others may write them (anyone could then add or change records).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline constexpr mode_t private_file_mode = 0600;

inline std::string symbolic_link_refusal(const std::filesystem::path& path) {
  return fmt::format("{} is a symbolic link: a file of dead letters is opened by its own path only, so that "
                     "nobody can point it elsewhere (give the path it links to)",
                     path.string());
}

// Why the file `info` describes must not hold dead letters, if it must not.
// Only regular files are judged: a device or a pipe is the caller's choice.
inline std::optional<std::string> exposed_file_refusal(const std::filesystem::path& path, const struct stat& info) {
  if (!S_ISREG(info.st_mode) || (info.st_mode & (S_IWGRP | S_IWOTH)) == 0) return std::nullopt;
  return fmt::format("{} has mode {:04o}: group or others can write it, so its records cannot be trusted; it is "
                     "left unchanged (make it its owner's only: chmod 600 {})",
                     path.string(), info.st_mode & 07777, path.string());
}

// Why an existing `path` must not hold dead letters, if it must not; nothing
// when it is missing. Does not follow a symbolic link.
inline std::optional<std::string> existing_file_refusal(const std::filesystem::path& path) {
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0) return std::nullopt;
  if (S_ISLNK(info.st_mode)) return symbolic_link_refusal(path);
  return exposed_file_refusal(path, info);
}

// Opens `path` with `flags` (no O_CREAT), creating a missing file with mode
// 0600 whatever the umask; `created` says which. A symbolic link to a
// regular file (or to nothing), and a regular file group or others can
// write, are refused: -1 with `refusal` set. A link to a device
// (/dev/stdout) is opened. Otherwise -1 with errno set on failure.
inline int open_private_file(const std::filesystem::path& path, int flags, bool& created, std::string& refusal) {
  for (int attempt = 0; attempt < 4; ++attempt) {  // another process may create or remove it in between
    int fd = ::open(path.c_str(), flags | O_NOFOLLOW);
    if (fd < 0 && errno == ELOOP) {
      fd = ::open(path.c_str(), flags);
      struct stat target;
      if (fd < 0 && errno != ENOENT) return -1;
      if (fd < 0 || (::fstat(fd, &target) == 0 && S_ISREG(target.st_mode))) {
        if (fd >= 0) ::close(fd);
        refusal = symbolic_link_refusal(path);
        return -1;
      }
      return fd;
    }
    if (fd >= 0) {
      struct stat info;
      if (::fstat(fd, &info) != 0) {
        const int error = errno;
        ::close(fd);
        errno = error;
        return -1;
      }
      if (auto why = exposed_file_refusal(path, info)) {
        ::close(fd);
        refusal = std::move(*why);
        return -1;
      }
      return fd;
    }
    if (errno != ENOENT) return -1;
    fd = ::open(path.c_str(), flags | O_CREAT | O_EXCL | O_NOFOLLOW, private_file_mode);
    if (fd >= 0) {
      if (::fchmod(fd, private_file_mode) != 0) {  // the umask may have taken the owner's bits
        const int error = errno;
        ::close(fd);
        errno = error;
        return -1;
      }
      created = true;
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  return -1;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
