// SPDX-License-Identifier: MIT
// Definitions for jsonl_file_sink.hpp, on POSIX file descriptors.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "llmdlq/jsonl_file_sink.hpp"

namespace llmdlq {

namespace detail {

inline sink_error io_failure(std::string_view what, const std::filesystem::path& path, int error) {
  return sink_error{sink_errc::io_error, std::string(what) + " " + path.string() + ": " + std::strerror(error)};
}

}  // namespace detail

LLMDLQ_INLINE expected<jsonl_file_sink, sink_error> jsonl_file_sink::open(const std::filesystem::path& path,
                                                                          jsonl_file_options options) {
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) return unexpected(detail::io_failure("cannot open", path, errno));
  auto fail = [&](std::string_view what) {
    const int error = errno;
    ::close(fd);
    return unexpected(detail::io_failure(what, path, error));
  };
  struct stat info;
  if (::fstat(fd, &info) != 0) return fail("cannot stat");
  const auto size = static_cast<std::uint64_t>(info.st_size);

  // Count whole lines, and find where the last one ends: anything after it
  // is a line a crash left half-written.
  std::uint64_t lines = 0, whole = 0;
  char buffer[1 << 16];
  for (std::uint64_t at = 0; at < size;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("cannot read");
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] == '\n') {
        ++lines;
        whole = at + static_cast<std::uint64_t>(i) + 1;
      }
    }
    at += static_cast<std::uint64_t>(n);
  }
  if (whole != size) {
    if (::ftruncate(fd, static_cast<off_t>(whole)) != 0 || ::fdatasync(fd) != 0) return fail("cannot repair");
  }
  return jsonl_file_sink(path, fd, whole, lines, static_cast<std::size_t>(size - whole), options);
}

LLMDLQ_INLINE jsonl_file_sink::jsonl_file_sink(std::filesystem::path path, int fd, std::uint64_t size,
                                               std::uint64_t lines, std::size_t recovered,
                                               jsonl_file_options options) noexcept
    : path_(std::move(path)), fd_(fd), size_(size), lines_(lines), recovered_bytes_(recovered), options_(options) {}

LLMDLQ_INLINE jsonl_file_sink::jsonl_file_sink(jsonl_file_sink&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(other.size_),
      lines_(other.lines_),
      recovered_bytes_(other.recovered_bytes_),
      options_(other.options_) {}

LLMDLQ_INLINE jsonl_file_sink::~jsonl_file_sink() {
  if (fd_ >= 0) ::close(fd_);
}

LLMDLQ_INLINE expected<void, sink_error> jsonl_file_sink::append(const std::string& lines) {
  if (fd_ < 0) return unexpected(sink_error{sink_errc::closed, "the sink was moved from"});
  std::size_t written = 0;
  while (written < lines.size()) {
    const ssize_t n = ::write(fd_, lines.data() + written, lines.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      // Leave only whole lines: cut off what this append managed to write.
      if (written > 0 && ::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
        return unexpected(detail::io_failure("cannot write (and cannot cut back a partial line in)", path_, error));
      }
      return unexpected(detail::io_failure("cannot write", path_, error));
    }
    written += static_cast<std::size_t>(n);
  }
  if (options_.sync && ::fdatasync(fd_) != 0) {
    const int error = errno;
    (void)::ftruncate(fd_, static_cast<off_t>(size_));  // not durable: do not let it count
    return unexpected(detail::io_failure("cannot sync", path_, error));
  }
  size_ += lines.size();
  return {};
}

LLMDLQ_INLINE expected<receipt, sink_error> jsonl_file_sink::publish(const envelope& e) {
  std::string line = serialize(e);
  line.push_back('\n');
  std::lock_guard lock(mutex_);
  if (auto done = append(line); !done) return unexpected(std::move(done.error()));
  ++lines_;
  return receipt{e.dlq_id, false, path_.string() + ":" + std::to_string(lines_)};
}

LLMDLQ_INLINE expected<std::vector<receipt>, sink_error> jsonl_file_sink::publish_batch(
    std::span<const envelope> batch) {
  std::string lines;
  for (const auto& e : batch) {
    lines += serialize(e);
    lines.push_back('\n');
  }
  std::lock_guard lock(mutex_);
  if (auto done = append(lines); !done) return unexpected(std::move(done.error()));
  std::vector<receipt> receipts;
  receipts.reserve(batch.size());
  for (const auto& e : batch) receipts.push_back({e.dlq_id, false, path_.string() + ":" + std::to_string(++lines_)});
  return receipts;
}

LLMDLQ_INLINE expected<jsonl_contents, sink_error> read_jsonl_envelopes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return unexpected(detail::io_failure("cannot open", path, errno));
  jsonl_contents contents;
  for (std::string line; std::getline(in, line);) {
    if (auto e = parse_envelope(line)) {
      contents.envelopes.push_back(std::move(*e));
    } else {
      ++contents.skipped_lines;
    }
  }
  return contents;
}

}  // namespace llmdlq
