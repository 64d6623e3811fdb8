// SPDX-License-Identifier: MIT
// Sixty-four bytes of a text as bit masks of the bytes of a kind: bit k of a
// mask says byte k is one. A scan over the set bits visits only the bytes
// that may start something, sixteen bytes compared at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "llmdlq/config.hpp"

#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

class byte_block {
 public:
  static constexpr std::size_t size = 64;

  /// The block of `text` at `at`; past the text's end it reads zero bytes.
  byte_block(std::string_view text, std::size_t at) noexcept {
    const std::size_t n = text.size() - at < size ? text.size() - at : size;
    if (n == size) {
      std::memcpy(bytes_, text.data() + at, size);
    } else {
      std::memset(bytes_, 0, size);
      std::memcpy(bytes_, text.data() + at, n);
    }
  }

  /// The bytes equal to one of `C...`.
  template <unsigned char... C>
  [[nodiscard]] std::uint64_t equal_any() const noexcept {
#if defined(__SSE2__)
    return gather([](__m128i v) { return (_mm_cmpeq_epi8(v, _mm_set1_epi8(static_cast<char>(C))) | ...); });
#else
    return gather([](unsigned char b) { return ((b == C) || ...); });
#endif
  }

  /// The bytes of 0x80 and above: none in ASCII text.
  [[nodiscard]] std::uint64_t high() const noexcept {
#if defined(__SSE2__)
    return gather([](__m128i v) { return v; });  // the sign bits are what a movemask reads
#else
    return gather([](unsigned char b) { return b >= 0x80; });
#endif
  }

  /// The bytes in [Lo, Hi].
  template <unsigned char Lo, unsigned char Hi>
  [[nodiscard]] std::uint64_t in_range() const noexcept {
#if defined(__SSE2__)
    return gather([](__m128i v) { return in(v, Lo, Hi); });
#else
    return gather([](unsigned char b) { return b >= Lo && b <= Hi; });
#endif
  }

  /// ASCII letters and digits.
  [[nodiscard]] std::uint64_t alphanumeric() const noexcept {
#if defined(__SSE2__)
    return gather([](__m128i v) { return in(v, '0', '9') | in(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 'z'); });
#else
    return gather([](unsigned char b) {
      const unsigned char folded = b | 0x20;
      return (b >= '0' && b <= '9') || (folded >= 'a' && folded <= 'z');
    });
#endif
  }

 private:
#if defined(__SSE2__)
  // v is in [lo, hi] when v - lo, wrapping, is at most hi - lo unsigned:
  // when max(v - lo, hi - lo) is hi - lo.
  static __m128i in(__m128i v, unsigned char lo, unsigned char hi) noexcept {
    const __m128i shifted = _mm_sub_epi8(v, _mm_set1_epi8(static_cast<char>(lo)));
    const __m128i width = _mm_set1_epi8(static_cast<char>(hi - lo));
    return _mm_cmpeq_epi8(_mm_max_epu8(shifted, width), width);
  }
  template <class Test>
  [[nodiscard]] std::uint64_t gather(Test test) const noexcept {
    std::uint64_t mask = 0;
    for (std::size_t k = 0; k < size / 16; ++k) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes_ + 16 * k));
      mask |= static_cast<std::uint64_t>(static_cast<std::uint16_t>(_mm_movemask_epi8(test(v)))) << (16 * k);
    }
    return mask;
  }
#else
  template <class Test>
  [[nodiscard]] std::uint64_t gather(Test test) const noexcept {
    std::uint64_t mask = 0;
    for (std::size_t k = 0; k < size; ++k) mask |= static_cast<std::uint64_t>(test(bytes_[k])) << k;
    return mask;
  }
#endif
  unsigned char bytes_[size];
};

/// The index of the lowest set bit of a non-zero mask.
inline unsigned lowest_bit(std::uint64_t mask) noexcept { return static_cast<unsigned>(__builtin_ctzll(mask)); }

/// The bits of positions at or above `k` (k < 64; all for k == 0).
inline std::uint64_t bits_from(std::size_t k) noexcept { return k >= 64 ? 0 : ~std::uint64_t{0} << k; }

}  // namespace detail
LLMDLQ_END_NAMESPACE
