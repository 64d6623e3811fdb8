// SPDX-License-Identifier: MIT
// Definitions for dlq_id.hpp.
#pragma once

#include <algorithm>
#include <array>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/dlq_id.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE std::string derive_dlq_id(std::string_view idempotency_key, std::uint32_t attempt,
                                        std::optional<timestamp> received_at) {
  std::string material = "llmdlq/dlq_id/v1\n";
  material.append(idempotency_key).append("\n").append(std::to_string(attempt));
  const auto digest = detail::sha256(material);
  std::array<unsigned char, 16> bytes{};
  std::copy_n(digest.begin(), bytes.size(), bytes.begin());
  if (received_at) return detail::format_uuid_v7(*received_at, bytes);
  return detail::format_uuid(bytes, 8);
}

LLMDLQ_INLINE std::string derive_idempotency_key(std::string_view schema_fingerprint,
                                                 std::string_view response_sha256, std::string_view input_sha256) {
  std::string material = "llmdlq/key/v1\n";
  material.append(schema_fingerprint).append("\n").append(response_sha256).append("\n").append(input_sha256);
  return "sha256:" + detail::sha256_hex(material);
}

LLMDLQ_END_NAMESPACE
