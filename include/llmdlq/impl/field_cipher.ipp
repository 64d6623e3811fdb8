// SPDX-License-Identifier: MIT
// Definitions for field_cipher.hpp.
#pragma once

#include <algorithm>
#include <exception>
#include <new>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/utf8.hpp"
#include "llmdlq/field_cipher.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE std::string_view to_string(cipher_failure failure) noexcept {
  switch (failure) {
    case cipher_failure::unknown_key: return "key unknown";
    case cipher_failure::key_shredded: return "key shredded";
    case cipher_failure::forged_or_corrupt: return "forged or corrupt";
    case cipher_failure::malformed: return "malformed";
    case cipher_failure::provider_failed: return "key provider failed";
  }
  return "unknown failure";
}

LLMDLQ_INLINE std::string describe(const cipher_error& error) {
  std::string line = error.key_id.empty() ? std::string("sealed")
                                          : fmt::format("sealed with key {}", error.key_id);
  line += ": ";
  line += to_string(error.code);
  if (!error.message.empty()) line += fmt::format(" ({})", error.message);
  return line;
}

LLMDLQ_INLINE std::string sealed_associated_data(std::string_view dlq_id, std::string_view field,
                                                 std::string_view key_id) {
  std::string data("llmdlq-sealed-v1");
  for (const std::string_view part : {dlq_id, field, key_id}) {
    const auto size = static_cast<std::uint64_t>(part.size());
    for (int shift = 56; shift >= 0; shift -= 8) data.push_back(static_cast<char>((size >> shift) & 0xFF));
    data.append(part);
  }
  return data;
}

LLMDLQ_INLINE std::vector<opened_text> open_sealed(const envelope& e, const field_cipher& cipher) {
  std::vector<opened_text> opened;
  const auto open_one = [&](std::string_view field, const captured_text& text) {
    if (!text.sealed) return;
    opened_text result{std::string(field), std::string(), text.sealed->cut};
    try {
      result.original = cipher.open(e.dlq_id, field, *text.sealed);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& error) {
      result.original = unexpected(cipher_error{cipher_failure::provider_failed, text.sealed->key_id, error.what()});
    } catch (...) {
      result.original = unexpected(cipher_error{cipher_failure::provider_failed, text.sealed->key_id, "unknown exception"});
    }
    opened.push_back(std::move(result));
  };
  open_one(sealed_raw_response, e.raw_response);
  if (e.original_input) open_one(sealed_original_input, *e.original_input);
  return opened;
}

namespace detail {

// A seal that never throws: a cipher's exception is its provider failing.
inline expected<sealed_text, cipher_error> try_seal(const field_cipher& cipher, std::string_view dlq_id,
                                                    std::string_view field, std::string_view plaintext) {
  try {
    return cipher.seal(dlq_id, field, plaintext);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& error) {
    return unexpected(cipher_error{cipher_failure::provider_failed, {}, error.what()});
  } catch (...) {
    return unexpected(cipher_error{cipher_failure::provider_failed, {}, "unknown exception"});
  }
}

// The JSON bytes of a sealed copy besides its ciphertext: its member name,
// keys, key id and algorithm (each escaped at worst to six bytes), nonce,
// length and cut flag.
inline std::size_t sealed_overhead(const sealed_text& s) {
  return 160 + 6 * (s.key_id.size() + s.algorithm.size()) + s.nonce.size();
}

inline std::size_t sealed_json_size(const sealed_text& s) { return sealed_overhead(s) + s.ciphertext.size(); }

// Bytes of plaintext whose sealed copy takes at most `room` bytes of JSON,
// given a first copy `first` (which tells the cipher's growth: its tag).
inline std::size_t plaintext_room(const sealed_text& first, std::size_t room) {
  const std::size_t overhead = sealed_overhead(first);
  if (room <= overhead) return 0;
  const std::size_t sealed_bytes = first.ciphertext.size() / 4 * 3;  // base64, padding counted as bytes
  const std::size_t growth = sealed_bytes > first.length ? sealed_bytes - first.length : 0;
  const std::size_t bytes = (room - overhead) / 4 * 3;
  return bytes > growth ? bytes - growth : 0;
}

// The longest prefix of `text` of at most `size` bytes that does not end
// inside a UTF-8 sequence (a text that is not UTF-8 is cut anywhere).
inline std::string_view utf8_prefix(std::string_view text, std::size_t size) {
  if (size >= text.size()) return text;
  std::size_t end = size;
  for (int back = 0; back < 3 && end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80; ++back) --end;
  return text.substr(0, (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80 ? size : end);
}

struct sealing {
  captured_text* text = nullptr;
  std::string_view field;
  std::string_view original;
  std::optional<sealed_text> sealed;
  [[nodiscard]] std::size_t needed() const { return sealed ? sealed_json_size(*sealed) : 0; }
};

// Gives `s` at most `room` bytes of JSON: its whole sealed copy, or a copy
// of the longest start of its original that fits, or nothing.
inline void seal_into(sealing& s, std::string_view dlq_id, const field_cipher& cipher, std::size_t room,
                      boost::json::object& errors) {
  if (!s.sealed) return;
  if (s.needed() <= room && s.sealed->length == s.original.size()) {
    s.text->sealed = std::move(s.sealed);
    return;
  }
  std::size_t budget = plaintext_room(*s.sealed, room);
  for (int tries = 0; tries < 3 && budget > 0; ++tries, budget -= budget / 8 + 1) {
    const std::string_view start = utf8_prefix(s.original, budget);
    if (start.empty()) break;
    auto cut = try_seal(cipher, dlq_id, s.field, start);
    if (!cut) {
      std::string note = describe(cut.error());
      make_valid_utf8(note);
      errors[s.field] = note;
      return;
    }
    if (sealed_json_size(*cut) <= room) {
      cut->cut = true;
      s.text->sealed = *std::move(cut);
      return;
    }
  }
  errors[s.field] = fmt::format("sealed with key {}: no room for it in the envelope's size limit", s.sealed->key_id);
}

LLMDLQ_INLINE void seal_originals(envelope& e, std::string_view raw, std::string_view input,
                                  const field_cipher& cipher, std::size_t max_bytes) {
  max_bytes = std::max(max_bytes, envelope_limits::min_bytes);
  fit_envelope(e, max_bytes / 2);
  const std::size_t room_limit = max_bytes;
  sealing parts[2] = {{&e.raw_response, sealed_raw_response, raw, {}},
                      {e.original_input ? &*e.original_input : nullptr, sealed_original_input, input, {}}};
  boost::json::object errors;
  for (auto& part : parts) {
    if (!part.text) continue;
    part.text->sealed.reset();
    // Its JSON takes at least 4/3 of its bytes: more than the room cannot fit.
    auto whole = try_seal(cipher, e.dlq_id, part.field, utf8_prefix(part.original, room_limit));
    if (whole) {
      part.sealed = *std::move(whole);
    } else {
      std::string note = describe(whole.error());
      make_valid_utf8(note);
      errors[part.field] = note;
    }
  }
  const auto note_errors = [&] {
    if (!errors.empty()) e.extensions[seal_error_key] = errors;
  };
  note_errors();
  const std::size_t size = serialize(e).size();
  const std::size_t room = max_bytes - std::min(size, max_bytes);
  // Shared as fit_envelope shares the room between the texts.
  auto& [a, b] = parts;
  if (a.needed() + b.needed() <= room) {
    seal_into(a, e.dlq_id, cipher, room, errors);
    seal_into(b, e.dlq_id, cipher, room, errors);
  } else if (a.needed() <= room / 2) {
    seal_into(a, e.dlq_id, cipher, a.needed(), errors);
    seal_into(b, e.dlq_id, cipher, room - a.needed(), errors);
  } else if (b.needed() <= room / 2) {
    seal_into(b, e.dlq_id, cipher, b.needed(), errors);
    seal_into(a, e.dlq_id, cipher, room - b.needed(), errors);
  } else {
    seal_into(a, e.dlq_id, cipher, room / 2, errors);
    seal_into(b, e.dlq_id, cipher, room - room / 2, errors);
  }
  note_errors();
  fit_envelope(e, max_bytes);  // changes nothing unless the room was miscounted
}

}  // namespace detail

LLMDLQ_END_NAMESPACE
