// SPDX-License-Identifier: MIT
// Reads lines from a file descriptor with bounded memory: a line over the
// limit is hashed as it streams by, and only its first bytes are kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/types.h>

#include <llmdlq/expected.hpp>

namespace llmdlq::cli {

/// An incremental SHA-256, with OpenSSL's EVP interface.
class sha256_stream {
 public:
  sha256_stream();
  void update(std::string_view bytes);
  /// Lowercase hex; empty when OpenSSL failed (then no hash is claimed).
  std::string hex();

 private:
  struct free_context {
    void operator()(EVP_MD_CTX* c) const noexcept;
  };
  std::unique_ptr<EVP_MD_CTX, free_context> context_;
};

/// One line of input, without its "\n" or "\r\n".
struct input_line {
  std::string text;          ///< the whole line, or its first bytes (cut at a UTF-8 boundary) when over the limit
  std::uint64_t length = 0;  ///< bytes in the whole line
  std::string sha256;        ///< hex SHA-256 of the whole line, set when it was over the limit
  bool over_limit = false;
};

/// Splits a stream into lines. Memory per line is at most `max_line_bytes`
/// plus one read buffer, whatever the input.
class line_reader {
 public:
  /// `fd` stays the caller's. A line longer than `max_line_bytes` keeps its first `prefix_bytes`.
  line_reader(int fd, std::size_t max_line_bytes, std::size_t prefix_bytes);

  /// The next line; nothing at the end of the input; the reason (strerror) when reading failed.
  [[nodiscard]] expected<std::optional<input_line>, std::string> next();

 private:
  class line_builder;
  int fd_;
  std::size_t max_line_bytes_;
  std::size_t prefix_bytes_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool end_of_input_ = false;
};

}  // namespace llmdlq::cli
