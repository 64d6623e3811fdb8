// SPDX-License-Identifier: MIT
// Locates the conformance suites, which live outside the repository.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace llmdlq::test {

/// The configured conformance folder, or an empty path when it is absent.
inline std::filesystem::path conformance_dir() {
  const std::filesystem::path dir = LLMDLQ_CONFORMANCE_DIR;
  if (dir.empty() || !std::filesystem::is_directory(dir)) return {};
  return dir;
}

/// The `.json` files directly in `dir`, sorted by name so output is stable.
inline std::vector<std::filesystem::path> json_files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace llmdlq::test
