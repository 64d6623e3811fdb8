// SPDX-License-Identifier: MIT
// Definitions for jsonl_file_sink.hpp, on POSIX file descriptors.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>
#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/private_file.hpp"
#include "llmdlq/jsonl_file_sink.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail {

inline sink_error io_failure(std::string_view what, const std::filesystem::path& path, int error) {
  return sink_error{sink_errc::io_error, std::string(what) + " " + path.string() + ": " + std::strerror(error)};
}

// How every line serialize() writes begins: the version is its first member.
inline constexpr std::string_view envelope_line_start = R"({"envelope_version":"1")";
static_assert(envelope::current_version == "1", "envelope_line_start names the current version");

// Closes a descriptor unless it was released.
struct owned_fd {
  int fd = -1;
  explicit owned_fd(int descriptor) noexcept : fd(descriptor) {}
  owned_fd(const owned_fd&) = delete;
  owned_fd& operator=(const owned_fd&) = delete;
  ~owned_fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() noexcept { return std::exchange(fd, -1); }
};

// Syncs the directory holding `file`, so that its entry survives a crash.
// Returns 0 or the errno of the failure.
inline int sync_directory_of(const std::filesystem::path& file) {
  auto directory = file.parent_path();
  if (directory.empty()) directory = ".";
  const owned_fd dir{::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd < 0) return errno;
  return ::fsync(dir.fd) == 0 ? 0 : errno;
}

// Whether `path` still names the file `info` describes.
inline bool names_file(const std::filesystem::path& path, const struct stat& info) {
  struct stat named;
  return ::stat(path.c_str(), &named) == 0 && named.st_dev == info.st_dev && named.st_ino == info.st_ino;
}

inline sink_error replaced_while_opening(const std::filesystem::path& path) {
  return sink_error{sink_errc::unavailable, path.string() + " was replaced each time it was opened: try again"};
}

// Writes all of `text` to `fd`. Returns 0 or the errno of the failure.
inline int write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

// Calls on_line(number, text, terminated, too_long) for each line of the
// file `fd` from its start; `number` counts from 1, `terminated` says the
// line ended with '\n', and a line longer than `max_line_bytes` is passed
// with `too_long` and without its text, so a line never holds more memory
// than that. Stops when on_line returns false. Returns 0 or a read's errno.
template <class OnLine>
int for_each_line(int fd, std::size_t max_line_bytes, OnLine&& on_line) {
  std::vector<char> buffer(std::size_t(1) << 16);
  std::string line;
  bool too_long = false;
  std::uint64_t number = 0;
  for (std::uint64_t at = 0;;) {
    const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
    at += static_cast<std::uint64_t>(n);
    std::string_view chunk(buffer.data(), static_cast<std::size_t>(n));
    while (!chunk.empty()) {
      const auto end = chunk.find('\n');
      const auto piece = chunk.substr(0, end);
      if (!too_long && line.size() + piece.size() > max_line_bytes) {
        too_long = true;
        line.clear();
      }
      if (!too_long) line.append(piece);
      if (end == std::string_view::npos) break;
      chunk.remove_prefix(end + 1);
      if (!on_line(++number, std::string_view(line), true, too_long)) return 0;
      line.clear();
      too_long = false;
    }
  }
  if (!line.empty() || too_long) on_line(++number, std::string_view(line), false, too_long);
  return 0;
}

// The envelope on one line of the file, or why the line is not one.
inline expected<envelope, std::string> read_envelope_line(std::string_view text) {
  auto e = parse_envelope(text);
  if (!e) {
    const auto& error = e.error();
    return unexpected(error.path.empty() ? "is not an envelope: " + error.message
                                         : fmt::format("is not an envelope: {}: {}", error.path, error.message));
  }
  return std::move(*e);
}

// Whether `tail`, a last line without its newline, is the start of a line
// serialize() wrote: an envelope's opening, then JSON cut short (also in the
// middle of a UTF-8 sequence). Such a tail is what a write cut by a crash
// leaves; anything else was written by someone else.
inline bool is_torn_envelope_line(std::string_view tail) {
  if (tail.size() <= envelope_line_start.size()) return envelope_line_start.starts_with(tail);
  if (!tail.starts_with(envelope_line_start)) return false;
  boost::json::parse_options strict;
  strict.max_depth = 1024;  // deeper than any envelope parse_envelope() reads back
  boost::json::stream_parser parser({}, strict);
  boost::system::error_code error;
  parser.write(tail.data(), tail.size(), error);
  return !error && !parser.done();
}

inline std::string refusal(const std::filesystem::path& path, std::uint64_t line, std::string_view why) {
  return fmt::format("{}: line {} {}; a file that is not JSON Lines of envelopes is left unchanged", path.string(),
                     line, why);
}

// The file a path names, opened and locked.
struct opened_file {
  owned_fd file{-1};
  struct stat info {};
  bool created = false;
};

// Opens and locks the file `path` names: a purge may have renamed a compacted
// file over the one opened, which is then opened again. A file that is not
// regular (a FIFO, /dev/stdout) is opened only.
inline expected<void, sink_error> open_locked(const std::filesystem::path& path, opened_file& out) {
  std::string refusal;
  for (int attempt = 0;; ++attempt) {
    out.file.fd = open_private_file(path, O_RDWR | O_APPEND | O_CLOEXEC, out.created, refusal);
    if (!refusal.empty()) return unexpected(sink_error{sink_errc::unsafe_file, std::move(refusal)});
    if (out.file.fd < 0) return unexpected(io_failure("cannot open", path, errno));
    if (::fstat(out.file.fd, &out.info) != 0) return unexpected(io_failure("cannot stat", path, errno));
    if (!S_ISREG(out.info.st_mode)) return {};
    if (::flock(out.file.fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) {
        return unexpected(sink_error{sink_errc::unavailable,
                                     path.string() + " is locked by another writer (a jsonl_file_sink or a purge, "
                                                     "in this process or another, has it open)"});
      }
      return unexpected(io_failure("cannot lock", path, errno));
    }
    if (names_file(path, out.info)) return {};
    ::close(out.file.release());
    if (attempt == 3) return unexpected(replaced_while_opening(path));
  }
}

// Every whole line's envelope id (of ids stored twice, the first line
// answers), and the last line when its newline is missing.
struct line_scan {
  std::unordered_map<std::string, std::uint64_t> index;
  std::uint64_t lines = 0;
  std::uint64_t whole = 0;  // bytes in whole lines
  std::string tail;
};

// Indexes every whole line; stops at the first one that is not an envelope.
inline expected<line_scan, sink_error> index_lines(int fd, const std::filesystem::path& path,
                                                   std::size_t max_line_bytes) {
  line_scan scan;
  std::optional<sink_error> refused;
  const int read_error = for_each_line(
      fd, max_line_bytes, [&](std::uint64_t number, std::string_view text, bool terminated, bool too_long) {
        if (too_long) {
          const auto why = fmt::format("is longer than {} bytes", max_line_bytes);
          refused = sink_error{sink_errc::rejected, refusal(path, number, why)};
          return false;
        }
        if (!terminated) {
          scan.tail = text;
          return true;
        }
        auto e = read_envelope_line(text);
        if (!e) {
          refused = sink_error{sink_errc::rejected, refusal(path, number, e.error())};
          return false;
        }
        scan.index.emplace(std::move(e->dlq_id), number);
        scan.lines = number;
        scan.whole += text.size() + 1;
        return true;
      });
  if (read_error != 0) return unexpected(io_failure("cannot read", path, read_error));
  if (refused) return unexpected(std::move(*refused));
  return scan;
}

// A last line without its newline: a whole envelope (whose publish may have
// returned) is kept and ended; the start of one (a write a crash cut short,
// whose publish never returned) is cut off; anything else is refused.
// Returns the bytes cut off.
inline expected<std::size_t, sink_error> settle_tail(int fd, const std::filesystem::path& path, line_scan& scan) {
  if (scan.tail.empty()) return 0;
  if (auto e = read_envelope_line(scan.tail)) {
    if (::write(fd, "\n", 1) != 1 || ::fdatasync(fd) != 0) {
      return unexpected(io_failure("cannot end the last line of", path, errno));
    }
    scan.index.emplace(std::move(e->dlq_id), ++scan.lines);
    scan.whole += scan.tail.size() + 1;
    return 0;
  }
  if (is_torn_envelope_line(scan.tail)) {
    if (::ftruncate(fd, static_cast<off_t>(scan.whole)) != 0 || ::fdatasync(fd) != 0) {
      return unexpected(io_failure("cannot cut a half-written last line off", path, errno));
    }
    return scan.tail.size();
  }
  return unexpected(sink_error{
      sink_errc::rejected,
      refusal(path, scan.lines + 1, "has no newline and is neither an envelope nor the start of one")});
}

}  // namespace detail

LLMDLQ_INLINE expected<jsonl_file_sink, sink_error> jsonl_file_sink::open(const std::filesystem::path& path,
                                                                          jsonl_file_options options) {
  detail::opened_file opened;
  if (auto locked = detail::open_locked(path, opened); !locked) return unexpected(std::move(locked.error()));
  if (!S_ISREG(opened.info.st_mode)) return jsonl_file_sink(path, opened.file.release(), false, 0, 0, {}, 0, options);
  auto scan = detail::index_lines(opened.file.fd, path, options.max_line_bytes);
  if (!scan) return unexpected(std::move(scan.error()));
  auto recovered = detail::settle_tail(opened.file.fd, path, *scan);
  if (!recovered) return unexpected(std::move(recovered.error()));
  if (opened.created || opened.info.st_size == 0) {
    if (const int error = detail::sync_directory_of(path)) {
      return unexpected(detail::io_failure("cannot sync the directory of", path, error));
    }
  }
  return jsonl_file_sink(path, opened.file.release(), true, scan->whole, scan->lines, std::move(scan->index),
                         *recovered, options);
}

LLMDLQ_INLINE jsonl_file_sink::jsonl_file_sink(std::filesystem::path path, int fd, bool regular, std::uint64_t size,
                                               std::uint64_t lines, line_index index, std::size_t recovered,
                                               jsonl_file_options options) noexcept
    : path_(std::move(path)),
      fd_(fd),
      regular_(regular),
      size_(size),
      lines_(lines),
      index_(std::move(index)),
      recovered_bytes_(recovered),
      options_(options) {}

LLMDLQ_INLINE jsonl_file_sink::jsonl_file_sink(jsonl_file_sink&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      regular_(other.regular_),
      broken_(other.broken_),
      size_(other.size_),
      lines_(other.lines_),
      index_(std::move(other.index_)),
      recovered_bytes_(other.recovered_bytes_),
      options_(other.options_) {}

LLMDLQ_INLINE jsonl_file_sink::~jsonl_file_sink() {
  if (fd_ >= 0) ::close(fd_);  // also releases the lock
}

LLMDLQ_INLINE expected<std::string, sink_error> jsonl_file_sink::line_for(const envelope& e) const {
  if (e.dlq_id.empty()) {
    return unexpected(sink_error{sink_errc::rejected,
                                 "an envelope without a dlq_id cannot be stored once: it has no identity"});
  }
  std::string line = serialize(e);
  if (line.size() > options_.max_line_bytes) {
    return unexpected(sink_error{sink_errc::rejected,
                                 fmt::format("envelope {} takes {} bytes, more than max_line_bytes ({}) of {}",
                                             e.dlq_id, line.size(), options_.max_line_bytes, path_.string())});
  }
  // open() refuses a file holding a line that does not read back: never write one.
  if (auto back = detail::read_envelope_line(line); !back) {
    return unexpected(sink_error{sink_errc::rejected, fmt::format("envelope '{}' would not read back from {}: it {}",
                                                                  e.dlq_id, path_.string(), back.error())});
  }
  line.push_back('\n');
  return line;
}

LLMDLQ_INLINE receipt jsonl_file_sink::stored_at(const std::string& dlq_id, std::uint64_t line, bool duplicate) const {
  return receipt{dlq_id, duplicate, path_.string() + ":" + std::to_string(line)};
}

LLMDLQ_INLINE expected<void, sink_error> jsonl_file_sink::append(const std::string& lines) {
  if (fd_ < 0) return unexpected(sink_error{sink_errc::closed, "the sink was moved from"});
  if (broken_) {
    return unexpected(sink_error{sink_errc::io_error,
                                 path_.string() + " ends with part of a failed write that could not be cut off: "
                                                  "open the file again to repair it"});
  }
  // Cuts the file back to its whole lines, if it holds exactly them and the
  // `added` bytes of this append; otherwise stops appending to it.
  auto cut_back = [&](std::uint64_t added) {
    if (!regular_) return true;  // nothing to cut on a device or pipe
    struct stat info;
    if (::fstat(fd_, &info) == 0 && static_cast<std::uint64_t>(info.st_size) == size_ + added &&
        ::ftruncate(fd_, static_cast<off_t>(size_)) == 0) {
      return true;
    }
    broken_ = true;
    return false;
  };
  std::size_t written = 0;
  while (written < lines.size()) {
    const ssize_t n = ::write(fd_, lines.data() + written, lines.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      if (written > 0 && !cut_back(written)) {
        return unexpected(detail::io_failure("cannot write (and cannot cut back a partial line in)", path_, error));
      }
      return unexpected(detail::io_failure("cannot write", path_, error));
    }
    written += static_cast<std::size_t>(n);
  }
  if (options_.sync && ::fdatasync(fd_) != 0) {
    const int error = errno;
    (void)cut_back(written);  // not durable: it must not count, nor be found on the next open
    return unexpected(detail::io_failure("cannot sync", path_, error));
  }
  size_ += lines.size();
  return {};
}

LLMDLQ_INLINE expected<receipt, sink_error> jsonl_file_sink::publish(const envelope& e) {
  auto line = line_for(e);
  if (!line) return unexpected(std::move(line.error()));
  std::lock_guard lock(mutex_);
  if (const auto stored = index_.find(e.dlq_id); stored != index_.end()) {
    return stored_at(stored->first, stored->second, true);
  }
  if (auto done = append(*line); !done) return unexpected(std::move(done.error()));
  index_.emplace(e.dlq_id, ++lines_);
  return stored_at(e.dlq_id, lines_, false);
}

LLMDLQ_INLINE expected<std::vector<receipt>, sink_error> jsonl_file_sink::publish_batch(
    std::span<const envelope> batch) {
  std::vector<std::string> lines;
  lines.reserve(batch.size());
  for (const auto& e : batch) {
    auto line = line_for(e);
    if (!line) return unexpected(std::move(line.error()));
    lines.push_back(std::move(*line));
  }
  std::lock_guard lock(mutex_);
  std::vector<receipt> receipts;
  receipts.reserve(batch.size());
  std::unordered_map<std::string_view, std::uint64_t> added;  // new in this batch: id -> line
  std::string text;
  std::uint64_t last = lines_;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::string& id = batch[i].dlq_id;
    if (const auto stored = index_.find(id); stored != index_.end()) {
      receipts.push_back(stored_at(id, stored->second, true));
    } else if (const auto earlier = added.find(id); earlier != added.end()) {
      receipts.push_back(stored_at(id, earlier->second, true));
    } else {
      added.emplace(id, ++last);
      text += lines[i];
      receipts.push_back(stored_at(id, last, false));
    }
  }
  if (!text.empty()) {
    if (auto done = append(text); !done) return unexpected(std::move(done.error()));
  }
  lines_ = last;
  for (const auto& [id, line] : added) index_.emplace(std::string(id), line);
  return receipts;
}

namespace detail {

// A purge's new file, removed unless it was kept. It has a name (`path`)
// only once it is about to replace the old file, or from the start where
// the file system cannot make an unnamed one.
struct temporary_file {
  std::string path;
  owned_fd file{-1};
  bool kept = false;
  ~temporary_file() {
    if (!kept && !path.empty()) ::unlink(path.c_str());
  }
};

inline std::filesystem::path directory_of(const std::filesystem::path& path) {
  auto directory = path.parent_path();
  return directory.empty() ? std::filesystem::path(".") : directory;
}

// Whether the open file `fd` is marked as a compaction of the file named `name`.
inline bool marked_as_compaction_of(int fd, std::string_view name) {
  char value[256];
  const ssize_t n = ::fgetxattr(fd, jsonl_compaction_attribute, value, sizeof value);
  return n >= 0 && std::string_view(value, static_cast<std::size_t>(n)) == name;
}

// Removes the `<name>.purge-XXXXXX` files a purge killed before its rename
// left beside `path`: those that are this user's regular files marked as a
// compaction of this file. Anything else of that name, another user's file
// or a link (in a directory anyone may write, as /tmp), is someone else's,
// and stays. Nobody else can rename or replace a file of this user's in a
// directory only this user or a sticky bit guards (directory_chain_refusal),
// so the file checked is the one removed. Called under the file's lock,
// which every purge holds while its own such file exists.
inline void remove_abandoned_compactions(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  const std::string prefix = name + ".purge-";
  const int directory_fd = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd < 0) return;
  DIR* directory = ::fdopendir(directory_fd);
  if (directory == nullptr) {
    ::close(directory_fd);
    return;
  }
  while (const struct dirent* entry = ::readdir(directory)) {
    const std::string_view entry_name = entry->d_name;
    if (entry_name.size() != prefix.size() + 6 || !entry_name.starts_with(prefix)) continue;
    struct stat named {};
    if (::fstatat(directory_fd, entry->d_name, &named, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(named.st_mode) || named.st_uid != ::geteuid()) continue;
    const owned_fd file{
        ::openat(directory_fd, entry->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
    struct stat opened {};
    if (file.fd < 0 || ::fstat(file.fd, &opened) != 0 || opened.st_dev != named.st_dev ||
        opened.st_ino != named.st_ino || !marked_as_compaction_of(file.fd, name)) {
      continue;
    }
    ::unlinkat(directory_fd, entry->d_name, 0);
  }
  ::closedir(directory);
}

// Creates the new file of a compaction of `path` in its directory, mode
// 0600, marked as such before it has a name: unnamed (O_TMPFILE) while it
// is written, so a purge killed meanwhile leaves nothing. Where the file
// system has no unnamed files it is `<name>.purge-XXXXXX` from the start,
// marked right after; where it keeps no extended attributes, one a crash
// left stays for its owner to remove.
inline expected<void, sink_error> create_compaction(const std::filesystem::path& path, temporary_file& out) {
  const std::string name = path.filename().string();
  out.file.fd = ::open(directory_of(path).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (out.file.fd < 0) {
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
      return unexpected(io_failure("cannot create a file beside", path, errno));
    }
    std::string temporary = path.string() + ".purge-XXXXXX";
    out.file.fd = ::mkostemp(temporary.data(), O_CLOEXEC);
    if (out.file.fd < 0) return unexpected(io_failure("cannot create a file beside", path, errno));
    out.path = std::move(temporary);
  }
  (void)::fsetxattr(out.file.fd, jsonl_compaction_attribute, name.data(), name.size(), 0);
  return {};
}

// Gives an unnamed compaction its name, `<name>.purge-` and six random
// letters or digits beside `path`, for the rename over it; 0 or an errno.
inline int name_compaction(const std::filesystem::path& path, temporary_file& compacted) {
  if (!compacted.path.empty()) return 0;
  static constexpr std::string_view letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const std::string by_descriptor = "/proc/self/fd/" + std::to_string(compacted.file.fd);
  for (int attempt = 0; attempt < 100; ++attempt) {
    unsigned char random[6];
    if (::getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) return errno ? errno : EIO;
    std::string candidate = path.string() + ".purge-";
    for (const unsigned char byte : random) candidate.push_back(letters[byte % letters.size()]);
    // Root may link the descriptor itself; others link it through /proc.
    if (::linkat(compacted.file.fd, "", AT_FDCWD, candidate.c_str(), AT_EMPTY_PATH) == 0 ||
        (errno != EEXIST &&
         ::linkat(AT_FDCWD, by_descriptor.c_str(), AT_FDCWD, candidate.c_str(), AT_SYMLINK_FOLLOW) == 0)) {
      compacted.path = std::move(candidate);
      return 0;
    }
    if (errno != EEXIST) return errno;
  }
  return EEXIST;
}

// Appends `line` and a newline to the audit file beside `path`, synced. The
// audit is held to the DLQ's own rules: another user's file, or one others
// can write, would let them rewrite what was purged and by whom.
inline expected<void, sink_error> append_audit_line(const std::filesystem::path& path, const std::string& line) {
  const auto audit = jsonl_purge_audit_path(path);
  bool created = false;
  std::string refusal;
  const owned_fd file{open_private_file(audit, O_WRONLY | O_APPEND | O_CLOEXEC, created, refusal)};
  if (!refusal.empty()) return unexpected(sink_error{sink_errc::unsafe_file, std::move(refusal)});
  if (file.fd < 0) return unexpected(io_failure("cannot open", audit, errno));
  if (const int error = write_all(file.fd, line + "\n")) return unexpected(io_failure("cannot write", audit, error));
  if (::fdatasync(file.fd) != 0) return unexpected(io_failure("cannot sync", audit, errno));
  return {};
}

// Opens the file to purge and, unless this is a dry run, locks the one the
// path names: no link (the rename would replace it), nothing others could swap.
inline expected<void, sink_error> open_for_purge(const std::filesystem::path& path, bool dry_run, opened_file& out) {
  for (int attempt = 0;; ++attempt) {
    out.file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (out.file.fd < 0 && errno == ELOOP)
      return unexpected(sink_error{sink_errc::unsafe_file, symbolic_link_refusal(path)});
    if (out.file.fd < 0) return unexpected(io_failure("cannot open", path, errno));
    if (::fstat(out.file.fd, &out.info) != 0) return unexpected(io_failure("cannot stat", path, errno));
    if (!S_ISREG(out.info.st_mode)) {
      return unexpected(sink_error{sink_errc::rejected, path.string() + " is not a regular file: nothing to purge"});
    }
    if (auto why = exposed_file_refusal(path, out.info))
      return unexpected(sink_error{sink_errc::unsafe_file, std::move(*why)});
    if (dry_run) return {};
    if (::flock(out.file.fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) {
        return unexpected(sink_error{sink_errc::unavailable,
                                     path.string() + " is locked by a writer (a jsonl_file_sink or another purge "
                                                     "has it open): stop it, then purge"});
      }
      return unexpected(io_failure("cannot lock", path, errno));
    }
    if (names_file(path, out.info)) return {};  // else another purge replaced it meanwhile
    ::close(out.file.release());
    if (attempt == 3) return unexpected(replaced_while_opening(path));
  }
}

// Reads every line, counting the expired ones in `report` and writing the
// kept ones to `compacted` (nothing is written in a dry run).
inline expected<void, sink_error> compact_lines(int fd, const std::filesystem::path& path, const purge_request& request,
                                                std::size_t max_line_bytes, temporary_file& compacted,
                                                purge_report& report) {
  std::string pending;  // kept lines not yet written
  std::optional<sink_error> refused;
  int write_error = 0;
  const auto keep = [&](std::string_view text) {
    if (request.dry_run) return true;
    pending.append(text).push_back('\n');
    if (pending.size() >= (std::size_t(1) << 20)) {
      write_error = write_all(compacted.file.fd, pending);
      pending.clear();
    }
    return write_error == 0;
  };
  const int read_error = for_each_line(
      fd, max_line_bytes, [&](std::uint64_t number, std::string_view text, bool terminated, bool too_long) {
        if (too_long) {
          refused = sink_error{sink_errc::rejected,
                               refusal(path, number, fmt::format("is longer than {} bytes", max_line_bytes))};
          return false;
        }
        auto e = read_envelope_line(text);
        if (!e) {
          if (!terminated && is_torn_envelope_line(text)) return true;  // a publish that never returned
          refused = sink_error{sink_errc::rejected, refusal(path, number,
                                                            terminated ? e.error()
                                                                       : "has no newline and is neither "
                                                                         "an envelope nor the start of one")};
          return false;
        }
        if (expired(*e, request.now)) {
          report.add(*e->expires_at);
          if (request.on_piece && report.count % 256 == 0) request.on_piece(report);
          return true;
        }
        return keep(text);
      });
  if (read_error != 0) return unexpected(io_failure("cannot read", path, read_error));
  if (refused) return unexpected(std::move(*refused));
  if (request.dry_run) return {};
  if (write_error == 0 && !pending.empty()) write_error = write_all(compacted.file.fd, pending);
  if (write_error != 0) return unexpected(io_failure("cannot write the compacted file of", path, write_error));
  return {};
}

// The audit says what a purge will delete before it deletes (an intent line,
// synced) and that it did after: no crash or full disk deletes letters
// without an audit line.
inline expected<void, sink_error> replace_with_compacted(const std::filesystem::path& path, const struct stat& info,
                                                         temporary_file& compacted, const purge_report& report) {
  const auto audit_line = [&](std::string_view phase) {
    auto line = to_json(report);
    line["phase"] = phase;
    return boost::json::serialize(line);
  };
  if (report.count > 0) {
    const int fd = compacted.file.fd;
    (void)::fchown(fd, info.st_uid, info.st_gid);  // kept where allowed; a non-root purge keeps its own
    if (::fchmod(fd, info.st_mode & 07777) != 0) {
      return unexpected(io_failure("cannot chmod the compacted file of", path, errno));
    }
    if (::fsync(fd) != 0) return unexpected(io_failure("cannot sync the compacted file of", path, errno));
    if (auto intended = append_audit_line(path, audit_line("intent")); !intended) {
      return unexpected(std::move(intended.error()));
    }
    if (const int error = name_compaction(path, compacted)) {
      return unexpected(io_failure("cannot name the compacted file of", path, error));
    }
    if (::rename(compacted.path.c_str(), path.c_str()) != 0) {
      return unexpected(io_failure("cannot rename the compacted file over", path, errno));
    }
    compacted.kept = true;
    (void)::fremovexattr(fd, jsonl_compaction_attribute);  // the DLQ itself now
  }
  if (const int error = sync_directory_of(path))
    return unexpected(io_failure("cannot sync the directory of", path, error));
  if (auto audited = append_audit_line(path, audit_line("done")); !audited) {
    auto error = std::move(audited.error());
    if (report.count > 0) error.message = "the purge is done and its intent audited, but " + error.message;
    return unexpected(std::move(error));
  }
  return {};
}

}  // namespace detail

LLMDLQ_INLINE expected<purge_report, sink_error> purge_jsonl_file(const std::filesystem::path& path,
                                                                  const purge_request& request,
                                                                  jsonl_file_options options) {
  if (request.operator_name.empty()) {
    return unexpected(sink_error{sink_errc::rejected, "a purge needs an operator name for its audit"});
  }
  // The compacted file is renamed into the same directory: nobody else may be able to swap it there.
  if (auto why = detail::directory_chain_refusal(path))
    return unexpected(sink_error{sink_errc::unsafe_file, std::move(*why)});
  detail::opened_file opened;
  if (auto open = detail::open_for_purge(path, request.dry_run, opened); !open)
    return unexpected(std::move(open.error()));
  // The kept lines go to a new file beside the old one (not in a dry run).
  detail::temporary_file compacted;
  if (!request.dry_run) {
    detail::remove_abandoned_compactions(path);
    if (auto created = detail::create_compaction(path, compacted); !created)
      return unexpected(std::move(created.error()));
  }
  auto report = purge_report::for_request(request);
  auto read = detail::compact_lines(opened.file.fd, path, request, options.max_line_bytes, compacted, report);
  if (!read) return unexpected(std::move(read.error()));
  if (request.dry_run) return report;
  if (auto replaced = detail::replace_with_compacted(path, opened.info, compacted, report); !replaced) {
    return unexpected(std::move(replaced.error()));
  }
  return report;
}

LLMDLQ_INLINE expected<jsonl_contents, sink_error> read_jsonl_envelopes(const std::filesystem::path& path,
                                                                        std::size_t max_line_bytes) {
  const detail::owned_fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return unexpected(detail::io_failure("cannot open", path, errno));
  jsonl_contents contents;
  const int read_error = detail::for_each_line(
      file.fd, max_line_bytes, [&](std::uint64_t number, std::string_view text, bool terminated, bool too_long) {
        if (too_long) {
          contents.skipped.push_back({number, fmt::format("is longer than {} bytes", max_line_bytes)});
        } else if (auto e = detail::read_envelope_line(text)) {
          contents.envelopes.push_back(std::move(*e));  // a last line without '\n' counts when it is whole
        } else if (!terminated) {
          contents.skipped.push_back({number,
                                      "has no newline: a publish still being written, or one a crash cut short (it " +
                                          e.error() + ")"});
        } else {
          contents.skipped.push_back({number, std::move(e.error())});
        }
        return true;
      });
  if (read_error != 0) return unexpected(detail::io_failure("cannot read", path, read_error));
  contents.skipped_lines = contents.skipped.size();
  return contents;
}

LLMDLQ_END_NAMESPACE
