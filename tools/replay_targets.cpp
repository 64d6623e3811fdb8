// SPDX-License-Identifier: MIT
#include "replay_targets.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <llmdlq/detail/bounded_read.hpp>
#include <llmdlq/detail/private_file.hpp>

#include "cli.hpp"

namespace llmdlq::cli {

expected<std::filesystem::path, std::string> resolve_jsonl_target(std::string_view path) {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(std::filesystem::path(path), ec);
  if (ec) return unexpected(fmt::format("cannot resolve {}: {}", path, ec.message()));
  auto resolved = std::filesystem::weakly_canonical(absolute, ec);
  if (ec) return unexpected(fmt::format("cannot resolve {}: {}", path, ec.message()));
  return resolved;
}

expected<void, std::string> check_allowlist(std::string_view target, const std::filesystem::path& allowlist_file) {
  // Whoever could write the allowlist could send payloads anywhere: it is
  // judged as the stores are, on the descriptor that is then read.
  std::string refusal;
  const int fd = detail::open_private_file_to_read(allowlist_file, refusal, "an allowlist", "its entries");
  if (fd < 0) {
    if (!refusal.empty()) return unexpected(fmt::format("the allowlist is refused: {}", refusal));
    return unexpected(detail::make_read_error(detail::read_errc::cannot_open, detail::file_kind::allowlist,
                                              allowlist_file.string(), detail::limit_of(detail::file_kind::allowlist),
                                              errno)
                          .message);
  }
  auto text = detail::read_bounded(fd, detail::file_kind::allowlist, allowlist_file.string());
  ::close(fd);
  if (!text) return unexpected(std::move(text.error().message));
  std::string_view rest = *text;
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string_view entry = line.substr(first, last - first + 1);
    if (entry == target) return {};
    if (entry.size() > 1 && entry.back() == '*' && target.starts_with(entry.substr(0, entry.size() - 1))) return {};
  }
  return unexpected(fmt::format("{} is not on the allowlist {}", target, allowlist_file.string()));
}

expected<std::filesystem::path, std::string> allowed_jsonl_target(std::string_view to, std::string_view allowlist) {
  if (!to.starts_with("jsonl:") || to.size() == 6) return unexpected(std::string("--to wants jsonl:PATH"));
  const char* env = std::getenv("LLMDLQ_REPLAY_ALLOWLIST");
  const std::string list = !allowlist.empty() ? std::string(allowlist) : env != nullptr ? env : "";
  if (list.empty()) {
    return unexpected(std::string("--to needs an allowlist of targets (--allowlist FILE or $LLMDLQ_REPLAY_ALLOWLIST)"));
  }
  auto path = resolve_jsonl_target(to.substr(6));
  if (!path) return unexpected(std::move(path.error()));
  if (auto allowed = check_allowlist("jsonl:" + path->string(), list); !allowed) {
    return unexpected(std::move(allowed.error()));
  }
  return path;
}

namespace {

unexpected<replay_error> target_failure(replay_errc code, std::string message) {
  return unexpected(replay_error{code, std::move(message), {}, {}});
}

}  // namespace

expected<jsonl_replay_target, replay_error> jsonl_replay_target::open(const std::filesystem::path& path) {
  bool created = false;
  std::string refusal;
  const int fd = detail::open_private_file(path, O_WRONLY | O_APPEND | O_CLOEXEC, created, refusal);
  if (!refusal.empty()) return target_failure(replay_errc::target_refused, std::move(refusal));
  if (fd < 0) {
    return target_failure(replay_errc::target_unavailable,
                          fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  }
  jsonl_replay_target target(fd, {});
  // Only a file holds earlier lines: a device or a pipe would be read without end. They are read
  // from the file opened (through its descriptor), never from whatever the path names by then.
  struct stat info {};
  const bool earlier_lines = !created && ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  expected<std::string, detail::read_error> existing;
  if (earlier_lines) {
    const int reading = ::open(fmt::format("/proc/self/fd/{}", fd).c_str(), O_RDONLY | O_CLOEXEC);
    if (reading < 0) {
      return target_failure(replay_errc::target_unavailable,
                            fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    }
    existing = detail::read_bounded(reading, detail::file_kind::json_lines, path.string());
    ::close(reading);
    if (!existing) {
      // A file too large to read for its keys stays so; a read that failed may not.
      const bool too_large = existing.error().code == detail::read_errc::too_large;
      return target_failure(too_large ? replay_errc::target_refused : replay_errc::target_unavailable,
                            std::move(existing.error().message));
    }
  }
  if (existing) {
    // A line a crash or a full disk cut short is cut off, so the next line starts on a line of its own;
    // its payload is still undelivered in the ledger and is written again whole.
    if (const auto whole = existing->rfind('\n') + 1; whole < existing->size()) {
      if (::ftruncate(fd, static_cast<off_t>(whole)) != 0) {
        return target_failure(replay_errc::target_unavailable, fmt::format("cannot cut the torn last line of {}: {}",
                                                                           path.string(), std::strerror(errno)));
      }
      existing->resize(whole);
    }
    std::string_view rest = *existing;
    while (!rest.empty()) {
      const auto end = rest.find('\n');
      const std::string_view line = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
      if (line.empty()) continue;
      boost::system::error_code ec;
      const auto value = boost::json::parse(line, ec);
      const auto* object = ec ? nullptr : value.if_object();
      const auto* key = object ? object->if_contains("idempotency_key") : nullptr;
      // A line cut by a crash carries no key: its payload is still undelivered in the ledger.
      if (key != nullptr && key->is_string()) target.keys_.emplace(key->as_string());
    }
  }
  return target;
}

jsonl_replay_target::jsonl_replay_target(jsonl_replay_target&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), keys_(std::move(other.keys_)) {}

jsonl_replay_target& jsonl_replay_target::operator=(jsonl_replay_target&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    keys_ = std::move(other.keys_);
  }
  return *this;
}

jsonl_replay_target::~jsonl_replay_target() {
  if (fd_ >= 0) ::close(fd_);
}

expected<void, replay_error> jsonl_replay_target::deliver(const ledger_entry& entry) {
  if (keys_.contains(entry.idempotency_key)) return {};
  boost::system::error_code ec;
  (void)boost::json::parse(entry.output, ec);
  if (ec) return target_failure(replay_errc::target_refused, "the recorded output is not JSON: " + ec.message());
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
      return target_failure(replay_errc::target_unavailable, fmt::format("writing: {}", std::strerror(errno)));
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::fsync(fd_) != 0) {
    return target_failure(replay_errc::target_unavailable, fmt::format("syncing: {}", std::strerror(errno)));
  }
  keys_.insert(entry.idempotency_key);
  return {};
}

}  // namespace llmdlq::cli
