// SPDX-License-Identifier: MIT
// What a worker knows about one LLM call: identities, provenance and the
// API's own signals, copied into the envelope when the response fails.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Everything about a response that is not the response itself.
struct request_context {
  std::string idempotency_key;  ///< the same for every attempt at one input: replays write once
  std::string record_id;
  std::string correlation_id;
  std::string trace_id;
  source_reference source_ref;  ///< the source document, by URI and hash
  prompt_reference prompt;      ///< template id and version; the hash comes from rendered_prompt
  std::string rendered_prompt;  ///< hashed into the envelope, never stored
  model_reference model;
  version_set versions;
  std::string finish_reason;           ///< the API's: "length" means the output was cut off
  std::optional<std::string> refusal;  ///< the API's refusal message, when it gave one
  std::optional<double> confidence;    ///< the producer's score for this output
  /// The answer was streamed and closed at its judge's dead verdict, so it
  /// is only the start of what the model would have written (stream_judge::cancel).
  std::optional<cancel_point> cancelled_at;
  std::string original_input;                    ///< the input the model saw (OCR text, ...), stored with its hash
  origin_reference origin;                       ///< where the input came from: service, topic, partition, offset
  std::optional<tool_call_reference> tool_call;  ///< the response is a tool call's arguments (process_tool_call)
  std::uint32_t attempt = 1;                     ///< which attempt at this input this response is
  /// The input came back by a redrive of this earlier letter (its source
  /// carried the link, as kafka_redrive_link() reads it): a failure records
  /// it in the envelope. Set `attempt` to the redrive's count + 1 too
  /// (apply_redrive()), so that the new letter gets a dlq_id of its own.
  std::optional<redrive_reference> redrive;
  /// When the input arrived, by its own clock (a Kafka message's timestamp):
  /// dlq_ids then sort by it (see derive_dlq_id). It must be the same on
  /// every attempt; leave it unset rather than pass the time of this attempt.
  std::optional<timestamp> received_at;
  boost::json::object extensions;  ///< host metadata, copied as is
};

/// Links `context` to the letter whose redrive brought its input back:
/// `redrive` set, `attempt` the redrive's count + 1, and the letter's
/// idempotency key kept when the input carried it (a redriven record's own
/// position is new, and the attempts and the ledger go by the key).
inline void apply_redrive(request_context& context, redrive_reference link, std::string_view idempotency_key = {}) {
  context.attempt = link.count + 1;
  context.redrive = std::move(link);
  if (!idempotency_key.empty()) context.idempotency_key = std::string(idempotency_key);
}

LLMDLQ_END_NAMESPACE
