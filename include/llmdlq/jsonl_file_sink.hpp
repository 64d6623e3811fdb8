// SPDX-License-Identifier: MIT
// A JSON Lines file of envelopes: one locked writer, appended and synced
// before publish returns, deduplicated by dlq_id, and checked on open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/purge.hpp"
#include "llmdlq/sink.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct jsonl_file_options {
  /// fdatasync after every publish (or batch). Turning it off trades
  /// durability for speed; the sink then no longer keeps its promise.
  bool sync = true;
  /// The longest line the file may hold. A publish whose envelope is longer
  /// is `rejected`; a longer line in the file makes open() refuse it. It
  /// bounds the memory that reading one line takes.
  std::size_t max_line_bytes = std::size_t(16) << 20;
};

/// A file of envelopes, one per line, that a single sink owns while it is open.
///
/// - One writer per file: open() takes an exclusive, non-blocking flock(2) on
///   the file and holds it until the sink is destroyed. Another sink, in this
///   process or another, gets `unavailable` ("locked by another writer")
///   instead of interleaving its lines. Processes that write the file
///   without the lock are not kept out, and a child forked after open()
///   shares the lock: only one of the two may publish. A sink that opened
///   the path while purge_jsonl_file() replaced the file opens the new file.
/// - Dedupe by dlq_id: open() reads the whole file (linear in its size) and
///   indexes every dlq_id with its line. Publishing a dlq_id the file already
///   holds, or one earlier in the same batch, writes nothing and returns a
///   receipt with `duplicate = true` and the stored line's location. The
///   stored envelope wins even if the new one differs.
/// - Whole lines only: each publish writes its line(s) with one append and
///   syncs before it returns. A failed write or sync is cut back off the file
///   (safe because nobody else appends); if even that fails, the sink refuses
///   further publishes until it is opened again.
/// - What open() repairs: a last line without its newline. If it is a whole
///   envelope it is kept and the newline appended (its publish may have
///   returned). If it is the start of one, as this sink writes it (it opens
///   with `{"envelope_version":"1"` and is JSON cut short, possibly inside a
///   string, escape, number or UTF-8 sequence), it is a publish that never
///   returned: it is cut off and its size reported by recovered_bytes().
/// - What open() refuses, changing nothing (`rejected`): any line that does
///   not read back as an envelope, a line over `max_line_bytes`, and a last
///   line that is neither an envelope nor the start of one. A SQLite database
///   or another program's log given by mistake is never modified.
/// - A new file is created with mode 0600 whatever the umask (a DLQ holds
///   raw prompts and responses) and its directory is synced, so the file
///   survives a crash. An existing file that group or others can write, or a
///   path that is a symbolic link to a file, is refused with `unsafe_file`
///   and left untouched.
/// - A path that is not a regular file (/dev/full, a pipe) is written as is:
///   not locked, read, checked or repaired on open.
///
/// Every line the sink writes reads back with parse_envelope(): an envelope
/// that would not (an empty dlq_id, another version) is `rejected` rather than
/// stored in a form that would make the file unopenable.
///
/// Thread-safe: publishes from several threads are serialized.
class jsonl_file_sink final : public sink {
 public:
  [[nodiscard]] static LLMDLQ_INLINE expected<jsonl_file_sink, sink_error> open(
      const std::filesystem::path& path, jsonl_file_options options = {});

  jsonl_file_sink(jsonl_file_sink&& other) noexcept;
  jsonl_file_sink& operator=(jsonl_file_sink&&) = delete;
  jsonl_file_sink(const jsonl_file_sink&) = delete;
  ~jsonl_file_sink() override;

  [[nodiscard]] LLMDLQ_INLINE expected<receipt, sink_error> publish(const envelope& e) override;
  /// Writes the batch's new envelopes with one append and one sync. If any
  /// envelope is rejected, or the write fails, nothing is stored.
  [[nodiscard]] LLMDLQ_INLINE expected<std::vector<receipt>, sink_error> publish_batch(
      std::span<const envelope> batch) override;

  /// Bytes of a half-written last line removed when the file was opened.
  [[nodiscard]] std::size_t recovered_bytes() const noexcept { return recovered_bytes_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  [[nodiscard]] std::string_view kind() const noexcept override { return "jsonl"; }

 private:
  // dlq_id -> its 1-based line. Costs about 120 bytes per stored record on a
  // 64-bit build (the 36-character id on the heap, the string, the line
  // number, the hash node and its bucket): 120 MB for a million records.
  using line_index = std::unordered_map<std::string, std::uint64_t>;

  jsonl_file_sink(std::filesystem::path path, int fd, bool regular, std::uint64_t size, std::uint64_t lines,
                  line_index index, std::size_t recovered, jsonl_file_options options) noexcept;
  expected<std::string, sink_error> line_for(const envelope& e) const;
  expected<void, sink_error> append(const std::string& lines);
  receipt stored_at(const std::string& dlq_id, std::uint64_t line, bool duplicate) const;

  std::filesystem::path path_;
  int fd_ = -1;
  bool regular_ = true;      // a regular file: locked, indexed, cut back on failure
  bool broken_ = false;      // a failed write could not be cut back
  std::uint64_t size_ = 0;   // bytes of whole lines in the file
  std::uint64_t lines_ = 0;  // lines in the file
  line_index index_;
  std::size_t recovered_bytes_ = 0;
  jsonl_file_options options_;
  std::mutex mutex_;
};

/// A line of a JSON Lines file that is not an envelope.
struct jsonl_skipped_line {
  std::uint64_t line = 0;  ///< 1-based
  std::string reason;
};

/// The envelopes in a JSON Lines file, and the lines that were not envelopes.
struct jsonl_contents {
  std::vector<envelope> envelopes;
  std::vector<jsonl_skipped_line> skipped;  ///< in file order, each with its number and why
  std::size_t skipped_lines = 0;            ///< skipped.size()
};

/// Reads a file jsonl_file_sink wrote, without locking it. Nothing is skipped
/// silently: a line that is not an envelope (another program's output, a
/// line over `max_line_bytes`, a last line whose publish is still running or
/// never returned) is listed in `skipped` with its number and the reason, and
/// the envelopes around it are still returned, so that an operator can
/// recover what a damaged file holds. Fails only when the file cannot be read.
[[nodiscard]] LLMDLQ_INLINE expected<jsonl_contents, sink_error> read_jsonl_envelopes(
    const std::filesystem::path& path, std::size_t max_line_bytes = jsonl_file_options{}.max_line_bytes);

/// Removes the envelopes whose expires_at is at or before `request.now` from
/// a file jsonl_file_sink writes (envelopes without one stay), by compaction:
///
/// - It takes the file's flock, as a sink does, and refuses (`unavailable`,
///   changing nothing) while a sink or another purge holds it: a sink holds
///   it for as long as it is open, so waiting could be forever. Stop the
///   writer, purge, open it again.
/// - The kept lines, byte for byte, go to a new file in the same directory
///   (unnamed while it is written, then `<name>.purge-XXXXXX`, with the old
///   file's mode and, where allowed, owner), which is fsynced and renamed
///   over the old one, and the directory synced: a crash leaves the old file
///   or the new one, never a mix. A crash between naming and renaming can
///   leave the new file behind; the next purge removes it, and only it: a
///   file of that name is removed when it is this user's regular file
///   marked as this file's compaction (detail::jsonl_compaction_attribute),
///   never another user's file or a link, as others may leave in a
///   directory anyone may write. (Where the file system has no unnamed
///   files, the new file has its name from the start; where it keeps no
///   extended attributes, what a crash left stays for its owner to remove.)
/// - Lines that are not envelopes make it refuse (`rejected`, nothing
///   changed), as jsonl_file_sink::open() does; so does a last line without
///   a newline that is neither an envelope nor the start of one. The start
///   of one (a publish a crash cut short) is dropped, not counted.
/// - Audit: each purge that is not a dry run appends to_json(report) with
///   `"phase": "done"` as one line to `<path>.audit.jsonl` (created 0600),
///   synced, after the rename; one that deletes appends the same line with
///   `"phase": "intent"` before it, and deletes nothing when it cannot. A
///   crash or a full disk between the two leaves the intent: letters are
///   never deleted without an audit line.
/// - A dry run reads the file without the lock (it may run beside a sink)
///   and writes nothing. Nothing to purge: the file is not rewritten, the
///   purge is still audited.
[[nodiscard]] LLMDLQ_INLINE expected<purge_report, sink_error> purge_jsonl_file(
    const std::filesystem::path& path, const purge_request& request, jsonl_file_options options = {});

namespace detail {
/// The extended attribute that marks a purge's new file as its own (its value:
/// the name of the file it compacts) from before the file has a name until
/// it replaces the old one. A purge removes a `<name>.purge-XXXXXX` that a
/// crash left behind only when it is this user's regular file with that mark.
inline constexpr char jsonl_compaction_attribute[] = "user.llmdlq.compaction";
}  // namespace detail

/// Where purge_jsonl_file() writes a file's audit lines: `<path>.audit.jsonl`.
[[nodiscard]] inline std::filesystem::path jsonl_purge_audit_path(const std::filesystem::path& path) {
  return std::filesystem::path(path.string() + ".audit.jsonl");
}

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/jsonl_file_sink.ipp"
#endif
