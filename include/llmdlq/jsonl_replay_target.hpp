// SPDX-License-Identifier: MIT
// A JSON Lines file as a replay's target: each payload appended once, as
// one line, and synced before the delivery returns.
#pragma once

#include <filesystem>
#include <set>
#include <string>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/replay_error.hpp"
#include "llmdlq/replay_target.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Appends each payload as a JSON line {"idempotency_key", "source",
/// "dlq_id", "output"} (a correction also "resolved_by" and "note"), the
/// output as the ledger holds it (its numbers as written), and syncs it.
///
/// - Once per key: open() reads the keys of the lines already in the file,
///   and a delivery whose key the file holds writes nothing, so a payload
///   delivered before a crash (and not yet marked delivered in the ledger)
///   is not written twice.
/// - Whole lines: a last line a crash cut short is cut off when the file
///   opens (its payload is still undelivered in the ledger, and is written
///   again whole).
/// - The file is its owner's: a new one is created 0600 whatever the umask;
///   a symbolic link to a file, a file group or others can write or another
///   user owns, and a path another user could replace through a directory
///   above it are refused (target_refused), and left unchanged.
/// - Bounded: the earlier lines are read through the descriptor opened (never
///   from whatever the path names by then), up to the JSON Lines limit
///   (1 GiB); a longer file is refused. A path that is no regular file (a
///   device, a pipe) is written as is, never read.
///
/// Not thread-safe: one replay or delivery at a time writes through it.
/// Throws nothing but std::bad_alloc.
class jsonl_replay_target final : public replay_target {
 public:
  /// Opens (or creates) the file. Fails with target_refused for a file it
  /// must not use or one too large to read, target_unavailable when it
  /// cannot open, read or cut it.
  [[nodiscard]] static LLMDLQ_INLINE expected<jsonl_replay_target, replay_error> open(
      const std::filesystem::path& path);

  LLMDLQ_INLINE jsonl_replay_target(jsonl_replay_target&& other) noexcept;
  LLMDLQ_INLINE jsonl_replay_target& operator=(jsonl_replay_target&& other) noexcept;
  jsonl_replay_target(const jsonl_replay_target&) = delete;
  jsonl_replay_target& operator=(const jsonl_replay_target&) = delete;
  LLMDLQ_INLINE ~jsonl_replay_target() override;

  /// Fails with target_refused for an output that is not JSON,
  /// target_unavailable when the write or the sync fails.
  [[nodiscard]] LLMDLQ_INLINE expected<void, replay_error> deliver(const ledger_entry& entry) override;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  jsonl_replay_target(std::filesystem::path path, int fd) noexcept : path_(std::move(path)), fd_(fd) {}

  std::filesystem::path path_;
  int fd_ = -1;
  std::set<std::string> keys_;  // the keys the file holds
};

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/jsonl_replay_target.ipp"
#endif
