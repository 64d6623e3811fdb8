// SPDX-License-Identifier: MIT
// A directory reached one component at a time, each opened with openat and
// O_NOFOLLOW from the one before and judged before the next is opened, and
// then held open: whatever is done in it afterwards is done relative to that
// descriptor (openat, mkdirat, renameat, unlinkat), so that another user who
// swaps a directory or a link on the way after the walk redirects nothing.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/private_file.hpp"
#include "llmdlq/expected.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// An open directory (O_RDONLY | O_DIRECTORY), closed on destruction.
class held_directory {
 public:
  held_directory() noexcept = default;
  held_directory(int fd, std::filesystem::path path) noexcept : fd_(fd), path_(std::move(path)) {}
  held_directory(held_directory&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}
  held_directory& operator=(held_directory&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
      path_ = std::move(other.path_);
    }
    return *this;
  }
  held_directory(const held_directory&) = delete;
  held_directory& operator=(const held_directory&) = delete;
  ~held_directory() {
    if (fd_ >= 0) ::close(fd_);
  }

  /// The descriptor, for the *at calls; it stays this object's.
  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// Where the walk found it, absolute, links resolved (for messages).
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

/// Why a walk stopped.
enum class walk_errc : std::uint8_t {
  missing,  ///< the directory (or one on the way) does not exist
  refused,  ///< another user could have chosen where it leads (the message says who and how)
  failed,   ///< the system refused a step (walk_error::system_error says why)
};

struct walk_error {
  walk_errc code = walk_errc::failed;
  int system_error = 0;
  std::string message;
};

/// Opens the directory `path` names by walking to it from / (or, for a
/// relative path, from the working directory), one component at a time with
/// openat(O_NOFOLLOW | O_DIRECTORY). Each directory on the way, the first
/// included, is judged as unsafe_directory_refusal judges: owned by this
/// user or root, and writable by group or others only when sticky. `..`
/// opens the parent of the directory reached, judged the same way.
///
/// A symbolic link on the way is followed only when this user or root owns
/// it: it is in a directory that was judged safe, so nobody else could have
/// made or replaced it there, and where it leads is walked and judged the
/// same way (a link into a directory another user controls is refused
/// there). The last component is never followed: a link there is refused,
/// since a `what` ("key directory") is opened by its own path only.
///
/// The last directory itself is the caller's to judge (fstat on fd()). When
/// it is missing and `create` is set, it is made with mode `mode` (exactly,
/// whatever the umask) in the directory the walk reached.
[[nodiscard]] inline expected<held_directory, walk_error> open_walked_directory(const std::filesystem::path& path,
                                                                                std::string_view what, bool create,
                                                                                mode_t mode) {
  namespace fs = std::filesystem;
  const auto fail = [&](walk_errc code, int error, std::string message) {
    return unexpected(walk_error{code, error, std::move(message)});
  };
  const auto system_failure = [&](int error, const fs::path& where) {
    return fail(error == ENOENT ? walk_errc::missing : walk_errc::failed, error,
                fmt::format("{} {}: {}", what, where.string(), std::system_category().message(error)));
  };
  if (path.empty()) return system_failure(ENOENT, path);
  // The components still to walk, the next one last.
  std::vector<std::string> pending;
  const auto push_components = [&pending](const fs::path& p) {
    std::vector<std::string> names;
    for (const auto& part : p) {
      const std::string name = part.string();
      if (name.empty() || name == "/" || name == ".") continue;
      names.push_back(name);
    }
    pending.insert(pending.end(), names.rbegin(), names.rend());
  };
  push_components(path);

  std::error_code ignored;
  fs::path shown = path.is_absolute() ? fs::path("/") : fs::current_path(ignored);
  const auto open_start = [&](bool absolute, bool last) -> expected<held_directory, walk_error> {
    const int fd = ::open(absolute ? "/" : ".", (last ? O_RDONLY : O_PATH) | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return system_failure(errno, absolute ? fs::path("/") : shown);
    return held_directory(fd, absolute ? fs::path("/") : shown);
  };
  const auto judge = [&](const held_directory& directory) -> expected<void, walk_error> {
    struct stat info {};
    if (::fstat(directory.fd(), &info) != 0) return system_failure(errno, directory.path());
    if (auto why = unsafe_directory_refusal(directory.path(), path, info)) {
      return fail(walk_errc::refused, 0, std::move(*why));
    }
    return {};
  };

  auto current = open_start(path.is_absolute(), pending.empty());
  if (!current || pending.empty()) return current;
  if (auto safe = judge(*current); !safe) return unexpected(std::move(safe).error());
  int links = 0;
  bool made = false;
  while (!pending.empty()) {
    const std::string name = std::move(pending.back());
    pending.pop_back();
    const bool last = pending.empty();
    const fs::path next_path = name == ".." ? current->path().parent_path() : current->path() / name;
    const int flags = (last ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    const int fd = ::openat(current->fd(), name.c_str(), flags);
    if (fd < 0) {
      const int error = errno;
      struct stat link {};
      if (::fstatat(current->fd(), name.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(link.st_mode)) {
        if (last) {
          return fail(walk_errc::refused, 0,
                      fmt::format("{} is a symbolic link: a {} is opened by its own path only, so that nobody can "
                                  "point it elsewhere (give the path it links to)",
                                  next_path.string(), what));
        }
        if (!owned_by_this_user_or_root(link)) {
          return fail(walk_errc::refused, 0,
                      fmt::format("{} is a symbolic link that belongs to {}: its owner could point it elsewhere, so "
                                  "the way to a {} follows only links this user ({}) or root owns (give the path it "
                                  "links to)",
                                  next_path.string(), user_description(link.st_uid), what,
                                  user_description(::geteuid())));
        }
        if (++links > 40) return system_failure(ELOOP, path);
        std::string target(static_cast<std::size_t>(link.st_size > 0 ? link.st_size : 255) + 1, '\0');
        const ssize_t length = ::readlinkat(current->fd(), name.c_str(), target.data(), target.size());
        if (length < 0 || static_cast<std::size_t>(length) >= target.size()) {
          return system_failure(length < 0 ? errno : ENAMETOOLONG, next_path);
        }
        target.resize(static_cast<std::size_t>(length));
        push_components(target);
        if (fs::path(target).is_absolute()) {
          current = open_start(true, pending.empty());
          if (!current) return current;
          if (auto safe = judge(*current); !safe) return unexpected(std::move(safe).error());
        }
        continue;
      }
      if (error == ENOENT && last && create && !made) {
        if (::mkdirat(current->fd(), name.c_str(), mode) != 0 && errno != EEXIST) return system_failure(errno, next_path);
        made = true;
        pending.push_back(name);  // opened, and judged, as if it had been there
        continue;
      }
      return system_failure(error, next_path);
    }
    held_directory next(fd, next_path);
    if (last) {
      if (made) {
        struct stat info {};
        // The umask may have taken bits of `mode`; a directory made by someone else in between is not changed.
        if (::fstat(fd, &info) == 0 && info.st_uid == ::geteuid() && ::fchmod(fd, mode) != 0) {
          return system_failure(errno, next_path);
        }
      }
      return next;
    }
    if (auto safe = judge(next); !safe) return unexpected(std::move(safe).error());
    current = std::move(next);
  }
  return current;  // not reached: the last component returns above
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
