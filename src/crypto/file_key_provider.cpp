// SPDX-License-Identifier: MIT
// file_key_provider: the key directory is walked to with openat and
// O_NOFOLLOW, each directory on the way judged, and held open; every key
// file, `current` and tombstone is then read, written (O_EXCL, fsync),
// renamed and removed relative to that descriptor, so a directory or link
// swapped after the walk redirects nothing. Whoever owns the directory, a
// key file or `current`, or may write a directory above them, could choose
// the key that seals (and read what it sealed): only this user or root may.
#include "llmdlq/crypto/file_key_provider.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "llmdlq/detail/bounded_read.hpp"
#include "llmdlq/detail/directory_walk.hpp"
#include "llmdlq/detail/private_file.hpp"
#include "sodium.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

namespace fs = std::filesystem;

constexpr std::string_view key_suffix = ".key";
constexpr std::string_view tombstone_suffix = ".shredded";
constexpr std::string_view current_file = "current";
constexpr std::string_view current_temporary = "current.new";

cipher_error failure(cipher_failure code, std::string_view key_id, std::string message) {
  return cipher_error{code, std::string(key_id), std::move(message)};
}

std::string errno_text(int error) { return std::system_category().message(error); }

std::string key_name(std::string_view id) { return std::string(id) + std::string(key_suffix); }
std::string tombstone_name(std::string_view id) { return std::string(id) + std::string(tombstone_suffix); }

class file_descriptor {
 public:
  explicit file_descriptor(int fd) noexcept : fd_(fd) {}
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  ~file_descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }

 private:
  int fd_;
};

// This user or root owns it, and group and others have no access to it.
expected<void, cipher_error> check_private(const struct stat& status, const fs::path& path, std::string_view id) {
  if (!detail::owned_by_this_user_or_root(status)) {
    return unexpected(failure(cipher_failure::provider_failed, id, detail::foreign_owner_refusal(path, status)));
  }
  if ((status.st_mode & 077) != 0) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{} is open to its group or others (mode {:o}): chmod it to {}",
                                          path.string(), status.st_mode & 0777,
                                          S_ISDIR(status.st_mode) ? "700" : "600")));
  }
  return {};
}

// A key directory, held open once the walk to it was judged safe: every
// file in it is reached through fd(), never by its path again. `path` is
// the directory as given, for messages.
struct key_directory {
  detail::held_directory held;
  fs::path path;

  [[nodiscard]] int fd() const noexcept { return held.fd(); }
  [[nodiscard]] fs::path file(std::string_view name) const { return path / name; }
  // Whether `name` is there (a link counts: it is not followed).
  [[nodiscard]] bool has(std::string_view name) const {
    struct stat status {};
    return ::fstatat(fd(), std::string(name).c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0;
  }
};

// Walks to `directory` (making it 0700 when `create` and it is missing)
// and holds it, once it and the way to it are this user's or root's.
expected<key_directory, cipher_error> open_key_directory(const fs::path& directory, std::string_view id,
                                                         bool create = false) {
  auto walked = detail::open_walked_directory(directory, "key directory", create, 0700);
  if (!walked) {
    const auto code = walked.error().code == detail::walk_errc::missing ? cipher_failure::unknown_key
                                                                         : cipher_failure::provider_failed;
    return unexpected(failure(code, id, std::move(walked.error().message)));
  }
  struct stat status {};
  if (::fstat(walked->fd(), &status) != 0) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("key directory {}: {}", directory.string(), errno_text(errno))));
  }
  if (auto ok = check_private(status, directory, id); !ok) return unexpected(std::move(ok).error());
  return key_directory{std::move(*walked), directory};
}

// A small private file's bytes; nothing when it does not exist.
expected<std::optional<std::string>, cipher_error> read_private(const key_directory& dir, std::string_view name,
                                                                std::string_view id) {
  const fs::path path = dir.file(name);
  const file_descriptor fd(::openat(dir.fd(), std::string(name).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    const int error = errno;
    if (error == ENOENT) return std::optional<std::string>();
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{}: {}", path.string(), errno_text(error))));
  }
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0 || !S_ISREG(status.st_mode)) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{} is not a regular file", path.string())));
  }
  if (auto ok = check_private(status, path, id); !ok) return unexpected(std::move(ok).error());
  auto bytes = detail::read_bounded(fd.get(), detail::file_kind::key, path.string());
  if (!bytes) return unexpected(failure(cipher_failure::provider_failed, id, std::move(bytes.error().message)));
  return std::optional<std::string>(std::move(*bytes));
}

cipher_error linked_key_refusal(const fs::path& path, std::string_view id) {
  return failure(cipher_failure::provider_failed, id,
                 fmt::format("{} is a symbolic link: a key is shredded by its own path only, and removing the "
                             "link would leave the key bytes where it leads (shred the file it names, or remove "
                             "the link)",
                             path.string()));
}

expected<void, cipher_error> sync_directory(const key_directory& dir, std::string_view id) {
  if (::fsync(dir.fd()) != 0) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{}: {}", dir.path.string(), errno_text(errno))));
  }
  return {};
}

// Writes `bytes` to a new file `name` (0600) in the directory: it must not exist.
expected<void, cipher_error> write_new(const key_directory& dir, std::string_view name, std::string_view bytes,
                                       std::string_view id) {
  const file_descriptor fd(::openat(dir.fd(), std::string(name).c_str(),
                                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  bool ok = static_cast<bool>(fd) && ::fchmod(fd.get(), 0600) == 0;
  for (std::size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  if (ok) ok = ::fsync(fd.get()) == 0;
  if (!ok) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{}: {}", dir.file(name).string(), errno_text(errno))));
  }
  return {};
}

std::string_view trimmed_view(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

expected<void, cipher_error> check_id(std::string_view id) {
  if (!file_key_provider::valid_key_id(id)) {
    return unexpected(failure(cipher_failure::malformed, id,
                              "a key id is 1 to 64 of A-Z a-z 0-9 . _ - and does not start with a dot"));
  }
  return {};
}

expected<std::string, cipher_error> current_in(const key_directory& dir) {
  auto text = read_private(dir, current_file, {});
  if (!text) return unexpected(std::move(text).error());
  if (!*text) {
    return unexpected(failure(cipher_failure::unknown_key, {},
                              fmt::format("{} names no current key: generate one", dir.path.string())));
  }
  std::string id(trimmed_view(**text));
  if (auto ok = check_id(id); !ok) return unexpected(std::move(ok).error());
  return id;
}

expected<secret_key, cipher_error> key_in(const key_directory& dir, std::string_view id) {
  // A tombstone wins over a key file that a shred cut short left behind.
  if (dir.has(tombstone_name(id))) {
    return unexpected(failure(cipher_failure::key_shredded, id, "its key was destroyed"));
  }
  auto text = read_private(dir, key_name(id), id);
  if (!text) return unexpected(std::move(text).error());
  if (!*text) {
    return unexpected(failure(cipher_failure::unknown_key, id,
                              fmt::format("no key file {}", dir.file(key_name(id)).string())));
  }
  std::string& bytes = **text;
  std::optional<std::string> decoded;
  if (bytes.size() != secret_key::size) decoded = detail::sodium_unbase64(trimmed_view(bytes), " \r\n\t");
  const std::string& raw = decoded ? *decoded : bytes;
  auto key = raw.size() == secret_key::size
                 ? secret_key::copy_of({reinterpret_cast<const unsigned char*>(raw.data()), raw.size()})
                 : unexpected(failure(cipher_failure::malformed, id,
                                      "its key file holds neither 32 bytes nor their base64"));
  sodium_memzero(bytes.data(), bytes.size());
  if (decoded) sodium_memzero(decoded->data(), decoded->size());
  if (!key) return unexpected(failure(key.error().code, id, key.error().message));
  return key;
}

expected<void, cipher_error> make_current_in(const key_directory& dir, std::string_view id) {
  if (auto key = key_in(dir, id); !key) return unexpected(std::move(key).error());
  ::unlinkat(dir.fd(), std::string(current_temporary).c_str(), 0);  // a crashed run's
  if (auto ok = write_new(dir, current_temporary, std::string(id) + "\n", id); !ok) return ok;
  if (::renameat(dir.fd(), std::string(current_temporary).c_str(), dir.fd(), std::string(current_file).c_str()) !=
      0) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{}: {}", dir.file(current_file).string(), errno_text(errno))));
  }
  return sync_directory(dir, id);
}

// Writes zeros over the open key file `fd` of `size` bytes, a piece at a time.
void overwrite_with_zeros(int fd, off_t size) {
  static constexpr char zeros[4096] = {};
  for (off_t done = 0; done < size;) {
    const auto piece = static_cast<std::size_t>(std::min<off_t>(size - done, sizeof zeros));
    const ssize_t n = ::write(fd, zeros, piece);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += n;
  }
  ::fsync(fd);
}

}  // namespace

file_key_provider::file_key_provider(std::filesystem::path directory) : directory_(std::move(directory)) {}

bool file_key_provider::valid_key_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > 64 || id.front() == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

expected<std::string, cipher_error> file_key_provider::current_key_id() const {
  auto dir = open_key_directory(directory_, {});
  if (!dir) return unexpected(std::move(dir).error());
  return current_in(*dir);
}

expected<secret_key, cipher_error> file_key_provider::key(std::string_view id) const {
  if (auto ok = check_id(id); !ok) return unexpected(std::move(ok).error());
  auto dir = open_key_directory(directory_, id);
  if (!dir) return unexpected(std::move(dir).error());
  return key_in(*dir, id);
}

expected<void, cipher_error> file_key_provider::generate(const std::filesystem::path& directory, std::string_view id,
                                                         bool make_current) {
  if (auto ok = check_id(id); !ok) return unexpected(std::move(ok).error());
  if (!detail::sodium_ready()) {
    return unexpected(failure(cipher_failure::provider_failed, id, "libsodium could not be initialised"));
  }
  auto dir = open_key_directory(directory, id, true);
  if (!dir) return unexpected(std::move(dir).error());
  if (dir->has(tombstone_name(id))) {
    return unexpected(failure(cipher_failure::key_shredded, id, "a shredded key id is never used again"));
  }
  unsigned char key[secret_key::size];
  randombytes_buf(key, sizeof key);
  std::string text = detail::sodium_base64(key, sizeof key) + "\n";
  sodium_memzero(key, sizeof key);
  auto written = write_new(*dir, key_name(id), text, id);
  sodium_memzero(text.data(), text.size());
  if (!written) {
    if (dir->has(key_name(id))) written.error().message = fmt::format("key {} exists already", id);
    return written;
  }
  if (auto ok = sync_directory(*dir, id); !ok) return ok;
  return make_current ? make_current_in(*dir, id) : expected<void, cipher_error>();
}

expected<void, cipher_error> file_key_provider::make_current(const std::filesystem::path& directory,
                                                             std::string_view id) {
  if (auto ok = check_id(id); !ok) return unexpected(std::move(ok).error());
  auto dir = open_key_directory(directory, id);
  if (!dir) return unexpected(std::move(dir).error());
  return make_current_in(*dir, id);
}

expected<void, cipher_error> file_key_provider::shred(const std::filesystem::path& directory, std::string_view id) {
  if (auto ok = check_id(id); !ok) return unexpected(std::move(ok).error());
  auto dir = open_key_directory(directory, id);
  if (!dir) return unexpected(std::move(dir).error());
  if (auto current = current_in(*dir); current && *current == id) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              "it is the current key: make another key current first"));
  }
  const std::string key_file = key_name(id);
  const std::string tombstone = tombstone_name(id);
  struct stat status {};
  if (::fstatat(dir->fd(), key_file.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) {
    if (dir->has(tombstone)) return {};
    return unexpected(failure(cipher_failure::unknown_key, id, "no such key"));
  }
  // Removing a link would leave the key bytes where it leads, and a key is
  // never read through one: refused, so nobody believes a key gone that is not.
  if (S_ISLNK(status.st_mode)) return unexpected(linked_key_refusal(dir->file(key_file), id));
  // The tombstone first: a crash in between leaves a key that says it is shredded, never a silent loss.
  if (!dir->has(tombstone)) {
    if (auto ok = write_new(*dir, tombstone, fmt::format("key {} was shredded\n", id), id); !ok) return ok;
  }
  // Overwritten before it is unlinked, for file systems that write in place.
  if (const file_descriptor fd(::openat(dir->fd(), key_file.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC)); fd) {
    if (::fstat(fd.get(), &status) == 0 && S_ISREG(status.st_mode)) overwrite_with_zeros(fd.get(), status.st_size);
  } else if (errno == ELOOP) {  // made a link since: its tombstone stays, the link too
    return unexpected(linked_key_refusal(dir->file(key_file), id));
  }
  if (::unlinkat(dir->fd(), key_file.c_str(), 0) != 0) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{}: {}", dir->file(key_file).string(), errno_text(errno))));
  }
  return sync_directory(*dir, id);
}

expected<std::vector<key_listing>, cipher_error> file_key_provider::list(const std::filesystem::path& directory) {
  auto dir = open_key_directory(directory, {});
  if (!dir) return unexpected(std::move(dir).error());
  const auto current = current_in(*dir);
  // Its own descriptor, so that closedir leaves the held one open.
  const int listing_fd = ::openat(dir->fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* entries = listing_fd >= 0 ? ::fdopendir(listing_fd) : nullptr;
  if (entries == nullptr) {
    const int error = errno;
    if (listing_fd >= 0) ::close(listing_fd);
    return unexpected(failure(cipher_failure::provider_failed, {},
                              fmt::format("{}: {}", directory.string(), errno_text(error))));
  }
  std::map<std::string, key_listing> keys;
  while (const struct dirent* entry = ::readdir(entries)) {
    const std::string_view name = entry->d_name;
    for (const auto& [suffix, shredded] : {std::pair{key_suffix, false}, std::pair{tombstone_suffix, true}}) {
      if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
      const std::string id(name.substr(0, name.size() - suffix.size()));
      if (!valid_key_id(id)) continue;
      auto& listing = keys[id];
      listing.id = id;
      listing.shredded = listing.shredded || shredded;
      listing.current = current && *current == id;
    }
  }
  ::closedir(entries);
  std::vector<key_listing> listed;
  for (auto& [id, listing] : keys) listed.push_back(std::move(listing));
  return listed;
}

LLMDLQ_END_NAMESPACE
