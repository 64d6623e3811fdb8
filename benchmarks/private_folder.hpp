// SPDX-License-Identifier: MIT
// A folder only this user may write (SQLite files must not sit where others
// can plant theirs), removed with everything in it.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace bench {

class private_folder {
 public:
  private_folder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "llmdlq-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~private_folder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  private_folder(const private_folder&) = delete;
  private_folder& operator=(const private_folder&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace bench
