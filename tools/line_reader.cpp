// SPDX-License-Identifier: MIT
// line_reader: read(2) into a fixed buffer, SHA-256 with OpenSSL's EVP
// interface for lines over the limit (sha256_stream, which process also
// hashes a recorded stream with).
#include "line_reader.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>

namespace llmdlq::cli {

sha256_stream::sha256_stream() : context_(EVP_MD_CTX_new()) {
  if (context_ && EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) != 1) context_.reset();
}

void sha256_stream::update(std::string_view bytes) {
  if (context_ && !bytes.empty() && EVP_DigestUpdate(context_.get(), bytes.data(), bytes.size()) != 1) {
    context_.reset();
  }
}

std::string sha256_stream::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!context_ || EVP_DigestFinal_ex(context_.get(), digest, &length) != 1) return {};
  static constexpr char digits[] = "0123456789abcdef";
  std::string text;
  for (unsigned int i = 0; i < length; ++i) {
    text.push_back(digits[digest[i] >> 4]);
    text.push_back(digits[digest[i] & 0x0F]);
  }
  return text;
}

void sha256_stream::free_context::operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }

namespace {

// Drops an incomplete UTF-8 sequence the cut left at the end of `text`.
void cut_at_character(std::string& text) {
  const std::size_t size = text.size();
  for (std::size_t back = 1; back <= std::min<std::size_t>(4, size); ++back) {
    const auto byte = static_cast<unsigned char>(text[size - back]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const std::size_t needed = byte < 0x80 ? 1 : (byte & 0xE0) == 0xC0 ? 2 : (byte & 0xF0) == 0xE0 ? 3 : 4;
    if (needed > back) text.erase(size - back);  // erase, not resize: GCC 12 warns -Wrestrict on resize
    return;
  }
}

}  // namespace

// Collects one line: whole while it fits, else its prefix, length and hash.
class line_reader::line_builder {
 public:
  line_builder(std::size_t max_line_bytes, std::size_t prefix_bytes)
      // One below the largest size_t: the "\r" slack below must not overflow.
      : max_(std::min(max_line_bytes, static_cast<std::size_t>(-2))), prefix_(std::min(prefix_bytes, max_)) {}

  void append(std::string_view chunk) {
    // One byte of slack: a "\r" before the "\n" is not part of the line.
    if (!line_.over_limit && line_.text.size() + chunk.size() <= max_ + 1) {
      line_.text.append(chunk);
      return;
    }
    if (!line_.over_limit) start_hashing();
    hash_part(chunk);
    if (line_.text.size() < prefix_) line_.text.append(chunk.substr(0, prefix_ - line_.text.size()));
  }

  input_line finish() && {
    if (!line_.over_limit) {
      if (!line_.text.empty() && line_.text.back() == '\r') line_.text.pop_back();
      line_.length = line_.text.size();
      if (line_.length <= max_) return std::move(line_);
      line_.over_limit = true;
      hash_.update(line_.text);
      line_.text.resize(prefix_);
    }
    // A "\r" still held back ended the line.
    line_.sha256 = hash_.hex();
    cut_at_character(line_.text);
    return std::move(line_);
  }

 private:
  void start_hashing() {
    line_.over_limit = true;
    hash_part(line_.text);
    line_.text.resize(std::min(line_.text.size(), prefix_));
    line_.text.shrink_to_fit();
  }

  // Hashes `bytes`, holding back a final "\r" until more of the line follows.
  void hash_part(std::string_view bytes) {
    if (bytes.empty()) return;
    if (held_return_) {
      hash_.update("\r");
      ++line_.length;
      held_return_ = false;
    }
    if (bytes.back() == '\r') {
      held_return_ = true;
      bytes.remove_suffix(1);
    }
    hash_.update(bytes);
    line_.length += bytes.size();
  }

  std::size_t max_;
  std::size_t prefix_;
  input_line line_;
  sha256_stream hash_;
  bool held_return_ = false;
};

line_reader::line_reader(int fd, std::size_t max_line_bytes, std::size_t prefix_bytes)
    : fd_(fd), max_line_bytes_(max_line_bytes), prefix_bytes_(prefix_bytes), buffer_(std::size_t{1} << 16) {}

expected<std::optional<input_line>, std::string> line_reader::next() {
  line_builder line(max_line_bytes_, prefix_bytes_);
  bool started = false;
  while (true) {
    if (begin_ == end_) {
      if (end_of_input_) break;
      const ssize_t n = ::read(fd_, buffer_.data(), buffer_.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return unexpected(std::string(std::strerror(errno)));
      }
      begin_ = 0;
      end_ = static_cast<std::size_t>(n);
      end_of_input_ = n == 0;
      continue;
    }
    started = true;
    const char* first = buffer_.data() + begin_;
    const char* newline = static_cast<const char*>(std::memchr(first, '\n', end_ - begin_));
    const std::size_t taken = newline ? static_cast<std::size_t>(newline - first) : end_ - begin_;
    line.append(std::string_view(first, taken));
    begin_ += taken + (newline ? 1 : 0);
    if (newline) break;
  }
  if (!started) return std::optional<input_line>();
  return std::optional<input_line>(std::move(line).finish());
}

}  // namespace llmdlq::cli
