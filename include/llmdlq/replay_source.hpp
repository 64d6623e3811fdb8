// SPDX-License-Identifier: MIT
// Where a replay reads dead letters and writes what became of them: a
// moderation store (moderation_replay_source, in llmdlq::llm) or a Kafka
// dead-letter topic (kafka_replay_source, in llmdlq::kafka). The replayer
// itself is llmdlq::llm's (llm/replayer.hpp); a source needs only this.
#pragma once

#include <cstdint>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/replay_error.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct recovery_result;  // llm/recovery_step.hpp: what the ladder's run on a letter came to

/// A dead letter as a source holds it.
struct stored_letter {
  envelope letter;
  std::string position;  ///< where it is in the source, for the cursor (increasing)
  /// Why the record does not read back (empty: it does). Then `letter`
  /// holds only what the source could read beside the envelope (its
  /// dlq_id, and for a store its category, triage class, failure code and
  /// creation time): the replayer skips it, counts it and names it.
  std::string unreadable;
};

/// Whether a letter's record is still the replay's, since the source read it.
enum class letter_standing : std::uint8_t {
  ours,      ///< as read (before the call), or written with the run (after); a source keeping no records says so
  acted_on,  ///< an operator acted on the record meanwhile: what the operator did stands
  purged,    ///< the record was purged meanwhile
};

/// Where a replay reads dead letters and writes what became of them.
class replay_source {
 public:
  virtual ~replay_source() = default;
  /// Up to `limit` letters after `after` (from the start when empty), in
  /// position order; a record that does not read back comes as a letter
  /// with `unreadable` set, never as an error. Fails with
  /// replay_errc::source_unavailable when the source failed or did not
  /// answer (the replay stops, and the next one reads from its cursor), or
  /// source_refused when it refuses to be read.
  [[nodiscard]] virtual expected<std::vector<stored_letter>, replay_error> next(std::string_view after,
                                                                                std::size_t limit) = 0;
  /// Records the ladder's run on `letter` (whose history it extended): the
  /// record is recovered, exhausted, or keeps its status with the new
  /// history. A source that cannot write (a Kafka topic) does nothing.
  /// Fails only when the source failed (source_unavailable) or refused the
  /// write (source_refused): a record an operator acted on or a purge
  /// removed meanwhile is an outcome, not an error.
  [[nodiscard]] virtual expected<letter_standing, replay_error> update(const stored_letter& before,
                                                                       const envelope& after,
                                                                       const recovery_result& result) = 0;
  /// Writes `with_call` (the letter, its history ending with the model call
  /// about to start) before the call is made, so that a replay killed
  /// during it leaves the call in the letter's history. Anything but `ours`
  /// stops the call (and the letter is skipped and counted). A source that
  /// keeps no records has nothing to write.
  [[nodiscard]] virtual expected<letter_standing, replay_error> record_call(const stored_letter& letter,
                                                                            const envelope& with_call) = 0;
  /// Asked right before the letter's model call: whether the record is
  /// still the replay's (a batch is read ahead, and operators and purges act
  /// meanwhile). A letter that is not is skipped and counted. An operator who
  /// acts during the call itself wins the record (update() says acted_on),
  /// while the payload, already in the ledger, goes downstream once.
  [[nodiscard]] virtual expected<letter_standing, replay_error> recheck(const stored_letter& letter) = 0;
  /// Every letter up to `position` is done with (the run's cursor moved
  /// there, or the run read the source to its end there): a source that
  /// keeps its own place, as a Kafka consumer group does, commits it. Does
  /// nothing by default. Fails as next() does.
  [[nodiscard]] virtual expected<void, replay_error> passed(std::string_view position) {
    (void)position;
    return {};
  }
};

LLMDLQ_END_NAMESPACE
