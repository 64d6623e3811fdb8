// SPDX-License-Identifier: MIT
// Where a redrive (llmdlq/llm/redriver.hpp) finds a dead letter's original
// input and sends it back: the interface a host implements for inputs that
// do not come from Kafka (kafka_redrive_source does for those that do), and
// the input a letter itself stores, for when the original is gone.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/field_cipher.hpp"
#include "llmdlq/replay_error.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// A letter's original input, as its source has it, ready to send back.
struct redrive_input {
  std::string destination;  ///< where it goes, in the source's terms: a Kafka topic
  std::string from;         ///< where it was found, for a person: `the original record`, `the stored input`
  std::string key;          ///< the transport's key (a Kafka record's); may be empty
  /// The letter's idempotency key, which the input keeps on its way back so
  /// that the worker's attempts and ledger hold across redrives (redriver sets it).
  std::string idempotency_key;
  std::string value;                                         ///< the input's bytes
  std::vector<std::pair<std::string, std::string>> headers;  ///< the original's (a Kafka record's), to send again
};

/// Where a host's inputs come from and go back to.
class redrive_source {
 public:
  virtual ~redrive_source() = default;
  /// The original input of `letter`, read, not sent. Fails with
  /// target_refused when it cannot be had (the record is gone and the letter
  /// stores no usable input: the letter is skipped and named, the run goes
  /// on), or target_unavailable when the source failed (the run stops).
  [[nodiscard]] virtual expected<redrive_input, replay_error> fetch(const envelope& letter) = 0;
  /// Sends `input` back, carrying `link` so that the pipeline can tie a new
  /// failure to the letter (request_context::redrive). target_unavailable
  /// when it may go later, target_refused when it never will.
  [[nodiscard]] virtual expected<void, replay_error> send(const redrive_input& input,
                                                          const redrive_reference& link) = 0;
};

/// The original input `letter` stores, byte for byte as the model saw it:
/// its sealed copy opened with `cipher` when there is one (and a cipher),
/// else its text when that is whole and unredacted (base64 decoded). Why
/// not, when neither is there: no input stored, only its start (cut to fit
/// the envelope), redacted with no sealed copy, or a sealed copy that does
/// not open.
[[nodiscard]] LLMDLQ_INLINE expected<std::string, std::string> stored_original_input(const envelope& letter,
                                                                                     const field_cipher* cipher);

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/redrive_source.ipp"
#endif
