// SPDX-License-Identifier: MIT
// Identity of a dead letter: one failure has one dlq_id, the same on every
// retry and on every machine, so that every sink can store it once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Whether `s` is a dlq_id as the envelope's schema has it: a lowercase UUID
/// of version 7 or 8, RFC 9562 variant (what derive_dlq_id() makes). For
/// checking an id read from outside, such as a redrive's header.
[[nodiscard]] constexpr bool is_dlq_id(std::string_view s) noexcept {
  constexpr auto lower_hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !lower_hex(s[i])) return false;
  }
  return (s[14] == '7' || s[14] == '8') && (s[19] == '8' || s[19] == '9' || s[19] == 'a' || s[19] == 'b');
}

/// The dlq_id of attempt `attempt` at the input keyed `idempotency_key`.
///
/// The id's random-looking bits are the first bytes of
/// SHA-256("llmdlq/dlq_id/v1" LF key LF attempt-in-decimal). With
/// `received_at` (the input's own time, such as its Kafka timestamp; not the
/// time of this attempt) the id is a UUIDv7 whose first 48 bits are that
/// time in milliseconds, so ids sort by when inputs arrived; without it, a
/// UUIDv8 made of the hash alone.
[[nodiscard]] LLMDLQ_INLINE std::string derive_dlq_id(std::string_view idempotency_key, std::uint32_t attempt,
                                                      std::optional<timestamp> received_at = std::nullopt);

/// A key for an input the host gave none: "sha256:" and the hex SHA-256 of
/// the schema's fingerprint and the SHA-256s of the response and of the
/// original input. Identical failures (the same response to the same input
/// under the same schema) therefore share one dead-letter record.
[[nodiscard]] LLMDLQ_INLINE std::string derive_idempotency_key(std::string_view schema_fingerprint,
                                                               std::string_view response_sha256,
                                                               std::string_view input_sha256);

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/dlq_id.ipp"
#endif
