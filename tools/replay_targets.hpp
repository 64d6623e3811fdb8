// SPDX-License-Identifier: MIT
// Where `llmdlq replay --to` may send recovered payloads: the allowlist that
// guards it, and the JSON Lines target.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include <llmdlq/llm/replayer.hpp>

namespace llmdlq::cli {

/// The file `--to jsonl:PATH` names, as the allowlist sees it: absolute,
/// with `.`, `..` and symbolic links resolved, so that no spelling of a
/// path leads out of an allowed prefix.
expected<std::filesystem::path, std::string> resolve_jsonl_target(std::string_view path);

/// Whether `target` is on the allowlist in `allowlist_file`: one target per
/// line, exact, or a prefix ending in `*`; `#` starts a comment. The error
/// says why not.
expected<void, std::string> check_allowlist(std::string_view target, const std::filesystem::path& allowlist_file);

/// The file a `--to` spec names, once the allowlist (`allowlist`, or else
/// $LLMDLQ_REPLAY_ALLOWLIST) allows it; the error says why not (a usage error).
expected<std::filesystem::path, std::string> allowed_jsonl_target(std::string_view to, std::string_view allowlist);

/// Appends each recovered payload as a JSON line {"idempotency_key", "dlq_id",
/// "source", "output"} (a correction also "resolved_by" and "note") and
/// syncs it. A last line a crash cut short is cut off when it opens. It reads the file's keys when it opens,
/// so a payload delivered before a crash is not written twice. A new file is
/// its owner's only (0600); one that group or others can write is refused.
class jsonl_replay_target final : public replay_target {
 public:
  /// Fails with target_refused for a file it must not use (another user's,
  /// one others can write, one too large to read), target_unavailable when
  /// it cannot open or read it.
  static expected<jsonl_replay_target, replay_error> open(const std::filesystem::path& path);
  jsonl_replay_target(jsonl_replay_target&&) noexcept;
  jsonl_replay_target& operator=(jsonl_replay_target&&) noexcept;
  ~jsonl_replay_target() override;

  /// Fails with target_refused for an output that is not JSON,
  /// target_unavailable when the write or the sync fails.
  [[nodiscard]] expected<void, replay_error> deliver(const ledger_entry& entry) override;

 private:
  jsonl_replay_target(int fd, std::set<std::string> keys) : fd_(fd), keys_(std::move(keys)) {}
  int fd_ = -1;
  std::set<std::string> keys_;
};

}  // namespace llmdlq::cli
