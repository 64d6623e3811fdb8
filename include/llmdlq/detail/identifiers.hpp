// SPDX-License-Identifier: MIT
// Content hashes and record identifiers, on OpenSSL's libcrypto (whose
// SHA-256 uses the CPU's SHA extensions where there are any).
#pragma once

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

inline constexpr char hex_digits[] = "0123456789abcdef";

/// The SHA-256 digest of `data`.
inline std::array<unsigned char, 32> sha256(std::string_view data) {
  std::array<unsigned char, 32> digest{};
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr);
  return digest;
}

/// Lowercase hex SHA-256 of `data`.
inline std::string sha256_hex(std::string_view data) {
  const auto digest = sha256(data);
  std::string hex;
  hex.reserve(2 * digest.size());
  for (const unsigned char byte : digest) {
    hex.push_back(hex_digits[byte >> 4]);
    hex.push_back(hex_digits[byte & 0x0F]);
  }
  return hex;
}

/// `data` in standard base64 (RFC 4648, padded).
inline std::string base64(std::string_view data) {
  std::string text(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text.data()),
                                reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
  text.resize(static_cast<std::size_t>(n));
  return text;
}

/// The bytes of standard base64 text (padded, as base64() writes it); text
/// that is not base64 gives what OpenSSL could decode of it.
inline std::string base64_decode(std::string_view text) {
  std::string bytes(3 * ((text.size() + 3) / 4) + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return {};
  std::size_t size = static_cast<std::size_t>(n);
  // EVP_DecodeBlock counts the padding's bytes as zeros.
  if (text.ends_with("==")) {
    size -= std::min<std::size_t>(size, 2);
  } else if (text.ends_with("=")) {
    size -= std::min<std::size_t>(size, 1);
  }
  bytes.resize(size);
  return bytes;
}

/// A UUID in its text form, with `version` and the RFC 9562 variant set
/// and the other bits from `bytes`.
inline std::string format_uuid(std::array<unsigned char, 16> bytes, unsigned version) {
  bytes[6] = static_cast<unsigned char>((version & 0x0F) << 4 | (bytes[6] & 0x0F));
  bytes[8] = static_cast<unsigned char>(0x80 | (bytes[8] & 0x3F));
  std::string text;
  text.reserve(36);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text.push_back('-');
    text.push_back(hex_digits[bytes[i] >> 4]);
    text.push_back(hex_digits[bytes[i] & 0x0F]);
  }
  return text;
}

/// A UUIDv7 in its text form: the millisecond time `at` in the first 48
/// bits, the version and variant set, the other bits from `bytes`.
inline std::string format_uuid_v7(timestamp at, std::array<unsigned char, 16> bytes) {
  const auto millis = static_cast<std::uint64_t>(at.time_since_epoch().count());
  for (std::size_t i = 0; i < 6; ++i) bytes[i] = static_cast<unsigned char>(millis >> (40 - 8 * i));
  return format_uuid(bytes, 7);
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
