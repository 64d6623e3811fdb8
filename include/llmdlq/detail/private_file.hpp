// SPDX-License-Identifier: MIT
// Files that hold dead letters belong to their owner alone: created 0600
// whatever the umask, and refused when they are a symbolic link to a file,
// when group or others may write them, when another user than this one or
// root owns them, or when a directory above them lets another user replace
// them (anyone could then add or change records). The checks are OpenSSH's
// StrictModes: an owner can always change a file, whatever its mode.
#pragma once

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline constexpr mode_t private_file_mode = 0600;

// `what` names the kind of file: "a file of dead letters", "an allowlist".
inline std::string symbolic_link_refusal(const std::filesystem::path& path,
                                         std::string_view what = "a file of dead letters") {
  return fmt::format("{} is a symbolic link: {} is opened by its own path only, so that "
                     "nobody can point it elsewhere (give the path it links to)",
                     path.string(), what);
}

// A user as a message names them: "uid 65534 (nobody)", the number alone
// when no account has it.
inline std::string user_description(uid_t uid) {
  std::vector<char> buffer(1024);
  struct passwd entry;
  struct passwd* found = nullptr;
  int error = 0;
  while ((error = ::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found)) == ERANGE &&
         buffer.size() < (1u << 20)) {
    buffer.resize(buffer.size() * 2);
  }
  if (error == 0 && found != nullptr) return fmt::format("uid {} ({})", uid, found->pw_name);
  return fmt::format("uid {}", uid);
}

// Whether this process may trust what a file or directory `info` describes
// holds: its owner can change it whatever its mode, so that owner must be
// this (effective) user or root.
inline bool owned_by_this_user_or_root(const struct stat& info) {
  return info.st_uid == ::geteuid() || info.st_uid == 0;
}

// Why `path`, owned by another user, must not be used.
inline std::string foreign_owner_refusal(const std::filesystem::path& path, const struct stat& info) {
  return fmt::format("{} belongs to {}, mode {:04o}: only this user ({}) or root may own it, since its owner can "
                     "change it whatever its mode; it is left unchanged (chown it to this user, or give another path)",
                     path.string(), user_description(info.st_uid), info.st_mode & 07777,
                     user_description(::geteuid()));
}

// Why the file `info` describes must not hold dead letters, if it must not:
// another user owns it, or group or others can write it. Only regular files
// are judged: a device or a pipe is the caller's choice. `content` names
// what the file holds ("its records", "its entries").
inline std::optional<std::string> exposed_file_refusal(const std::filesystem::path& path, const struct stat& info,
                                                       std::string_view content = "its records") {
  if (!S_ISREG(info.st_mode)) return std::nullopt;
  if (!owned_by_this_user_or_root(info)) return foreign_owner_refusal(path, info);
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) == 0) return std::nullopt;
  return fmt::format("{} has mode {:04o}: group or others can write it, so {} cannot be trusted (it "
                     "belongs to {}); it is left unchanged (make it its owner's only: chmod 600 {})",
                     path.string(), info.st_mode & 07777, content, user_description(info.st_uid), path.string());
}

// Why `directory`, at or above `path`, lets another user replace `path`, if
// it does: another user than this one or root owns it, or group or others
// may write it and it is not sticky (in a sticky directory, as /tmp, only
// an entry's owner may rename or remove it). `info` describes `directory`.
inline std::optional<std::string> unsafe_directory_refusal(const std::filesystem::path& directory,
                                                           const std::filesystem::path& path,
                                                           const struct stat& info) {
  if (!owned_by_this_user_or_root(info)) {
    return fmt::format("{} is in {}, which belongs to {} (mode {:04o}): its owner could put another file in its "
                       "place, so only this user ({}) or root may own the directories above it; it is left "
                       "unchanged (move it, or chown the directory)",
                       path.string(), directory.string(), user_description(info.st_uid), info.st_mode & 07777,
                       user_description(::geteuid()));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (info.st_mode & S_ISVTX) == 0) {
    return fmt::format("{} is in {}, which has mode {:04o} (it belongs to {}): group or others can write it, and "
                       "without the sticky bit they could put another file in its place; it is left unchanged "
                       "(chmod go-w {}, or chmod +t it)",
                       path.string(), directory.string(), info.st_mode & 07777, user_description(info.st_uid),
                       directory.string());
  }
  return std::nullopt;
}

// As above, for the directory at `directory`. One that cannot be read is
// left for the open that follows to report.
inline std::optional<std::string> unsafe_directory_refusal(const std::filesystem::path& directory,
                                                           const std::filesystem::path& path) {
  struct stat info;
  if (::stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return std::nullopt;
  return unsafe_directory_refusal(directory, path, info);
}

// Why another user could replace `path` through a directory above it, if
// one could: each directory up to / is judged, as OpenSSH's safe_path does,
// both as the path is written and where its symbolic links lead (the link
// and its target can each be swapped by whoever may write their directory).
inline std::optional<std::string> directory_chain_refusal(const std::filesystem::path& path) {
  std::error_code error;
  const auto absolute = std::filesystem::absolute(path, error);
  if (error) return std::nullopt;
  const auto walk = [&](std::filesystem::path directory) -> std::optional<std::string> {
    for (;; directory = directory.parent_path()) {
      if (auto why = unsafe_directory_refusal(directory, path)) return why;
      if (directory == directory.parent_path()) return std::nullopt;
    }
  };
  auto normal = absolute.lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();  // "keys/" names keys
  const auto written = normal.parent_path();
  if (auto why = walk(written)) return why;
  char* resolved = ::realpath(written.c_str(), nullptr);
  if (resolved == nullptr) return std::nullopt;  // a missing directory: the open that follows reports it
  const std::filesystem::path real(resolved);
  std::free(resolved);
  return real == written ? std::nullopt : walk(real);
}

// Why an existing `path` must not hold dead letters, if it must not; nothing
// when it is missing. Does not follow a symbolic link. The directories above
// it are the caller's to judge (directory_chain_refusal).
inline std::optional<std::string> existing_file_refusal(const std::filesystem::path& path) {
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0) return std::nullopt;
  if (S_ISLNK(info.st_mode)) return symbolic_link_refusal(path);
  return exposed_file_refusal(path, info);
}

// Opens `path` with `flags` (no O_CREAT), creating a missing file with mode
// 0600 whatever the umask; `created` says which. A symbolic link to a
// regular file (or to nothing), a regular file group or others can write or
// another user owns, and a path another user could replace through a
// directory above it, are refused: -1 with `refusal` set. A link to a
// device (/dev/stdout) is opened. Otherwise -1 with errno set on failure.
inline int open_private_file(const std::filesystem::path& path, int flags, bool& created, std::string& refusal) {
  if (auto why = directory_chain_refusal(path)) {
    refusal = std::move(*why);
    return -1;
  }
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

// Opens the existing `path` to read what it says (an allowlist), refused as
// open_private_file refuses a file it would write: a symbolic link to a
// regular file, a file group or others can write or another user owns, a
// path another user could replace through a directory above it. Unlike a
// file written to, a pipe or a device is judged too (whoever owns a FIFO
// writes what is read from it). The checks are made with fstat on the
// descriptor that is returned, so nothing can be swapped in between. `what`
// and `content` name the file in a refusal ("an allowlist", "its entries").
// Returns -1 with `refusal` set when refused, -1 with errno set when it
// cannot be opened; never creates it.
inline int open_private_file_to_read(const std::filesystem::path& path, std::string& refusal, std::string_view what,
                                     std::string_view content) {
  if (auto why = directory_chain_refusal(path)) {
    refusal = std::move(*why);
    return -1;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  const bool linked = fd < 0 && errno == ELOOP;
  if (linked) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (linked && errno == ENOENT) refusal = symbolic_link_refusal(path, what);
    return -1;
  }
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  std::optional<std::string> why;
  if (linked && S_ISREG(info.st_mode)) {
    why = symbolic_link_refusal(path, what);
  } else {
    struct stat as_file = info;  // whatever its type, what it says is read: judged as a regular file is
    as_file.st_mode = (info.st_mode & ~S_IFMT) | S_IFREG;
    why = exposed_file_refusal(path, as_file, content);
  }
  if (why) {
    ::close(fd);
    refusal = std::move(*why);
    return -1;
  }
  return fd;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
