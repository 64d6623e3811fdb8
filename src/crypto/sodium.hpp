// SPDX-License-Identifier: MIT
// libsodium, initialised once, and its base64 (RFC 4648, padded).
#pragma once

#include <sodium.h>

#include <optional>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// sodium_init() once per process, from any thread; false when it failed.
inline bool sodium_ready() {
  static const bool ready = sodium_init() >= 0;
  return ready;
}

inline std::string sodium_base64(const unsigned char* bytes, std::size_t size) {
  std::string text(sodium_base64_ENCODED_LEN(size, sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(text.data(), text.size(), bytes, size, sodium_base64_VARIANT_ORIGINAL);
  text.resize(text.size() - 1);  // its NUL
  return text;
}

/// The bytes of padded base64 `text`, all of it, ignoring `ignore`
/// characters; nothing when it is not base64.
inline std::optional<std::string> sodium_unbase64(std::string_view text, const char* ignore = nullptr) {
  std::string bytes(text.size() / 4 * 3 + 3, '\0');
  std::size_t size = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(bytes.data()), bytes.size(), text.data(), text.size(),
                        ignore, &size, &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
      end != text.data() + text.size()) {
    sodium_memzero(bytes.data(), bytes.size());
    return std::nullopt;
  }
  bytes.resize(size);
  return bytes;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
