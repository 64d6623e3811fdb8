// SPDX-License-Identifier: MIT
#include "access.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "../cli.hpp"

namespace llmdlq::cli {
namespace {

std::array<unsigned char, SHA256_DIGEST_LENGTH> digest_of(std::string_view text) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  return digest;
}

std::string hex(const unsigned char* bytes, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += fmt::format("{:02x}", bytes[i]);
  return out;
}

}  // namespace

std::string random_secret() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    throw std::runtime_error("the system's random generator failed");
  }
  return hex(bytes.data(), bytes.size());
}

bool same_secret(std::string_view a, std::string_view b) {
  const auto da = digest_of(a);
  const auto db = digest_of(b);
  return CRYPTO_memcmp(da.data(), db.data(), da.size()) == 0;
}

// Judged and read on one descriptor, so that the file read is the file judged.
expected<std::string, std::string> read_token_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
  struct stat info {};
  std::optional<std::string> refusal;
  if (::fstat(fd, &info) != 0) {
    refusal = fmt::format("{}: {}", path, std::strerror(errno));
  } else if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    refusal = fmt::format("{} may be read by others (mode {:o}): chmod 600 it", path, info.st_mode & 0777);
  }
  auto content = refusal ? expected<std::string, detail::read_error>() : read_bounded(fd, file_kind::key, path);
  ::close(fd);
  if (refusal) return unexpected(std::move(*refusal));
  if (!content) return unexpected(std::move(content.error().message));
  std::string_view token(*content);
  token = token.substr(0, token.find('\n'));
  while (!token.empty() && (token.back() == ' ' || token.back() == '\r' || token.back() == '\t')) token.remove_suffix(1);
  while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
  if (token.size() < 16) return unexpected(fmt::format("{}: the token must have at least 16 characters", path));
  return std::string(token);
}

bool loopback_host_allowed(std::string_view host_header, int port) {
  std::string_view name = host_header;
  if (const auto colon = host_header.rfind(':'); colon != std::string_view::npos && !host_header.ends_with(']')) {
    if (host_header.substr(colon + 1) != std::to_string(port)) return false;
    name = host_header.substr(0, colon);
  } else if (port != 80) {
    return false;
  }
  return name == "127.0.0.1" || name == "localhost" || name == "[::1]";
}

bool origin_allowed(std::string_view origin, std::string_view host, std::string_view fetch_site) {
  if (!fetch_site.empty() && fetch_site != "same-origin" && fetch_site != "none") return false;
  if (origin.empty()) return true;
  return !host.empty() && origin == fmt::format("http://{}", host);
}

console_session session_table::open(std::string operator_name) {
  console_session session{random_secret(), random_secret(), std::move(operator_name),
                          std::chrono::steady_clock::now() + lifetime_};
  const auto digest = digest_of(session.id);
  const std::lock_guard lock(mutex_);
  std::erase_if(by_digest_, [now = std::chrono::steady_clock::now()](const auto& entry) {
    return entry.second.expires <= now;
  });
  by_digest_[hex(digest.data(), digest.size())] = session;
  return session;
}

std::optional<console_session> session_table::find(std::string_view id) {
  if (id.empty()) return std::nullopt;
  const auto digest = digest_of(id);
  const std::lock_guard lock(mutex_);
  const auto found = by_digest_.find(hex(digest.data(), digest.size()));
  if (found == by_digest_.end()) return std::nullopt;
  if (found->second.expires <= std::chrono::steady_clock::now()) {
    by_digest_.erase(found);
    return std::nullopt;
  }
  return found->second;
}

void session_table::close(std::string_view id) {
  const auto digest = digest_of(id);
  const std::lock_guard lock(mutex_);
  by_digest_.erase(hex(digest.data(), digest.size()));
}

}  // namespace llmdlq::cli

namespace llmdlq::cli {

std::string cookie_value(std::string_view cookie_header, std::string_view name) {
  while (!cookie_header.empty()) {
    const auto end = cookie_header.find(';');
    auto pair = cookie_header.substr(0, end);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const auto equals = pair.find('=');
    if (equals != std::string_view::npos && pair.substr(0, equals) == name) return std::string(pair.substr(equals + 1));
    if (end == std::string_view::npos) break;
    cookie_header.remove_prefix(end + 1);
  }
  return {};
}

}  // namespace llmdlq::cli
