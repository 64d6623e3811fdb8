// SPDX-License-Identifier: MIT
// secret_key: libsodium's guarded allocations (guard pages, mlock, a canary),
// read-only while held, wiped on release.
#include <cstring>
#include <utility>

#include "llmdlq/crypto/key_provider.hpp"
#include "sodium.hpp"

LLMDLQ_BEGIN_NAMESPACE

expected<secret_key, cipher_error> secret_key::copy_of(std::span<const unsigned char> bytes) {
  if (bytes.size() != size) {
    return unexpected(cipher_error{cipher_failure::malformed, {}, "a key is 32 bytes"});
  }
  if (!detail::sodium_ready()) {
    return unexpected(cipher_error{cipher_failure::provider_failed, {}, "libsodium could not be initialised"});
  }
  auto* held = static_cast<unsigned char*>(sodium_malloc(size));
  if (held == nullptr) {
    return unexpected(cipher_error{cipher_failure::provider_failed, {}, "no guarded memory for a key"});
  }
  std::memcpy(held, bytes.data(), size);
  sodium_mprotect_readonly(held);
  return secret_key(held);
}

secret_key::secret_key(secret_key&& other) noexcept : bytes_(std::exchange(other.bytes_, nullptr)) {}

secret_key& secret_key::operator=(secret_key&& other) noexcept {
  if (this != &other) {
    secret_key old(std::move(*this));
    bytes_ = std::exchange(other.bytes_, nullptr);
  }
  return *this;
}

secret_key::~secret_key() {
  if (bytes_ == nullptr) return;
  sodium_mprotect_readwrite(bytes_);
  sodium_memzero(bytes_, size);
  sodium_free(bytes_);
}

LLMDLQ_END_NAMESPACE
