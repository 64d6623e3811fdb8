// SPDX-License-Identifier: MIT
#include "redaction_flags.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#ifdef LLMDLQ_TOOL_WITH_CRYPTO
#  include <llmdlq/crypto/file_key_provider.hpp>
#  include <llmdlq/crypto/sodium_field_cipher.hpp>
#endif

namespace llmdlq::cli {
namespace {

// The items of a comma-separated list, none empty.
std::vector<std::string> list_items(std::string_view list) {
  std::vector<std::string> items;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return items;
}

std::optional<national_id_rule> national_id_named(std::string_view name) {
  if (name == "nl_bsn") return national_ids::nl_bsn();
  if (name == "ru_inn") return national_ids::ru_inn();
  if (name == "ru_snils") return national_ids::ru_snils();
  if (name == "lk_nic") return national_ids::lk_nic();
  return std::nullopt;
}

// The secret in a key file that only its owner (this user, or root) can read or change.
// Judged and read on one descriptor, so that the file read is the file judged.
expected<redaction_key, std::string> read_redaction_key(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
  struct stat info {};
  std::optional<std::string> refusal;
  if (::fstat(fd, &info) != 0) {
    refusal = fmt::format("{}: {}", path, std::strerror(errno));
  } else if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    refusal = fmt::format("{} has mode {:04o}: others may read the key (chmod 600 it)", path, info.st_mode & 07777);
  } else if (info.st_uid != ::geteuid() && info.st_uid != 0) {
    refusal = fmt::format("{} belongs to uid {}, not to this user: whoever owns it chooses the key", path,
                          info.st_uid);
  }
  auto content = refusal ? expected<std::string, detail::read_error>() : read_bounded(fd, file_kind::key, path);
  ::close(fd);
  if (refusal) return unexpected(std::move(*refusal));
  if (!content) return unexpected(std::move(content.error().message));
  std::string secret = content->substr(0, content->find('\n'));
  if (!secret.empty() && secret.back() == '\r') secret.pop_back();
  return redaction_key{std::filesystem::path(path).stem().string(), std::move(secret)};
}

}  // namespace

std::optional<std::string> read_redaction_options(const parsed_arguments& parsed, redaction_settings& settings) {
  redaction_options& o = settings.options;
  for (const auto value : parsed.values("--national-ids")) {
    const std::vector<std::string> names =
        value == "all" ? std::vector<std::string>{"nl_bsn", "ru_inn", "ru_snils", "lk_nic"} : list_items(value);
    for (const auto& name : names) {
      auto rule = national_id_named(name);
      if (!rule) return "--national-ids wants all, or some of nl_bsn, ru_inn, ru_snils, lk_nic, not " + name;
      o.national_ids.push_back(std::move(*rule));
    }
  }
  for (const auto value : parsed.values("--phone-regions")) {
    for (auto& region : list_items(value)) o.phone_regions.push_back(std::move(region));
  }
  for (const auto value : parsed.values("--redact-pointer")) o.pointers.emplace_back(value);
  if (const auto value = parsed.value("--redaction-key")) {
    auto key = read_redaction_key(std::string(*value));
    if (!key) return "--redaction-key: " + key.error();
    o.key = std::move(*key);
  }
  if (const auto value = parsed.value("--keys")) {
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
    settings.keys = std::string(*value);
#else
    return std::string("--keys needs a build with llmdlq::crypto (libsodium)");
#endif
  }
  return std::nullopt;
}

bool apply_redaction(std::string_view command, redaction_settings settings, privacy_options& options) {
  auto redactor = redactor::create(std::move(settings.options));
  if (!redactor) {
    complain(command, fmt::format("redaction ({}): {}", redactor.error().option, redactor.error().message));
    return false;
  }
  options.redaction = std::move(*redactor);
#ifdef LLMDLQ_TOOL_WITH_CRYPTO
  if (settings.keys) {
    auto keys = std::make_shared<const file_key_provider>(*settings.keys);
    if (auto current = keys->current_key_id(); !current) {
      complain(command, "--keys " + *settings.keys + ": " + current.error().message);
      return false;
    }
    options.cipher = std::make_shared<const sodium_field_cipher>(std::move(keys));
  }
#endif
  return true;
}

}  // namespace llmdlq::cli
