// SPDX-License-Identifier: MIT
// Helpers shared by the `llmdlq` subcommands.
#include "cli.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>
#include <iterator>
#include <sstream>

namespace llmdlq::cli {

std::optional<std::string> read_file(const std::string& path, std::string& error) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  std::string content;
  char buffer[1 << 16];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) content.append(buffer, n);
  const bool failed = std::ferror(file) != 0;
  const int reason = errno;
  std::fclose(file);
  if (failed) {
    error = std::strerror(reason);
    return std::nullopt;
  }
  return content;
}

std::string read_stdin() {
  std::ostringstream content;
  content << std::cin.rdbuf();
  return std::move(content).str();
}

void complain(std::string_view command, std::string_view message) {
  std::cerr << "llmdlq " << command << ": " << message << '\n';
}

}  // namespace llmdlq::cli
