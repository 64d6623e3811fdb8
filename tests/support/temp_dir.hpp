// SPDX-License-Identifier: MIT
// Scratch folders and file reading for tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>

namespace llmdlq::test {

/// A fresh directory under the system temporary folder, removed on
/// destruction. Mode 0755 whatever the umask: only its owner may write it,
/// as the DLQ's files require of the directories above them, and another
/// user a test acts as may still reach what it gives them inside.
class temp_dir {
 public:
  temp_dir() {
    std::random_device seed;
    do {  // never one another test holds
      path_ = std::filesystem::temp_directory_path() / ("llmdlq-test-" + std::to_string(seed()));
    } while (!std::filesystem::create_directory(path_));
    using std::filesystem::perms;
    std::filesystem::permissions(path_, perms::owner_all | perms::group_read | perms::group_exec | perms::others_read |
                                            perms::others_exec,
                                 std::filesystem::perm_options::replace);
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  /// Writes `content` to `name` inside the directory and returns its path.
  std::string write(const std::string& name, std::string_view content) const {
    const auto file = path_ / name;
    std::ofstream(file, std::ios::binary) << content;
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

inline std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace llmdlq::test
