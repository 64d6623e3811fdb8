// SPDX-License-Identifier: MIT
// Reading a whole file into memory, never more than the limit of its kind:
// at most limit + 1 bytes are read from the descriptor, whatever the file
// claims to be (a device such as /dev/zero, a pipe, a file that grows), so a
// file nobody should have given costs a bounded amount of memory and time.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// What a file is read as. Each kind has one limit (file_kinds).
enum class file_kind : std::uint8_t {
  schema,      ///< a JSON Schema: `--schema`, a `--remote` or catalogue file it refers to
  document,    ///< a JSON document to validate or repair, a correction to store
  allowlist,   ///< the allowlist of replay targets
  key,         ///< a key file: a sealing key, a key directory's `current`, the redaction key, the console's token
  json_lines,  ///< a JSON Lines file read whole: a DLQ that is re-sealed, a replay target's earlier lines
};

/// A kind of file: how a message names it, and the most of it that is read.
struct file_kind_entry {
  file_kind kind;
  std::string_view noun;
  std::size_t limit;
};

/// Every kind's limit, in one place (docs/command-line.md lists them). A
/// schema keeps the 64 MiB `llmdlq replay` and the catalogue allowed before;
/// a document the 16 MiB the parser (parse_options::max_size) and repair
/// (repair_options::max_bytes) accept; the others are small by nature.
inline constexpr file_kind_entry file_kinds[] = {
    {file_kind::schema, "schema", std::size_t{64} << 20},
    {file_kind::document, "document", std::size_t{16} << 20},
    {file_kind::allowlist, "allowlist", std::size_t{1} << 20},
    {file_kind::key, "key file", std::size_t{4} << 10},
    {file_kind::json_lines, "JSON Lines file", std::size_t{1} << 30},
};

[[nodiscard]] constexpr const file_kind_entry& entry_of(file_kind kind) noexcept {
  return file_kinds[static_cast<std::size_t>(kind)];
}
static_assert([] {
  for (std::size_t i = 0; i < std::size(file_kinds); ++i) {
    if (static_cast<std::size_t>(file_kinds[i].kind) != i) return false;
  }
  return true;
}(), "file_kinds lists every file_kind once, in the order of their values");

/// The limit of `kind`, in bytes.
[[nodiscard]] constexpr std::size_t limit_of(file_kind kind) noexcept { return entry_of(kind).limit; }

/// A byte count as a person reads it: "64 MiB", "4 KiB", "1000 bytes".
inline std::string byte_count_text(std::size_t bytes) {
  if (bytes != 0 && bytes % (std::size_t{1} << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes != 0 && bytes % (std::size_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes != 0 && bytes % (std::size_t{1} << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} byte{}", bytes, bytes == 1 ? "" : "s");
}

/// Why a file was not read.
enum class read_errc : std::uint8_t {
  cannot_open,  ///< opening it failed (read_error::system_error says why)
  cannot_read,  ///< reading it failed (read_error::system_error says why)
  too_large,    ///< it holds more than the limit: limit + 1 bytes were read, and no more
};

/// A file that was not read, and why.
struct read_error {
  read_errc code = read_errc::cannot_read;
  file_kind kind = file_kind::document;
  std::string file;       ///< as the caller named it; "-" for standard input
  std::size_t limit = 0;  ///< the limit that applied, in bytes
  int system_error = 0;   ///< errno, for cannot_open and cannot_read
  /// Why, without the file: "No such file or directory", "larger than the limit of 64 MiB".
  std::string reason;
  /// The whole sentence: "the schema /dev/zero is larger than the limit of 64 MiB",
  /// "cannot read the document on standard input: Is a directory".
  std::string message;
};

/// How a message names the file `file` of kind `kind`: "the schema s.json",
/// "the document on standard input" (for "-").
inline std::string file_named(file_kind kind, std::string_view file) {
  if (file == "-") return fmt::format("the {} on standard input", entry_of(kind).noun);
  return fmt::format("the {} {}", entry_of(kind).noun, file);
}

inline read_error make_read_error(read_errc code, file_kind kind, std::string_view file, std::size_t limit,
                                  int system_error = 0) {
  read_error e{code, kind, std::string(file), limit, system_error, {}, {}};
  if (code == read_errc::too_large) {
    e.reason = "larger than the limit of " + byte_count_text(limit);
    e.message = fmt::format("{} is {}", file_named(kind, file), e.reason);
  } else {
    e.reason = std::system_category().message(system_error);
    e.message = fmt::format("cannot read {}: {}", file_named(kind, file), e.reason);
  }
  return e;
}

/// The whole content of the open `fd` (which stays the caller's), read to
/// its end, or why not. `file` names it in the error. Works on pipes and
/// devices: it reads, at most limit + 1 bytes, rather than trusting a size.
/// A regular file whose size is already above the limit is refused before
/// anything is read. Memory held is at most about twice the limit.
[[nodiscard]] inline expected<std::string, read_error> read_bounded(int fd, file_kind kind, std::string_view file,
                                                                    std::size_t limit) {
  const std::size_t most = limit == static_cast<std::size_t>(-1) ? limit : limit + 1;
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && static_cast<std::uintmax_t>(info.st_size) > limit) {
    return unexpected(make_read_error(read_errc::too_large, kind, file, limit));
  }
  // Read straight into the string, grown within `most`: no other copy of what
  // was read (a key, say) is left behind in a buffer.
  std::string content;
  content.reserve(std::min(most, std::size_t{1} << 16));
  while (content.size() < most) {
    if (content.size() == content.capacity()) content.reserve(std::min(content.capacity() * 2, most));
    const std::size_t size = content.size();
    const std::size_t want = std::min(content.capacity(), most) - size;
    content.resize(size + want);  // within the capacity: nothing moves
    const ssize_t n = ::read(fd, content.data() + size, want);
    const int error = errno;
    content.resize(size + (n > 0 ? static_cast<std::size_t>(n) : 0));
    if (n < 0 && error == EINTR) continue;
    if (n < 0) return unexpected(make_read_error(read_errc::cannot_read, kind, file, limit, error));
    if (n == 0) return content;
  }
  return unexpected(make_read_error(read_errc::too_large, kind, file, limit));
}

[[nodiscard]] inline expected<std::string, read_error> read_bounded(int fd, file_kind kind, std::string_view file) {
  return read_bounded(fd, kind, file, limit_of(kind));
}

/// The whole content of the file at `path`, read as read_bounded reads.
/// Opening a FIFO waits for its writer, as cat does.
[[nodiscard]] inline expected<std::string, read_error> read_file_bounded(const std::filesystem::path& path,
                                                                         file_kind kind, std::size_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return unexpected(make_read_error(read_errc::cannot_open, kind, path.string(), limit, errno));
  auto content = read_bounded(fd, kind, path.string(), limit);
  ::close(fd);
  return content;
}

[[nodiscard]] inline expected<std::string, read_error> read_file_bounded(const std::filesystem::path& path,
                                                                         file_kind kind) {
  return read_file_bounded(path, kind, limit_of(kind));
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
