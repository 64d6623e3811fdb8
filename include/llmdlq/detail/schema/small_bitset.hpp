// SPDX-License-Identifier: MIT
// A bit set that lives on the stack up to 128 bits and on the heap beyond.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Marks positions of one container: which object members or array elements
/// a schema evaluated, or which named keys an object holds.
class small_bitset {
 public:
  small_bitset() noexcept = default;
  explicit small_bitset(std::size_t bits) { resize(bits); }
  small_bitset(const small_bitset&) = delete;
  small_bitset& operator=(const small_bitset&) = delete;

  /// Resets to `bits` cleared bits.
  void resize(std::size_t bits) {
    bits_ = bits;
    const std::size_t n = word_count();
    if (n > inline_words) {
      heap_ = std::make_unique<std::uint64_t[]>(n);
    } else {
      heap_.reset();
      std::fill(std::begin(inline_), std::end(inline_), 0);
    }
  }

  [[nodiscard]] std::size_t size() const noexcept { return bits_; }

  void set(std::size_t i) noexcept { words()[i / 64] |= std::uint64_t(1) << (i % 64); }

  [[nodiscard]] bool test(std::size_t i) const noexcept {
    return (words()[i / 64] >> (i % 64)) & 1;
  }

  /// Sets bits [from, to).
  void set_range(std::size_t from, std::size_t to) noexcept {
    for (std::size_t i = from; i < to; ++i) set(i);
  }

  /// Sets every bit set in `other`, which has the same size.
  void merge(const small_bitset& other) noexcept {
    std::uint64_t* mine = words();
    const std::uint64_t* theirs = other.words();
    for (std::size_t w = 0; w < word_count(); ++w) mine[w] |= theirs[w];
  }

 private:
  static constexpr std::size_t inline_words = 2;

  [[nodiscard]] std::size_t word_count() const noexcept { return (bits_ + 63) / 64; }
  [[nodiscard]] std::uint64_t* words() noexcept { return heap_ ? heap_.get() : inline_; }
  [[nodiscard]] const std::uint64_t* words() const noexcept { return heap_ ? heap_.get() : inline_; }

  std::size_t bits_ = 0;
  std::uint64_t inline_[inline_words] = {};
  std::unique_ptr<std::uint64_t[]> heap_;
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
