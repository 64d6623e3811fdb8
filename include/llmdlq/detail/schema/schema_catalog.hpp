// SPDX-License-Identifier: MIT
// A directory of schemas a compile may draw on (compile_options::
// catalog_directory): found by their `$id`, or by the tail of a URI's path
// that names a file under the directory.
#pragma once

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/bounded_read.hpp"
#include "llmdlq/detail/schema/uri.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

class schema_catalog {
 public:
  /// Files are read up to the schema limit (file_kinds); a larger one, or
  /// one that cannot be read, is skipped and noted (unread()).
  explicit schema_catalog(std::string directory) : root_(std::move(directory)) {}

  /// The first file the catalogue found but could not read (larger than the
  /// limit, say), for a message about a reference nothing answered.
  [[nodiscard]] const std::optional<read_error>& unread() const noexcept { return unread_; }

  /// The text of the schema `uri` (without fragment) names, or nothing.
  std::optional<std::string> find(std::string_view uri) {
    if (root_.empty()) return std::nullopt;
    if (!indexed_) index();
    if (const auto it = by_id_.find(std::string(uri)); it != by_id_.end()) return read(it->second);
    return find_by_name(uri);
  }

 private:
  // Reads every regular *.json file under the directory once, noting the
  // absolute `$id` (or draft 4 `id`) of those that have one.
  void index() {
    indexed_ = true;
    std::error_code ec;
    const auto options = std::filesystem::directory_options::skip_permission_denied;
    for (auto it = std::filesystem::recursive_directory_iterator(root_, options, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      const auto& entry = *it;
      if (!entry.is_regular_file(ec) || entry.path().extension() != ".json") continue;
      const auto text = read(entry.path());
      if (!text) continue;
      boost::json::error_code parse_error;
      const auto json = boost::json::parse(*text, parse_error);
      const auto* object = json.if_object();
      if (parse_error || !object) continue;
      for (const std::string_view keyword : {"$id", "id"}) {
        const auto found = object->find(keyword);
        if (found == object->end() || !found->value().is_string()) continue;
        const std::string id{without_fragment(std::string_view(found->value().get_string()))};
        if (id.find(':') != std::string::npos) by_id_.emplace(id, entry.path());
        break;
      }
    }
  }

  // The longest tail of the URI's path, segment by segment, that names a file
  // under the directory; no tail with a ".." segment is tried.
  std::optional<std::string> find_by_name(std::string_view uri) {
    std::string_view path = uri;
    if (const auto scheme = path.find("://"); scheme != std::string_view::npos) {
      path.remove_prefix(scheme + 3);
      const auto slash = path.find('/');
      path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
    } else if (const auto colon = path.find(':'); colon != std::string_view::npos &&
                                                   path.find('/') > colon) {
      path.remove_prefix(colon + 1);  // urn:..., file:...
    }
    if (path.find("/../") != std::string_view::npos || path.starts_with("../") || path.ends_with("/..")) {
      return std::nullopt;
    }
    while (!path.empty()) {
      while (path.starts_with('/')) path.remove_prefix(1);
      if (path.empty()) break;
      std::error_code ec;
      const auto candidate = root_ / std::filesystem::path(std::string(path));
      if (std::filesystem::is_regular_file(candidate, ec)) return read(candidate);
      const auto slash = path.find('/');
      if (slash == std::string_view::npos) break;
      path.remove_prefix(slash + 1);
    }
    return std::nullopt;
  }

  // Read with a bound whatever the file turned out to be when opened (a
  // file swapped for a FIFO or a device after the directory was listed).
  std::optional<std::string> read(const std::filesystem::path& file) {
    auto text = read_file_bounded(file, file_kind::schema);
    if (text) return std::move(*text);
    if (!unread_ && text.error().system_error != ENOENT) unread_ = std::move(text.error());
    return std::nullopt;
  }

  std::filesystem::path root_;
  std::optional<read_error> unread_;
  bool indexed_ = false;
  std::unordered_map<std::string, std::filesystem::path> by_id_;
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
