// SPDX-License-Identifier: MIT
// Bounded replay of a dead-letter store: the recovery ladder run over the
// letters a filter selects, dry by default, at a set rate, with N model
// calls in flight, each payload claimed so that replays on several machines
// share one store, resumable from a cursor, writing each recovered payload
// downstream once (the replay ledger).
// Part of the llmdlq::llm library.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/llm/recovery_step.hpp"
#include "llmdlq/moderation_record.hpp"
#include "llmdlq/replay_error.hpp"
#include "llmdlq/replay_source.hpp"
#include "llmdlq/replay_state.hpp"
#include "llmdlq/replay_target.hpp"  // replay_target, declared here before it had a header of its own

LLMDLQ_BEGIN_NAMESPACE

class recovery_ladder;

/// Which letters a replay takes; empty members select everything.
struct replay_filter {
  std::vector<std::string> categories;  ///< failure categories
  std::vector<std::string> triage_classes;
  std::vector<std::string> codes;  ///< failure codes
  std::vector<std::string> dlq_ids;
  std::string schema_version;  ///< the versions the letter was written under
  std::string prompt_version;
  std::string model_version;
  std::optional<timestamp> since;  ///< created at or after
  std::optional<timestamp> until;  ///< created before

  [[nodiscard]] bool matches(const envelope& e) const;
};

/// One letter a dry run looked at: what the ladder would do, and for the
/// steps that cost nothing, what it would produce.
struct replay_sample {
  std::string dlq_id;
  recovery_step step;
  std::string before;                ///< the stored response (a prefix)
  std::optional<std::string> after;  ///< the document a zero-token step produces
};

/// Where a run is, after each letter. With concurrency the callback is
/// called from the workers' threads, one call at a time.
struct replay_progress {
  std::size_t seen = 0;
  std::size_t done = 0;     ///< letters the ladder ran on (or, dry, judged)
  std::string position;     ///< the cursor: every letter up to it is done with
  std::int64_t tokens = 0;  ///< spent by this run's model calls so far
};

/// What a replay's own lease is named after unless told otherwise.
inline constexpr std::string_view default_replay_lease = "replay";

class llm_client;

struct replayer_options {
  bool dry_run = true;          ///< judge and count, call no model, change nothing
  double rate = 10.0;           ///< letters per second (a token bucket); 0: no limit
  std::size_t limit = 0;        ///< letters to run at most; 0: all
  std::size_t batch = 100;      ///< letters read per call to the source
  std::string name = "replay";  ///< the cursor's name: where this replay goes on from
  /// Model calls in flight at once (executing only), each on its own client:
  /// the first worker's is the ladder's, the others' come from new_client
  /// (without it the run keeps one call in flight). The rate, the window
  /// budget, the breaker and the holds are shared by all of them.
  std::size_t concurrency = 1;
  std::function<std::unique_ptr<llm_client>()> new_client;
  /// The run holds a lease of its own, "<lease> <owner>", and moves the
  /// cursor only while it holds it. Replays share a store: each payload is
  /// claimed (replay_state::claim) before its turn and given back after,
  /// so no two replays run one payload together, and a killed replay's
  /// claims expire after lease_ttl.
  std::string lease = std::string(default_replay_lease);
  std::string owner;  ///< who holds the lease and the claims (empty: host, pid and run)
  std::chrono::seconds lease_ttl{120};
  replay_filter filter;
  std::size_t samples = 5;  ///< dry run: letters shown with their step
  std::function<void(const replay_progress&)> progress;
  /// Called for each selected letter that does not read back, as it is skipped.
  std::function<void(const unreadable_record&)> on_unreadable;
  clock_function clock = system_now;
  std::function<void(std::chrono::milliseconds)> sleep;  ///< empty: std::this_thread::sleep_for
};

/// What a replay did.
struct replay_summary {
  bool dry_run = true;
  std::size_t seen = 0;                           ///< letters read from the source
  std::size_t selected = 0;                       ///< of them, those the filter took
  std::map<std::string, std::size_t> by_outcome;  ///< stop reason (dry: the next step), or "duplicate" → letters
  std::size_t recovered = 0;                      ///< written downstream by this replay
  std::size_t duplicates = 0;  ///< recovered, but the ledger held the payload already: not written again
  std::size_t exhausted = 0;   ///< handed to people
  std::size_t held = 0;        ///< left as they were (held, for review, never replayed)
  std::size_t delivered = 0;   ///< ledger entries delivered to the target (resumed ones too)
  std::size_t superseded =
      0;  ///< an operator acted on the letter after it was read: skipped, or (during its call) the operator's action stands
  std::size_t purged = 0;  ///< purged after it was read: skipped, or (during its call) its result is in the ledger only
  std::size_t claimed_elsewhere = 0;  ///< another replay held the payload's claim: skipped, for a later pass
  /// Letters the filter took whose record does not read back: skipped (the
  /// cursor moves past them), neither selected nor run; every other letter
  /// is run as if they were not there.
  std::size_t unreadable = 0;
  std::vector<unreadable_record> unreadable_letters;  ///< the first max_listed_unreadable of them
  token_usage usage;
  std::uint32_t calls = 0;
  bool finished = false;        ///< reached the end of the source (the cursor starts over next time)
  std::string stopped_because;  ///< when not finished: why (a circuit open, the limit, ...)
  std::vector<replay_sample> samples;
};

/// Replays one source. One run() at a time per replayer; replays of one
/// store, in threads or processes, share its letters through their claims.
class replayer {
 public:
  replayer(recovery_ladder& ladder, replay_source& source, replay_state& state, replayer_options options = {});

  /// Sends recovered payloads to `target` too (after the ledger records them).
  void deliver_to(replay_target& target) noexcept { target_ = &target; }

  /// Runs until the source ends, the limit is reached, or the endpoint or
  /// budget says later. Fails when its own lease expired during the run
  /// and another owner took it (lease_lost), or when a part
  /// fails, with that part's code: the source's (source_unavailable,
  /// source_refused), the state's (state_unavailable), the target's
  /// (target_unavailable, target_refused). What the run did until then
  /// stays done: the next run goes on from the cursor and delivers what the
  /// ledger holds undelivered.
  [[nodiscard]] expected<replay_summary, replay_error> run();

 private:
  recovery_ladder* ladder_;
  replay_source* source_;
  replay_state* state_;
  replay_target* target_ = nullptr;
  replayer_options options_;
};

LLMDLQ_END_NAMESPACE
