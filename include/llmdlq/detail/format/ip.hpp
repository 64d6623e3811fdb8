// SPDX-License-Identifier: MIT
// IPv4 and IPv6 address text checks for llmdlq::matches_format, on the C library's inet_pton.
#pragma once

#include <arpa/inet.h>

#include <cstddef>
#include <cstring>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

// glibc's inet_pton takes exactly RFC 3986's dotted-decimal quad (no leading
// zeros, no shorthand, no octal or hex) and RFC 4291's text forms (an embedded
// quad under the same rules, no zone id, no prefix length). It needs a
// terminated copy, so over-long text (or text with a NUL) is rejected first.
template <int family, std::size_t max_length>
inline bool inet_pton_accepts(std::string_view text) noexcept {
  if (text.empty() || text.size() > max_length || text.find('\0') != std::string_view::npos) return false;
  char terminated[max_length + 1];
  std::memcpy(terminated, text.data(), text.size());
  terminated[text.size()] = '\0';
  unsigned char address[16];
  return ::inet_pton(family, terminated, address) == 1;
}

/// RFC 2673 / RFC 3986 dotted-decimal quad: 0.0.0.0 to 255.255.255.255.
inline bool is_ipv4(std::string_view text) noexcept {
  return inet_pton_accepts<AF_INET, 15>(text);  // "255.255.255.255"
}

/// RFC 4291 section 2.2 text form.
inline bool is_ipv6(std::string_view text) noexcept {
  return inet_pton_accepts<AF_INET6, 45>(text);  // "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255"
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
