// SPDX-License-Identifier: MIT
// Closes the moderation loop: the corrections people resolved dead letters
// with go downstream, each payload once, through the replay ledger and the
// same targets a replay writes to.
// Part of the llmdlq::llm library.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/llm/replayer.hpp"
#include "llmdlq/moderation.hpp"
#include "llmdlq/replay_error.hpp"
#include "llmdlq/replay_state.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// The ledger's `source` of what people resolved.
inline constexpr std::string_view resolution_source_name = "operator";

struct resolution_delivery_summary {
  std::size_t resolved = 0;           ///< resolved letters read
  std::size_t delivered = 0;          ///< corrections written to the target by this call (resumed ones too)
  std::size_t already_delivered = 0;  ///< delivered by an earlier call: not written again
  std::size_t superseded = 0;         ///< the payload went downstream before (the original, a replay): not written
  /// Of the resolved letters, those whose record does not read back:
  /// skipped, counted and named; the others are delivered all the same.
  std::size_t unreadable = 0;
  std::vector<unreadable_record> unreadable_letters;  ///< the first max_listed_unreadable of them
};

/// Delivers the correction of every resolved letter of `store` to `target`,
/// once per payload: each is recorded in the ledger (source `operator`)
/// before its delivery and marked delivered after, so a call killed midway
/// and called again writes each once (the target drops a key it has seen).
/// A payload the ledger holds from another source is not written again.
/// Each delivery carries who resolved it and their note (ledger_entry's
/// resolved_by and note). Fails when the store (source_unavailable,
/// source_refused), the state (state_unavailable) or the target
/// (target_unavailable, target_refused) fails: what was delivered stays
/// delivered, and the next call goes on. `on_letter`, when set, is called
/// with the summary so far as each resolved letter is taken up.
[[nodiscard]] expected<resolution_delivery_summary, replay_error> deliver_resolutions(
    moderation_store& store, replay_state& state, replay_target& target, std::size_t page_size = 100,
    const std::function<void(const resolution_delivery_summary&)>& on_letter = {});

LLMDLQ_END_NAMESPACE
