// SPDX-License-Identifier: MIT
// Locates the conformance suites, which live outside the repository.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "catch.hpp"
#include "support/skip.hpp"

namespace llmdlq::test {

/// The conformance folder: LLMDLQ_CONFORMANCE_DIR from the environment when
/// it is set there (even to nothing), else the one configured at build time;
/// empty when there is none.
inline std::filesystem::path configured_conformance_dir() {
  if (const char* dir = std::getenv("LLMDLQ_CONFORMANCE_DIR")) return dir;
  return LLMDLQ_CONFORMANCE_DIR;
}

/// The folder `suite` (e.g. "json-test-suite/test_parsing") inside the
/// conformance folder, or an empty path when no folder is configured. A
/// configured folder that lacks the suite fails the test: a wrong or empty
/// LLMDLQ_CONFORMANCE_DIR must not pass by running nothing.
inline std::filesystem::path suite_dir(const std::filesystem::path& suite) {
  const auto root = configured_conformance_dir();
  if (root.empty()) return {};
  const auto dir = root / suite;
  if (!std::filesystem::is_directory(dir)) {
    FAIL("LLMDLQ_CONFORMANCE_DIR is " << root << " but it has no " << suite.generic_string());
  }
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

/// Declares `name` as the folder of `suite` in the conformance folder, or ends
/// the test case as skipped when no conformance folder is configured.
#define LLMDLQ_SUITE_OR_SKIP(name, suite)                                                 \
  const auto name = llmdlq::test::suite_dir(suite);                                       \
  if (name.empty()) LLMDLQ_SKIP("no conformance folder (set LLMDLQ_CONFORMANCE_DIR): " suite)
