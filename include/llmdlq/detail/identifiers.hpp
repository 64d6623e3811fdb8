// SPDX-License-Identifier: MIT
// Content hashes and record identifiers, on OpenSSL's libcrypto (whose
// SHA-256 uses the CPU's SHA extensions where there are any).
#pragma once

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "llmdlq/timestamp.hpp"

namespace llmdlq::detail {

inline constexpr char hex_digits[] = "0123456789abcdef";

/// Lowercase hex SHA-256 of `data`.
inline std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) return {};
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(hex_digits[digest[i] >> 4]);
    hex.push_back(hex_digits[digest[i] & 0x0F]);
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

/// A UUIDv7 in its text form: the millisecond time `at` in the first 48
/// bits, the version and variant set, the other bits from `bytes`.
inline std::string format_uuid_v7(timestamp at, std::array<unsigned char, 16> bytes) {
  const auto millis = static_cast<std::uint64_t>(at.time_since_epoch().count());
  for (std::size_t i = 0; i < 6; ++i) bytes[i] = static_cast<unsigned char>(millis >> (40 - 8 * i));
  bytes[6] = static_cast<unsigned char>(0x70 | (bytes[6] & 0x0F));
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

/// A UUID version 7 (RFC 9562): the millisecond timestamp in the first 48
/// bits, so identifiers sort by creation time, then 74 random bits from the
/// system's CSPRNG.
inline std::string uuid_v7(timestamp at) {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    // No randomness source: fall back on the clock and a counter, still unique in this process.
    static std::uint64_t counter = 0;
    const std::uint64_t n = ++counter ^ static_cast<std::uint64_t>(at.time_since_epoch().count());
    for (std::size_t i = 0; i < 8; ++i) bytes[8 + i] = static_cast<unsigned char>(n >> (8 * i));
  }
  return format_uuid_v7(at, bytes);
}

}  // namespace llmdlq::detail
