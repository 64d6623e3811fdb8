// SPDX-License-Identifier: MIT
#include "replay_targets.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

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

}  // namespace llmdlq::cli
