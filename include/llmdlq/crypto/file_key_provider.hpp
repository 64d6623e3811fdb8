// SPDX-License-Identifier: MIT
// Keys in a directory: one file per key, a `current` file naming the key
// that seals new texts, and a tombstone per shredded key. Part of the
// llmdlq::crypto library.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/crypto/key_provider.hpp"
#include "llmdlq/expected.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// One key of a key directory.
struct key_listing {
  std::string id;
  bool shredded = false;  ///< only its tombstone is left
  bool current = false;   ///< new texts are sealed with it
};

/// A key directory:
///  - `<id>.key`: 32 random bytes, in base64 (or raw), mode 0600;
///  - `current`: the id new texts are sealed with;
///  - `<id>.shredded`: the tombstone of a destroyed key, so that a reader
///    learns "key K was shredded" rather than "key K is unknown".
/// The directory is created 0700 and key files 0600; a key file or
/// directory that its group or others may read, or that another user than
/// this one or root owns, is refused (provider_failed), and so is a
/// directory below one another user owns or may write (unless it is sticky,
/// as /tmp): its owner could choose the key that seals.
///
/// The directory is reached by a walk from / (from the working directory
/// for a relative path): each component is opened with openat and
/// O_NOFOLLOW from the one before, and each directory on the way is judged
/// before the next is opened. The directory itself must not be a symbolic
/// link (refused, naming it); a link on the way is followed only when this
/// user or root owns it, and where it leads is walked and judged the same
/// way, so a link into a directory another user controls is refused. The
/// directory is then held open, and every key file, `current` and
/// tombstone is read, created (O_EXCL, fsync), renamed and removed relative
/// to it: a directory or link swapped after the walk redirects nothing. A
/// key file is read up to 4 KiB (detail::file_kinds), whatever it claims.
///
/// Key ids are 1 to 64 of [A-Za-z0-9._-], not starting with a dot.
/// Files are read on every call, so a rotation or a shred by another
/// process counts at once; a key lives in guarded memory only while used.
class file_key_provider final : public key_provider {
 public:
  explicit file_key_provider(std::filesystem::path directory);

  [[nodiscard]] expected<std::string, cipher_error> current_key_id() const override;
  [[nodiscard]] expected<secret_key, cipher_error> key(std::string_view id) const override;

  [[nodiscard]] static bool valid_key_id(std::string_view id) noexcept;
  /// A new random key `id` (creating the directory); it becomes current when
  /// `make_current`. An existing or shredded id is refused.
  [[nodiscard]] static expected<void, cipher_error> generate(const std::filesystem::path& directory,
                                                            std::string_view id, bool make_current = true);
  /// New texts are sealed with key `id`, which must exist.
  [[nodiscard]] static expected<void, cipher_error> make_current(const std::filesystem::path& directory,
                                                                std::string_view id);
  /// Destroys key `id` and leaves its tombstone: every text sealed with it
  /// is unreadable for good. The current key is refused: make another
  /// current first. So is a key file that is a symbolic link, which removing
  /// would leave the key bytes behind.
  [[nodiscard]] static expected<void, cipher_error> shred(const std::filesystem::path& directory,
                                                         std::string_view id);
  /// The keys and tombstones, by id.
  [[nodiscard]] static expected<std::vector<key_listing>, cipher_error> list(const std::filesystem::path& directory);

 private:
  std::filesystem::path directory_;
};

LLMDLQ_END_NAMESPACE
