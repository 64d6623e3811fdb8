// SPDX-License-Identifier: MIT
// What a record that came back by a redrive carries (kafka_redrive_source
// writes it, a worker reads it): the letter it came back for, which
// automated attempt it is, and the input's idempotency key.
// Part of the llmdlq::kafka library (librdkafka).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/kafka/producer.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// The headers a redriven record carries besides the original's: UTF-8 text.
namespace kafka_redrive_header_names {
inline constexpr std::string_view of = "llmdlq-redrive-of";                    ///< the letter's dlq_id
inline constexpr std::string_view attempt = "llmdlq-redrive-attempt";          ///< the automated attempt, in decimal
inline constexpr std::string_view idempotency_key = "llmdlq-idempotency-key";  ///< the letter's
}  // namespace kafka_redrive_header_names

/// A redriven record's link, as apply_redrive() takes it.
struct kafka_redrive {
  redrive_reference link;
  /// The input's idempotency key, the letter's: the worker keeps it (the
  /// record's own position is new), so that the attempts and the ledger
  /// hold across redrives. Empty when the record did not carry one.
  std::string idempotency_key;
  friend bool operator==(const kafka_redrive&, const kafka_redrive&) = default;
};

/// The link `headers` carry: nothing when they carry none, or one that is
/// not a dlq_id and an attempt of at least 1 (headers anyone could write).
[[nodiscard]] std::optional<kafka_redrive> kafka_redrive_link(std::span<const kafka_header> headers);

LLMDLQ_END_NAMESPACE
