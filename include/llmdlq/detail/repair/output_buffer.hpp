// SPDX-License-Identifier: MIT
// An append-mostly text buffer for a hot loop that writes a few bytes at a
// time: room is made in bulk, and a short write is a plain byte copy rather
// than a call into std::string and memcpy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

class output_buffer {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::string_view view() const noexcept { return {buffer_.data(), size_}; }
  [[nodiscard]] std::string_view view(std::size_t from) const noexcept { return view().substr(from); }

  [[gnu::always_inline]] void push_back(char c) {
    room(1);
    buffer_[size_++] = c;
  }
  [[gnu::always_inline]] output_buffer& operator+=(char c) {
    push_back(c);
    return *this;
  }
  [[gnu::always_inline]] output_buffer& operator+=(std::string_view s) {
    append(s.data(), s.size());
    return *this;
  }
  [[gnu::always_inline]] void append(const char* p, std::size_t n) {
    room(n);
    char* d = buffer_.data() + size_;
    if (n <= 8) {
      for (std::size_t i = 0; i < n; ++i) d[i] = p[i];
    } else {
      std::memcpy(d, p, n);
    }
    size_ += n;
  }

  /// Removes the byte at `at`; inserts `c` before `at`. Both move the bytes
  /// after `at`, which callers keep few.
  void erase(std::size_t at) {
    std::memmove(buffer_.data() + at, buffer_.data() + at + 1, size_ - at - 1);
    --size_;
  }
  void insert(std::size_t at, char c) {
    room(1);
    std::memmove(buffer_.data() + at + 1, buffer_.data() + at, size_ - at);
    buffer_[at] = c;
    ++size_;
  }
  /// Makes room for `n` bytes in all, at once.
  void reserve(std::size_t n) {
    if (n > buffer_.size()) buffer_.resize(n);
  }
  /// Cuts the text back to `n` bytes (n <= size()).
  void truncate(std::size_t n) noexcept { size_ = std::min(n, size_); }
  void pop_back() noexcept { --size_; }

  /// The text, leaving the buffer empty.
  [[nodiscard]] std::string take() {
    buffer_.resize(size_);
    size_ = 0;
    return std::move(buffer_);
  }

 private:
  [[gnu::always_inline]] void room(std::size_t n) {
    if (size_ + n > buffer_.size()) [[unlikely]] grow(n);
  }
  [[gnu::noinline]] void grow(std::size_t n) { buffer_.resize(std::max(buffer_.size() * 2, size_ + n + 256)); }

  std::string buffer_;  // bytes past size_ are room, not text
  std::size_t size_ = 0;
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
