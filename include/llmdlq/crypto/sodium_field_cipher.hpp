// SPDX-License-Identifier: MIT
// field_cipher on libsodium's XChaCha20-Poly1305 (IETF). Part of the
// llmdlq::crypto library.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/crypto/key_provider.hpp"
#include "llmdlq/field_cipher.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Seals with the provider's current key and a random 192-bit nonce per
/// seal; the associated data is sealed_associated_data(dlq_id, field, key
/// id). Opens with the key the sealed text names: another key, record or
/// field, or any altered byte, is forged_or_corrupt. Thread-safe.
class sodium_field_cipher final : public field_cipher {
 public:
  static constexpr std::string_view algorithm = "xchacha20poly1305-ietf";

  explicit sodium_field_cipher(std::shared_ptr<const key_provider> keys);

  [[nodiscard]] expected<sealed_text, cipher_error> seal(std::string_view dlq_id, std::string_view field,
                                                         std::string_view plaintext) const override;
  [[nodiscard]] expected<std::string, cipher_error> open(std::string_view dlq_id, std::string_view field,
                                                         const sealed_text& sealed) const override;

  /// Opens with `sealed`'s key and seals again with `to` (rotation); the
  /// result keeps `cut`. Fails as open() fails, or unknown_key for `to`.
  [[nodiscard]] expected<sealed_text, cipher_error> reseal(std::string_view dlq_id, std::string_view field,
                                                           const sealed_text& sealed, std::string_view to) const;

 private:
  [[nodiscard]] expected<sealed_text, cipher_error> seal_with(std::string_view key_id, std::string_view dlq_id,
                                                              std::string_view field,
                                                              std::string_view plaintext) const;
  std::shared_ptr<const key_provider> keys_;
};

LLMDLQ_END_NAMESPACE
