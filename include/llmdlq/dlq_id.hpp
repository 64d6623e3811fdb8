// SPDX-License-Identifier: MIT
// Identity of a dead letter: one failure has one dlq_id, the same on every
// retry and on every machine, so that every sink can store it once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

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
#  include "llmdlq/impl/dlq_id.ipp"
#endif
