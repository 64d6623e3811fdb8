// SPDX-License-Identifier: MIT
// A JSON Lines file of envelopes: appended, synced before publish returns,
// and repaired on open when a crash left a half-written last line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/sink.hpp"

namespace llmdlq {

struct jsonl_file_options {
  /// fdatasync after every publish (or batch). Turning it off trades
  /// durability for speed; the sink then no longer keeps its promise.
  bool sync = true;
};

/// One envelope per line. Each publish writes its line(s) with a single
/// append and syncs; a failed write is cut back off the file, so the file only
/// ever holds whole lines. A line a crash left half-written (no newline at
/// the end) is removed on open: that envelope's publish never returned, and
/// the host will publish it again.
///
/// Thread-safe. Within one process, only one sink should append to a file.
class jsonl_file_sink final : public sink {
 public:
  [[nodiscard]] static LLMDLQ_INLINE expected<jsonl_file_sink, sink_error> open(
      const std::filesystem::path& path, jsonl_file_options options = {});

  jsonl_file_sink(jsonl_file_sink&& other) noexcept;
  jsonl_file_sink& operator=(jsonl_file_sink&&) = delete;
  jsonl_file_sink(const jsonl_file_sink&) = delete;
  ~jsonl_file_sink() override;

  [[nodiscard]] LLMDLQ_INLINE expected<receipt, sink_error> publish(const envelope& e) override;
  [[nodiscard]] LLMDLQ_INLINE expected<std::vector<receipt>, sink_error> publish_batch(
      std::span<const envelope> batch) override;

  /// Bytes of a half-written last line removed when the file was opened.
  [[nodiscard]] std::size_t recovered_bytes() const noexcept { return recovered_bytes_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  jsonl_file_sink(std::filesystem::path path, int fd, std::uint64_t size, std::uint64_t lines,
                  std::size_t recovered, jsonl_file_options options) noexcept;
  expected<void, sink_error> append(const std::string& lines);

  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;   // bytes of whole lines in the file
  std::uint64_t lines_ = 0;  // lines in the file
  std::size_t recovered_bytes_ = 0;
  jsonl_file_options options_;
  std::mutex mutex_;
};

/// The envelopes in a JSON Lines file, and how many lines were not envelopes.
struct jsonl_contents {
  std::vector<envelope> envelopes;
  std::size_t skipped_lines = 0;
};

/// Reads a file jsonl_file_sink wrote.
[[nodiscard]] LLMDLQ_INLINE expected<jsonl_contents, sink_error> read_jsonl_envelopes(const std::filesystem::path& path);

}  // namespace llmdlq

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/jsonl_file_sink.ipp"
#endif
