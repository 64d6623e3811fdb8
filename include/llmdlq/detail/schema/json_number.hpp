// SPDX-License-Identifier: MIT
// Exact comparison of JSON numbers held as int64, uint64 or double, and an
// exact decimal test for multipleOf.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// A JSON number as the parsers deliver it.
struct json_number {
  enum class kind : std::uint8_t { int64, uint64, float64 };
  kind k = kind::int64;
  union {
    std::int64_t i;
    std::uint64_t u;
    double d;
  };

  constexpr json_number() noexcept : i(0) {}
  static constexpr json_number of(std::int64_t v) noexcept {
    json_number n;
    n.k = kind::int64;
    n.i = v;
    return n;
  }
  static constexpr json_number of(std::uint64_t v) noexcept {
    json_number n;
    n.k = kind::uint64;
    n.u = v;
    return n;
  }
  static constexpr json_number of(double v) noexcept {
    json_number n;
    n.k = kind::float64;
    n.d = v;
    return n;
  }

  /// JSON Schema's "integer": any number without a fractional part.
  [[nodiscard]] bool is_integer() const noexcept {
    return k != kind::float64 || (std::isfinite(d) && std::trunc(d) == d);
  }

  [[nodiscard]] double to_double() const noexcept {
    switch (k) {
      case kind::int64: return static_cast<double>(i);
      case kind::uint64: return static_cast<double>(u);
      case kind::float64: return d;
    }
    return 0;
  }
};

namespace number_detail {

constexpr int sign(bool less, bool greater) noexcept { return less ? -1 : (greater ? 1 : 0); }

// Compares an int64 with a double without losing precision on either side.
inline int compare(std::int64_t x, double d) noexcept {
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  const double whole = std::trunc(d);
  const auto w = static_cast<std::int64_t>(whole);
  if (x != w) return sign(x < w, x > w);
  const double fraction = d - whole;
  return sign(fraction > 0, fraction < 0);
}

inline int compare(std::uint64_t x, double d) noexcept {
  if (d >= 18446744073709551616.0) return -1;
  if (d < 0) return 1;
  const double whole = std::trunc(d);
  const auto w = static_cast<std::uint64_t>(whole);
  if (x != w) return sign(x < w, x > w);
  return d > whole ? -1 : 0;
}

inline int compare(std::int64_t x, std::uint64_t y) noexcept {
  if (x < 0) return -1;
  const auto ux = static_cast<std::uint64_t>(x);
  return sign(ux < y, ux > y);
}

}  // namespace number_detail

/// -1, 0 or 1 as `a` is less than, equal to or greater than `b`, exactly.
LLMDLQ_ALWAYS_INLINE int compare(const json_number& a, const json_number& b) noexcept {
  using k = json_number::kind;
  using number_detail::sign;
  switch (a.k) {
    case k::int64:
      switch (b.k) {
        case k::int64: return sign(a.i < b.i, a.i > b.i);
        case k::uint64: return number_detail::compare(a.i, b.u);
        case k::float64: return number_detail::compare(a.i, b.d);
      }
      break;
    case k::uint64:
      switch (b.k) {
        case k::int64: return -number_detail::compare(b.i, a.u);
        case k::uint64: return sign(a.u < b.u, a.u > b.u);
        case k::float64: return number_detail::compare(a.u, b.d);
      }
      break;
    case k::float64:
      switch (b.k) {
        case k::int64: return -number_detail::compare(b.i, a.d);
        case k::uint64: return -number_detail::compare(b.u, a.d);
        case k::float64: return sign(a.d < b.d, a.d > b.d);
      }
      break;
  }
  return 0;
}

/// 10^0 to 10^22, every power of ten a double holds exactly.
inline constexpr double powers_of_ten[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                           1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                           1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/// A positive decimal `mantissa * 10^exponent`.
struct decimal {
  std::uint64_t mantissa = 0;
  int exponent = 0;
};

/// The magnitude of `n` as the shortest decimal that reads back as `n`: the
/// number a person wrote, for doubles parsed from JSON text.
inline decimal to_decimal(const json_number& n) noexcept {
  using k = json_number::kind;
  if (n.k == k::int64) return {n.i < 0 ? 0 - static_cast<std::uint64_t>(n.i) : static_cast<std::uint64_t>(n.i), 0};
  if (n.k == k::uint64) return {n.u, 0};
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, std::fabs(n.d));
  if (ec != std::errc()) return {};
  decimal out;
  int fraction_digits = 0;
  bool in_fraction = false;
  const char* p = buf;
  for (; p != end && *p != 'e'; ++p) {
    if (*p == '.') {
      in_fraction = true;
      continue;
    }
    out.mantissa = out.mantissa * 10 + static_cast<std::uint64_t>(*p - '0');
    fraction_digits += in_fraction;
  }
  int exponent = 0;
  if (p != end) std::from_chars(p + 1 + (p[1] == '+'), end, exponent);
  out.exponent = exponent - fraction_digits;
  return out;
}

/// Whether `x` is an integer multiple of the positive `divisor`, judged on
/// the decimal numbers as written (so 19.99 is a multiple of 0.01), exactly.
inline bool is_multiple_of(const json_number& x, const decimal& divisor) noexcept {
  if (divisor.mantissa == 0) return false;
  const decimal a = to_decimal(x);
  if (a.mantissa == 0) return true;
  const std::uint64_t b = divisor.mantissa;
  if (a.exponent >= divisor.exponent) {
    // a * 10^e mod b, by repeated multiplication modulo b (e is at most ~650).
    __extension__ using u128 = unsigned __int128;
    u128 r = a.mantissa % b;
    for (int e = a.exponent - divisor.exponent; e > 0 && r != 0; --e) r = (r * 10) % b;
    return r == 0;
  }
  const int e = divisor.exponent - a.exponent;
  if (e > 19) return false;  // a < 10^20 cannot hold b * 10^e
  std::uint64_t scale = 1;
  for (int i = 0; i < e; ++i) scale *= 10;
  if (a.mantissa % scale != 0) return false;
  return (a.mantissa / scale) % b == 0;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
