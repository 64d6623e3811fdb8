// SPDX-License-Identifier: MIT
// file_key_provider: key files read with O_NOFOLLOW and checked with fstat,
// written with O_EXCL and fsync, replaced by rename. Whoever owns the
// directory, a key file or `current`, or may write a directory above them,
// could choose the key that seals (and read what it sealed): only this user
// or root may.
#include "llmdlq/crypto/file_key_provider.hpp"

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

#include "llmdlq/detail/private_file.hpp"
#include "sodium.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

namespace fs = std::filesystem;

constexpr std::string_view key_suffix = ".key";
constexpr std::string_view tombstone_suffix = ".shredded";
constexpr std::string_view current_file = "current";

cipher_error failure(cipher_failure code, std::string_view key_id, std::string message) {
  return cipher_error{code, std::string(key_id), std::move(message)};
}

std::string errno_text(int error) { return std::system_category().message(error); }

fs::path key_path(const fs::path& directory, std::string_view id) {
  return directory / (std::string(id) + std::string(key_suffix));
}
fs::path tombstone_path(const fs::path& directory, std::string_view id) {
  return directory / (std::string(id) + std::string(tombstone_suffix));
}

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

// No other user can replace `directory` through a directory above it.
expected<void, cipher_error> check_directory_chain(const fs::path& directory, std::string_view id) {
  if (auto why = detail::directory_chain_refusal(directory)) {
    return unexpected(failure(cipher_failure::provider_failed, id, std::move(*why)));
  }
  return {};
}

expected<void, cipher_error> check_directory(const fs::path& directory, std::string_view id) {
  if (auto ok = check_directory_chain(directory, id); !ok) return ok;
  struct stat status {};
  if (::stat(directory.c_str(), &status) != 0) {
    const int error = errno;
    return unexpected(failure(error == ENOENT ? cipher_failure::unknown_key : cipher_failure::provider_failed, id,
                              fmt::format("key directory {}: {}", directory.string(), errno_text(error))));
  }
  if (!S_ISDIR(status.st_mode)) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{} is not a directory", directory.string())));
  }
  return check_private(status, directory, id);
}

// A small private file's bytes; nothing when it does not exist.
expected<std::optional<std::string>, cipher_error> read_private(const fs::path& path, std::string_view id) {
  const file_descriptor fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
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
  std::string bytes(4096, '\0');
  std::size_t size = 0;
  while (size < bytes.size()) {
    const ssize_t n = ::read(fd.get(), bytes.data() + size, bytes.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      sodium_memzero(bytes.data(), bytes.size());
      return unexpected(failure(cipher_failure::provider_failed, id,
                                fmt::format("{}: {}", path.string(), errno_text(error))));
    }
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  bytes.resize(size);
  return std::optional<std::string>(std::move(bytes));
}

cipher_error linked_key_refusal(const fs::path& path, std::string_view id) {
  return failure(cipher_failure::provider_failed, id,
                 fmt::format("{} is a symbolic link: a key is shredded by its own path only, and removing the "
                             "link would leave the key bytes where it leads (shred the file it names, or remove "
                             "the link)",
                             path.string()));
}

expected<void, cipher_error> sync_directory(const fs::path& directory, std::string_view id) {
  const file_descriptor fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd || ::fsync(fd.get()) != 0) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{}: {}", directory.string(), errno_text(errno))));
  }
  return {};
}

// Writes `bytes` to a new file (0600): it must not exist.
expected<void, cipher_error> write_new(const fs::path& path, std::string_view bytes, std::string_view id) {
  const file_descriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
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
                              fmt::format("{}: {}", path.string(), errno_text(errno))));
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
  if (auto ok = check_directory(directory_, {}); !ok) return unexpected(std::move(ok).error());
  auto text = read_private(directory_ / current_file, {});
  if (!text) return unexpected(std::move(text).error());
  if (!*text) {
    return unexpected(failure(cipher_failure::unknown_key, {},
                              fmt::format("{} names no current key: generate one", directory_.string())));
  }
  std::string id(trimmed_view(**text));
  if (auto ok = check_id(id); !ok) return unexpected(std::move(ok).error());
  return id;
}

expected<secret_key, cipher_error> file_key_provider::key(std::string_view id) const {
  if (auto ok = check_id(id); !ok) return unexpected(std::move(ok).error());
  if (auto ok = check_directory(directory_, id); !ok) return unexpected(std::move(ok).error());
  // A tombstone wins over a key file that a shred cut short left behind.
  std::error_code ignored;
  if (fs::exists(tombstone_path(directory_, id), ignored)) {
    return unexpected(failure(cipher_failure::key_shredded, id, "its key was destroyed"));
  }
  auto text = read_private(key_path(directory_, id), id);
  if (!text) return unexpected(std::move(text).error());
  if (!*text) {
    return unexpected(failure(cipher_failure::unknown_key, id,
                              fmt::format("no key file {}", key_path(directory_, id).string())));
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

expected<void, cipher_error> file_key_provider::generate(const std::filesystem::path& directory, std::string_view id,
                                                         bool make_current) {
  if (auto ok = check_id(id); !ok) return unexpected(std::move(ok).error());
  if (!detail::sodium_ready()) {
    return unexpected(failure(cipher_failure::provider_failed, id, "libsodium could not be initialised"));
  }
  if (auto ok = check_directory_chain(directory, id); !ok) return ok;  // before a directory is made there
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{}: {}", directory.string(), errno_text(errno))));
  }
  if (auto ok = check_directory(directory, id); !ok) return unexpected(std::move(ok).error());
  std::error_code ignored;
  if (fs::exists(tombstone_path(directory, id), ignored)) {
    return unexpected(failure(cipher_failure::key_shredded, id, "a shredded key id is never used again"));
  }
  unsigned char key[secret_key::size];
  randombytes_buf(key, sizeof key);
  std::string text = detail::sodium_base64(key, sizeof key) + "\n";
  sodium_memzero(key, sizeof key);
  auto written = write_new(key_path(directory, id), text, id);
  sodium_memzero(text.data(), text.size());
  if (!written) {
    if (fs::exists(key_path(directory, id), ignored)) {
      written.error().message = fmt::format("key {} exists already", id);
    }
    return written;
  }
  if (auto ok = sync_directory(directory, id); !ok) return ok;
  return make_current ? file_key_provider::make_current(directory, id) : expected<void, cipher_error>();
}

expected<void, cipher_error> file_key_provider::make_current(const std::filesystem::path& directory,
                                                             std::string_view id) {
  if (auto key = file_key_provider(directory).key(id); !key) return unexpected(std::move(key).error());
  const fs::path temporary = directory / (std::string(current_file) + ".new");
  std::error_code ignored;
  fs::remove(temporary, ignored);
  if (auto ok = write_new(temporary, std::string(id) + "\n", id); !ok) return ok;
  if (::rename(temporary.c_str(), (directory / current_file).c_str()) != 0) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{}: {}", (directory / current_file).string(), errno_text(errno))));
  }
  return sync_directory(directory, id);
}

expected<void, cipher_error> file_key_provider::shred(const std::filesystem::path& directory, std::string_view id) {
  if (auto ok = check_id(id); !ok) return unexpected(std::move(ok).error());
  if (auto ok = check_directory(directory, id); !ok) return unexpected(std::move(ok).error());
  if (auto current = file_key_provider(directory).current_key_id(); current && *current == id) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              "it is the current key: make another key current first"));
  }
  const fs::path key_file = key_path(directory, id);
  const fs::path tombstone = tombstone_path(directory, id);
  std::error_code ignored;
  if (!fs::exists(fs::symlink_status(key_file, ignored))) {
    if (fs::exists(tombstone, ignored)) return {};
    return unexpected(failure(cipher_failure::unknown_key, id, "no such key"));
  }
  // Removing a link would leave the key bytes where it leads, and a key is
  // never read through one: refused, so nobody believes a key gone that is not.
  if (fs::is_symlink(fs::symlink_status(key_file, ignored))) return unexpected(linked_key_refusal(key_file, id));
  // The tombstone first: a crash in between leaves a key that says it is shredded, never a silent loss.
  if (!fs::exists(tombstone, ignored)) {
    if (auto ok = write_new(tombstone, fmt::format("key {} was shredded\n", id), id); !ok) return ok;
  }
  // Overwritten before it is unlinked, for file systems that write in place.
  if (const file_descriptor fd(::open(key_file.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC)); fd) {
    struct stat status {};
    if (::fstat(fd.get(), &status) == 0 && status.st_size > 0) {
      const std::string zeros(static_cast<std::size_t>(status.st_size), '\0');
      if (::write(fd.get(), zeros.data(), zeros.size()) >= 0) ::fsync(fd.get());
    }
  } else if (errno == ELOOP) {  // made a link since: its tombstone stays, the link too
    return unexpected(linked_key_refusal(key_file, id));
  }
  if (::unlink(key_file.c_str()) != 0) {
    return unexpected(failure(cipher_failure::provider_failed, id,
                              fmt::format("{}: {}", key_file.string(), errno_text(errno))));
  }
  return sync_directory(directory, id);
}

expected<std::vector<key_listing>, cipher_error> file_key_provider::list(const std::filesystem::path& directory) {
  if (auto ok = check_directory(directory, {}); !ok) return unexpected(std::move(ok).error());
  const auto current = file_key_provider(directory).current_key_id();
  std::map<std::string, key_listing> keys;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    for (const auto& [suffix, shredded] : {std::pair{key_suffix, false}, std::pair{tombstone_suffix, true}}) {
      if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
      const std::string id = name.substr(0, name.size() - suffix.size());
      if (!valid_key_id(id)) continue;
      auto& listing = keys[id];
      listing.id = id;
      listing.shredded = listing.shredded || shredded;
      listing.current = current && *current == id;
    }
  }
  if (error) {
    return unexpected(failure(cipher_failure::provider_failed, {},
                              fmt::format("{}: {}", directory.string(), error.message())));
  }
  std::vector<key_listing> listed;
  for (auto& [id, listing] : keys) listed.push_back(std::move(listing));
  return listed;
}

LLMDLQ_END_NAMESPACE
