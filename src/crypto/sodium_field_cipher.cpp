// SPDX-License-Identifier: MIT
// sodium_field_cipher: crypto_aead_xchacha20poly1305_ietf_*.
#include "llmdlq/crypto/sodium_field_cipher.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "sodium.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

cipher_error failure(cipher_failure code, std::string_view key_id, std::string message) {
  return cipher_error{code, std::string(key_id), std::move(message)};
}

const unsigned char* bytes_of(std::string_view text) { return reinterpret_cast<const unsigned char*>(text.data()); }

}  // namespace

sodium_field_cipher::sodium_field_cipher(std::shared_ptr<const key_provider> keys) : keys_(std::move(keys)) {}

expected<sealed_text, cipher_error> sodium_field_cipher::seal(std::string_view dlq_id, std::string_view field,
                                                              std::string_view plaintext) const {
  if (!keys_) return unexpected(failure(cipher_failure::provider_failed, {}, "no key provider"));
  auto id = keys_->current_key_id();
  if (!id) return unexpected(std::move(id).error());
  return seal_with(*id, dlq_id, field, plaintext);
}

expected<sealed_text, cipher_error> sodium_field_cipher::seal_with(std::string_view key_id, std::string_view dlq_id,
                                                                   std::string_view field,
                                                                   std::string_view plaintext) const {
  if (!detail::sodium_ready()) {
    return unexpected(failure(cipher_failure::provider_failed, key_id, "libsodium could not be initialised"));
  }
  auto key = keys_->key(key_id);
  if (!key) return unexpected(std::move(key).error());
  unsigned char nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
  randombytes_buf(nonce, sizeof nonce);
  const std::string ad = sealed_associated_data(dlq_id, field, key_id);
  std::string ciphertext(plaintext.size() + crypto_aead_xchacha20poly1305_ietf_ABYTES, '\0');
  unsigned long long size = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(reinterpret_cast<unsigned char*>(ciphertext.data()), &size,
                                             bytes_of(plaintext), plaintext.size(), bytes_of(ad), ad.size(),
                                             nullptr, nonce, key->data());
  sealed_text sealed;
  sealed.key_id = std::string(key_id);
  sealed.algorithm = std::string(algorithm);
  sealed.nonce = detail::sodium_base64(nonce, sizeof nonce);
  sealed.ciphertext = detail::sodium_base64(bytes_of(ciphertext), static_cast<std::size_t>(size));
  sealed.length = plaintext.size();
  return sealed;
}

expected<std::string, cipher_error> sodium_field_cipher::open(std::string_view dlq_id, std::string_view field,
                                                              const sealed_text& sealed) const {
  const std::string_view id = sealed.key_id;
  if (!keys_) return unexpected(failure(cipher_failure::provider_failed, id, "no key provider"));
  if (sealed.algorithm != algorithm) {
    return unexpected(failure(cipher_failure::malformed, id, fmt::format("algorithm '{}' is not {}",
                                                                         sealed.algorithm, algorithm)));
  }
  if (!detail::sodium_ready()) {
    return unexpected(failure(cipher_failure::provider_failed, id, "libsodium could not be initialised"));
  }
  const auto nonce = detail::sodium_unbase64(sealed.nonce);
  if (!nonce || nonce->size() != crypto_aead_xchacha20poly1305_ietf_NPUBBYTES) {
    return unexpected(failure(cipher_failure::malformed, id, "the nonce is not 24 bytes in base64"));
  }
  const auto ciphertext = detail::sodium_unbase64(sealed.ciphertext);
  if (!ciphertext || ciphertext->size() < crypto_aead_xchacha20poly1305_ietf_ABYTES) {
    return unexpected(failure(cipher_failure::malformed, id, "the ciphertext is not base64 holding a tag"));
  }
  auto key = keys_->key(id);
  if (!key) return unexpected(std::move(key).error());
  const std::string ad = sealed_associated_data(dlq_id, field, id);
  std::string plaintext(ciphertext->size() - crypto_aead_xchacha20poly1305_ietf_ABYTES, '\0');
  unsigned long long size = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(reinterpret_cast<unsigned char*>(plaintext.data()), &size, nullptr,
                                                 bytes_of(*ciphertext), ciphertext->size(), bytes_of(ad), ad.size(),
                                                 bytes_of(*nonce), key->data()) != 0) {
    return unexpected(failure(cipher_failure::forged_or_corrupt, id,
                              "it does not authenticate for this key, record and field"));
  }
  plaintext.resize(static_cast<std::size_t>(size));
  if (plaintext.size() != sealed.length) {
    sodium_memzero(plaintext.data(), plaintext.size());
    return unexpected(failure(cipher_failure::forged_or_corrupt, id,
                              fmt::format("it holds {} bytes, not the {} its length says", size, sealed.length)));
  }
  return plaintext;
}

expected<sealed_text, cipher_error> sodium_field_cipher::reseal(std::string_view dlq_id, std::string_view field,
                                                                const sealed_text& sealed, std::string_view to) const {
  auto plaintext = open(dlq_id, field, sealed);
  if (!plaintext) return unexpected(std::move(plaintext).error());
  auto resealed = seal_with(to, dlq_id, field, *plaintext);
  sodium_memzero(plaintext->data(), plaintext->size());
  if (resealed) resealed->cut = sealed.cut;
  return resealed;
}

LLMDLQ_END_NAMESPACE
