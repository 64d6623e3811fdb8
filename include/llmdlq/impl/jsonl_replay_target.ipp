// SPDX-License-Identifier: MIT
// Definitions for jsonl_replay_target.hpp, on POSIX file descriptors.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/bounded_read.hpp"
#include "llmdlq/detail/deliverable.hpp"
#include "llmdlq/detail/private_file.hpp"
#include "llmdlq/jsonl_replay_target.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail {

// The keys of the lines `text` holds; a line without one (not JSON, cut by a crash) adds none.
inline void read_delivered_keys(std::string_view text, std::set<std::string>& keys) {
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (line.empty()) continue;
    boost::system::error_code ec;
    const auto value = boost::json::parse(line, ec);
    const auto* object = ec ? nullptr : value.if_object();
    const auto* key = object ? object->if_contains("idempotency_key") : nullptr;
    if (key != nullptr && key->is_string()) keys.emplace(key->as_string());
  }
}

}  // namespace detail

LLMDLQ_INLINE expected<jsonl_replay_target, replay_error> jsonl_replay_target::open(const std::filesystem::path& path) {
  bool created = false;
  std::string refusal;
  const int fd = detail::open_private_file(path, O_WRONLY | O_APPEND | O_CLOEXEC, created, refusal);
  if (!refusal.empty()) return detail::target_failure(replay_errc::target_refused, std::move(refusal));
  if (fd < 0) {
    return detail::target_failure(replay_errc::target_unavailable,
                                  fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  }
  jsonl_replay_target target(path, fd);
  // Only a file holds earlier lines: a device or a pipe would be read without end. They are read
  // from the file opened (through its descriptor), never from whatever the path names by then.
  struct stat info {};
  if (created || ::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) return target;
  const int reading = ::open(fmt::format("/proc/self/fd/{}", fd).c_str(), O_RDONLY | O_CLOEXEC);
  if (reading < 0) {
    return detail::target_failure(replay_errc::target_unavailable,
                                  fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  }
  auto existing = detail::read_bounded(reading, detail::file_kind::json_lines, path.string());
  ::close(reading);
  if (!existing) {
    // A file too large to read for its keys stays so; a read that failed may not.
    const bool too_large = existing.error().code == detail::read_errc::too_large;
    return detail::target_failure(too_large ? replay_errc::target_refused : replay_errc::target_unavailable,
                                  std::move(existing.error().message));
  }
  // A line a crash or a full disk cut short is cut off, so the next line starts on a line of its own;
  // its payload is still undelivered in the ledger and is written again whole.
  if (const auto whole = existing->rfind('\n') + 1; whole < existing->size()) {
    if (::ftruncate(fd, static_cast<off_t>(whole)) != 0) {
      const std::string why = std::strerror(errno);
      return detail::target_failure(replay_errc::target_unavailable,
                                    fmt::format("cannot cut the torn last line of {}: {}", path.string(), why));
    }
    existing->resize(whole);
  }
  detail::read_delivered_keys(*existing, target.keys_);
  return target;
}

LLMDLQ_INLINE jsonl_replay_target::jsonl_replay_target(jsonl_replay_target&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), keys_(std::move(other.keys_)) {}

LLMDLQ_INLINE jsonl_replay_target& jsonl_replay_target::operator=(jsonl_replay_target&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    keys_ = std::move(other.keys_);
  }
  return *this;
}

LLMDLQ_INLINE jsonl_replay_target::~jsonl_replay_target() {
  if (fd_ >= 0) ::close(fd_);
}

LLMDLQ_INLINE expected<void, replay_error> jsonl_replay_target::deliver(const ledger_entry& entry) {
  if (keys_.contains(entry.idempotency_key)) return {};
  if (auto json = detail::deliverable(entry); !json) return json;
  // The output goes in as its own text (numbers as written, 2920.00 stays
  // 2920.00), on one line: a line break in JSON can only be whitespace.
  boost::json::object head{{"idempotency_key", entry.idempotency_key}, {"source", entry.source}};
  if (!entry.dlq_id.empty()) head.emplace("dlq_id", entry.dlq_id);
  if (!entry.resolved_by.empty()) head.emplace("resolved_by", entry.resolved_by);
  if (!entry.note.empty()) head.emplace("note", entry.note);
  std::string text = boost::json::serialize(head);
  text.pop_back();  // the closing brace
  text += ",\"output\":";
  for (const char c : entry.output) text.push_back(c == '\n' || c == '\r' ? ' ' : c);
  text += "}\n";
  std::string_view rest = text;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd_, rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return detail::target_failure(replay_errc::target_unavailable,
                                    fmt::format("writing {}: {}", path_.string(), std::strerror(errno)));
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::fsync(fd_) != 0) {
    return detail::target_failure(replay_errc::target_unavailable,
                                  fmt::format("syncing {}: {}", path_.string(), std::strerror(errno)));
  }
  keys_.insert(entry.idempotency_key);
  return {};
}

LLMDLQ_END_NAMESPACE
