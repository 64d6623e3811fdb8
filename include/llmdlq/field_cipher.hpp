// SPDX-License-Identifier: MIT
// field_cipher: seals the originals of an envelope's stored texts for those
// who hold a key, and opens them again. The interface only: llmdlq::crypto
// implements it on libsodium (crypto/sodium_field_cipher.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Why a text could not be sealed or opened.
enum class cipher_failure : std::uint8_t {
  unknown_key,        ///< no key with this id
  key_shredded,       ///< the key was destroyed on purpose: the original is gone for good
  forged_or_corrupt,  ///< authentication failed: another key, record or field, or altered bytes
  malformed,          ///< not a sealed text this cipher reads (algorithm, nonce or base64)
  provider_failed,    ///< the keys could not be read (files, permissions, a service down)
};

[[nodiscard]] LLMDLQ_INLINE std::string_view to_string(cipher_failure failure) noexcept;

struct cipher_error {
  cipher_failure code = cipher_failure::provider_failed;
  std::string key_id;  ///< the key asked for, when there was one
  std::string message;
};

/// One line for a listing: `sealed with key K: key shredded (...)`.
[[nodiscard]] LLMDLQ_INLINE std::string describe(const cipher_error& error);

/// The envelope fields a cipher seals, as they are named in its associated data.
inline constexpr std::string_view sealed_raw_response = "raw_response";
inline constexpr std::string_view sealed_original_input = "original_input";

/// Seals a text to one record and one field, so that a sealed copy moved to
/// another record or field fails to open. Implementations must be thread-safe.
class field_cipher {
 public:
  virtual ~field_cipher() = default;
  /// `plaintext` sealed with the current key; `length` is its size, `cut` false.
  [[nodiscard]] virtual expected<sealed_text, cipher_error> seal(std::string_view dlq_id, std::string_view field,
                                                                 std::string_view plaintext) const = 0;
  /// The plaintext, only when it authenticates for this record and field.
  [[nodiscard]] virtual expected<std::string, cipher_error> open(std::string_view dlq_id, std::string_view field,
                                                                 const sealed_text& sealed) const = 0;
};

/// The associated data a seal authenticates: a version tag, then dlq_id,
/// field and key id, each preceded by its length as 8 bytes big-endian, so
/// that no choice of values can give two triples the same bytes.
[[nodiscard]] LLMDLQ_INLINE std::string sealed_associated_data(std::string_view dlq_id, std::string_view field,
                                                               std::string_view key_id);

/// The original of one stored text, or why it cannot be read.
struct opened_text {
  std::string field;  ///< raw_response or original_input
  expected<std::string, cipher_error> original;
  bool cut = false;  ///< the sealed copy holds only the start of the original
};

/// Opens every sealed copy in `e` (none: an empty list). A cipher that
/// throws is reported as provider_failed; throws nothing but std::bad_alloc.
[[nodiscard]] LLMDLQ_INLINE std::vector<opened_text> open_sealed(const envelope& e, const field_cipher& cipher);

namespace detail {

/// The extensions member that says why an original could not be sealed.
inline constexpr std::string_view seal_error_key = "llmdlq_seal_error";

/// process_options::cipher's step (see there): fits `e` to half of
/// `max_bytes`, seals the originals `raw` and `input` (empty: none) into the
/// room left, and notes a failed seal in the extensions.
LLMDLQ_INLINE void seal_originals(envelope& e, std::string_view raw, std::string_view input,
                                  const field_cipher& cipher, std::size_t max_bytes);

}  // namespace detail

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/field_cipher.ipp"
#endif
