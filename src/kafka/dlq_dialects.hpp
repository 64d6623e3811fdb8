// SPDX-License-Identifier: MIT
// Kafka Connect's and Spring Kafka's dead-letter records: their integers
// as Spring encodes them, and a record of theirs read as an llmdlq letter.
// Private to llmdlq_kafka.
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace kafka_detail {

/// `value` as Java's ByteBuffer.putInt / putLong write it: big-endian, two's
/// complement, sizeof(Int) bytes (Spring's `kafka_dlt-original-partition`
/// and `-offset`).
template <class Int>
[[nodiscard]] std::string big_endian(Int value) {
  using unsigned_type = std::make_unsigned_t<Int>;
  const auto bits = static_cast<unsigned_type>(value);
  std::string out(sizeof(Int), '\0');
  for (std::size_t i = 0; i < sizeof(Int); ++i) {
    out[i] = static_cast<char>((bits >> (8 * (sizeof(Int) - 1 - i))) & 0xffu);
  }
  return out;
}

/// What big_endian wrote, back: nothing unless `bytes` are exactly sizeof(Int).
template <class Int>
[[nodiscard]] std::optional<Int> from_big_endian(std::string_view bytes) noexcept {
  if (bytes.size() != sizeof(Int)) return std::nullopt;
  std::make_unsigned_t<Int> bits = 0;
  for (const char c : bytes) bits = static_cast<decltype(bits)>((bits << 8) | static_cast<unsigned char>(c));
  return static_cast<Int>(bits);
}

/// A record that holds no envelope, read as a letter Kafka Connect's
/// DeadLetterQueueReporter or Spring Kafka's DeadLetterPublishingRecoverer
/// wrote (see the Kafka section of docs/worker-and-sinks.md): its envelope,
/// made as process_llm_response would make it for the record's value;
/// nothing when the record speaks neither dialect (or carries llmdlq's own
/// `dlq-id` header: a letter of llmdlq's that does not read is no other's);
/// an error, in words safe to print, when its dialect's origin headers are
/// incomplete or malformed.
[[nodiscard]] expected<std::optional<envelope>, std::string> read_foreign_letter(const rd_kafka_message_t& message);

}  // namespace kafka_detail
LLMDLQ_END_NAMESPACE
