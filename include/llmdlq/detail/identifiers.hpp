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

/// A thread's own SHA-256 context. EVP_Digest with EVP_sha256() looks the
/// implementation up on every call, under a lock and a reference count that
/// every thread shares; a context fetched once per thread and reset for each
/// digest touches nothing another thread does.
class sha256_context {
 public:
  sha256_context() noexcept
      : md_(EVP_MD_fetch(nullptr, "SHA2-256", nullptr)), ctx_(EVP_MD_CTX_new()) {}
  sha256_context(const sha256_context&) = delete;
  sha256_context& operator=(const sha256_context&) = delete;
  ~sha256_context() {
    EVP_MD_CTX_free(ctx_);
    EVP_MD_free(md_);
  }

  /// False when OpenSSL could not make the context (out of memory).
  bool digest(std::string_view data, unsigned char* out) noexcept {
    unsigned int length = 0;
    return md_ && ctx_ && EVP_DigestInit_ex(ctx_, md_, nullptr) == 1 &&
           EVP_DigestUpdate(ctx_, data.data(), data.size()) == 1 && EVP_DigestFinal_ex(ctx_, out, &length) == 1;
  }

 private:
  EVP_MD* md_;
  EVP_MD_CTX* ctx_;
};

/// The SHA-256 digest of `data`.
inline std::array<unsigned char, 32> sha256(std::string_view data) {
  std::array<unsigned char, 32> digest{};
  thread_local sha256_context context;
  if (!context.digest(data, digest.data())) {
    unsigned int length = 0;
    EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr);
  }
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
