// SPDX-License-Identifier: MIT
// Where a field cipher gets its keys: the id of the key that seals new
// texts, and a key by its id. Part of the llmdlq::crypto library.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/field_cipher.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// A 256-bit key in memory that is guarded from the rest of the heap, kept
/// out of swap where the system allows, and wiped when released.
class secret_key {
 public:
  static constexpr std::size_t size = 32;

  /// Copies exactly `size` bytes; provider_failed when guarded memory cannot be had.
  [[nodiscard]] static expected<secret_key, cipher_error> copy_of(std::span<const unsigned char> bytes);

  secret_key(secret_key&& other) noexcept;
  secret_key& operator=(secret_key&& other) noexcept;
  secret_key(const secret_key&) = delete;
  secret_key& operator=(const secret_key&) = delete;
  ~secret_key();

  [[nodiscard]] const unsigned char* data() const noexcept { return bytes_; }

 private:
  explicit secret_key(unsigned char* bytes) noexcept : bytes_(bytes) {}
  unsigned char* bytes_ = nullptr;
};

/// The keys of a field cipher. Implementations must be thread-safe.
class key_provider {
 public:
  virtual ~key_provider() = default;
  /// The id of the key new texts are sealed with.
  [[nodiscard]] virtual expected<std::string, cipher_error> current_key_id() const = 0;
  /// The key with this id; unknown_key or key_shredded when there is none,
  /// provider_failed when it cannot be read.
  [[nodiscard]] virtual expected<secret_key, cipher_error> key(std::string_view id) const = 0;
};

LLMDLQ_END_NAMESPACE
