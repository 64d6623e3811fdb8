// SPDX-License-Identifier: MIT
#include "llmdlq/kafka/redrive_link.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

#include "llmdlq/dlq_id.hpp"

LLMDLQ_BEGIN_NAMESPACE

std::optional<kafka_redrive> kafka_redrive_link(std::span<const kafka_header> headers) {
  const kafka_header* of = nullptr;
  const kafka_header* attempt = nullptr;
  const kafka_header* key = nullptr;
  for (const auto& h : headers) {
    if (h.name == kafka_redrive_header_names::of) of = &h;
    if (h.name == kafka_redrive_header_names::attempt) attempt = &h;
    if (h.name == kafka_redrive_header_names::idempotency_key) key = &h;
  }
  if (of == nullptr || attempt == nullptr || !is_dlq_id(of->value)) return std::nullopt;
  std::uint32_t count = 0;
  const char* end = attempt->value.data() + attempt->value.size();
  // The worker's attempt is the count + 1: the largest count would wrap it.
  if (std::from_chars(attempt->value.data(), end, count).ptr != end || count == 0 ||
      count == std::numeric_limits<std::uint32_t>::max()) {
    return std::nullopt;
  }
  return kafka_redrive{{of->value, count}, key != nullptr ? key->value : std::string()};
}

LLMDLQ_END_NAMESPACE
