// SPDX-License-Identifier: MIT
// A moderation store (sqlite_store, postgres_store) as a replay source: its
// `pending` and `requeued` letters, oldest first; a replay's verdict moves a
// record to `recovered` or `exhausted`, or records the attempt and leaves it
// where it was (a relaxed payload stays pending: it goes to moderation as
// well as downstream).
// Part of the llmdlq::llm library.
#pragma once

#include <string>

#include "llmdlq/config.hpp"
#include "llmdlq/llm/replayer.hpp"
#include "llmdlq/moderation.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Fails with source_unavailable when the store fails (a
/// moderation_errc::store_unavailable), source_refused when it refuses what
/// the replay writes (another moderation_errc, that is_permanent()); a
/// record an operator acted on or a purge removed is a letter_standing.
class moderation_replay_source final : public replay_source {
 public:
  /// `operator_name` goes into each record's operator log.
  explicit moderation_replay_source(moderation_store& store, std::string operator_name = "llmdlq-replay",
                                    bool requeued_only = false)
      : store_(&store), operator_(std::move(operator_name)), requeued_only_(requeued_only) {}

  [[nodiscard]] expected<std::vector<stored_letter>, replay_error> next(std::string_view after,
                                                                        std::size_t limit) override;
  [[nodiscard]] expected<letter_standing, replay_error> update(const stored_letter& before, const envelope& after,
                                                               const recovery_result& result) override;
  [[nodiscard]] expected<letter_standing, replay_error> recheck(const stored_letter& letter) override;
  [[nodiscard]] expected<letter_standing, replay_error> record_call(const stored_letter& letter,
                                                                    const envelope& with_call) override;

 private:
  moderation_store* store_;
  std::string operator_;
  bool requeued_only_;
};

LLMDLQ_END_NAMESPACE
