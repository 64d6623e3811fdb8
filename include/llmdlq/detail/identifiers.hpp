// SPDX-License-Identifier: MIT
// Content hashes and record identifiers, on libsodium.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <sodium.h>

#include "llmdlq/timestamp.hpp"

namespace llmdlq::detail {

inline void ensure_sodium() noexcept {
  // sodium_init is thread-safe and idempotent; it fails only without a
  // randomness source, which randombytes_buf would then report by aborting
  // before returning predictable bytes.
  static const int ready = sodium_init();
  (void)ready;
}

/// Lowercase hex SHA-256 of `data`.
inline std::string sha256_hex(std::string_view data) {
  ensure_sodium();
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  std::string hex(2 * sizeof digest, '\0');
  sodium_bin2hex(hex.data(), hex.size() + 1, digest, sizeof digest);
  return hex;
}

/// `data` in standard base64 (RFC 4648, padded).
inline std::string base64(std::string_view data) {
  ensure_sodium();
  std::string text(sodium_base64_ENCODED_LEN(data.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(text.data(), text.size(), reinterpret_cast<const unsigned char*>(data.data()), data.size(),
                    sodium_base64_VARIANT_ORIGINAL);
  text.resize(text.size() - 1);  // the terminating NUL
  return text;
}

/// A UUID version 7 (RFC 9562): the millisecond timestamp in the first 48
/// bits, so identifiers sort by creation time, then 74 random bits.
inline std::string uuid_v7(timestamp at) {
  ensure_sodium();
  std::array<unsigned char, 16> bytes;
  randombytes_buf(bytes.data(), bytes.size());
  const auto millis = static_cast<std::uint64_t>(at.time_since_epoch().count());
  for (int i = 0; i < 6; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<unsigned char>(millis >> (40 - 8 * i));
  bytes[6] = static_cast<unsigned char>(0x70 | (bytes[6] & 0x0F));
  bytes[8] = static_cast<unsigned char>(0x80 | (bytes[8] & 0x3F));
  static constexpr char digits[] = "0123456789abcdef";
  std::string text;
  text.reserve(36);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text.push_back('-');
    text.push_back(digits[bytes[i] >> 4]);
    text.push_back(digits[bytes[i] & 0x0F]);
  }
  return text;
}

}  // namespace llmdlq::detail
