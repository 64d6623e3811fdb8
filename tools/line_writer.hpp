// SPDX-License-Identifier: MIT
// Writes result lines to a file descriptor and knows how many of them
// arrived whole (and makes the JSON text of every line the tool prints): a command whose output fails (a full disk, a closed pipe)
// says how far its output got and exits non-zero instead of losing results.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/fwd.hpp>

namespace llmdlq::cli {

/// The JSON text of `value`, every byte of it valid UTF-8: a string holding
/// bytes that are not (a capture's, a file name's, a stored field's) has
/// each such byte replaced by U+FFFD, as the library does to what it stores.
/// Every line of JSON the tool prints is made by this.
std::string json_text(const boost::json::value& value);

class line_writer {
 public:
  /// `fd` stays the caller's. Lines are buffered up to `buffer_bytes`.
  explicit line_writer(int fd, std::size_t buffer_bytes = 64 * 1024) : fd_(fd), limit_(buffer_bytes) {}
  line_writer(const line_writer&) = delete;
  line_writer& operator=(const line_writer&) = delete;

  /// Queues `line` and a newline; false once a write has failed (nothing more is written).
  bool write_line(std::string_view line);
  /// Writes what is queued; false once a write has failed.
  bool flush();

  [[nodiscard]] bool failed() const noexcept { return error_ != 0; }
  /// The errno of the failed write.
  [[nodiscard]] int error() const noexcept { return error_; }
  /// Lines that reached the descriptor whole.
  [[nodiscard]] std::uint64_t lines_written() const noexcept { return written_; }
  /// "cannot write standard output after N lines: <strerror>", for the summary.
  [[nodiscard]] std::string failure(std::string_view what) const;

 private:
  int fd_;
  std::size_t limit_;
  std::string buffer_;
  std::uint64_t queued_ = 0;   // lines in buffer_
  std::uint64_t written_ = 0;  // lines written whole
  int error_ = 0;
};

}  // namespace llmdlq::cli
