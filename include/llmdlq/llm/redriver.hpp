// SPDX-License-Identifier: MIT
// Redrive: dead letters' original inputs sent back to where they came from,
// for the pipeline to process again after a prompt or a schema changed (as
// SQS's message move task does for its DLQs). A replay asks a model to
// repair a stored answer; a redrive gives the fixed worker the input itself.
// Part of the llmdlq::llm library, beside the replayer whose selection,
// lease and attempt cap it shares.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/llm/replayer.hpp"
#include "llmdlq/moderation.hpp"
#include "llmdlq/redrive_source.hpp"
#include "llmdlq/replay_error.hpp"
#include "llmdlq/replay_state.hpp"
#include "llmdlq/request_context.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// The lease a redrive holds on its store (one redrive at a time; a replay
/// holds its own).
inline constexpr std::string_view default_redrive_lease = "redrive";

/// What became of one selected letter.
struct redrive_report {
  std::string dlq_id;
  /// `sent`; in a dry run `would_send`; `refused` (its input cannot be had:
  /// `detail` says why), `spent` (its automated attempts are spent: it goes
  /// to a person), `downstream` (the ledger holds an output for its key: a
  /// replay recovered it), `superseded` (sent, but an operator or a replay
  /// moved the letter meanwhile, and its status stays theirs).
  std::string outcome;
  std::string detail;
  std::string destination;
  std::string from;
  std::uint32_t attempt = 0;  ///< sent: which automated attempt at the input this redrive is
};

struct redrive_options {
  bool dry_run = true;      ///< read and report, send and change nothing
  double rate = 10.0;       ///< letters per second; 0: no limit
  std::size_t limit = 0;    ///< letters to redrive at most; 0: all
  std::size_t batch = 100;  ///< records read per page
  replay_filter filter;     ///< which letters, of those in `statuses`
  /// The statuses whose letters are taken, each in the store's order.
  std::vector<moderation_status> statuses = {moderation_status::pending, moderation_status::requeued,
                                             moderation_status::exhausted};
  /// Automated attempts per payload, a replay's model calls and redrives
  /// together (the replay state counts both): the cap of two holds across them.
  std::uint32_t max_attempts = 2;
  std::string lease = std::string(default_redrive_lease);
  std::string owner;  ///< who holds the lease, and who the operator log says acted (empty: host and pid)
  std::chrono::seconds lease_ttl{120};
  std::function<void(const redrive_report&)> on_letter;  ///< each selected letter's outcome, as it happens
  std::function<void(const unreadable_record&)> on_unreadable;
  clock_function clock = system_now;
  std::function<void(std::chrono::milliseconds)> sleep;  ///< empty: std::this_thread::sleep_for
};

struct redrive_summary {
  bool dry_run = true;
  std::size_t seen = 0;                           ///< letters read in the statuses taken
  std::size_t selected = 0;                       ///< of them, those the filter took (up to the limit)
  std::map<std::string, std::size_t> by_outcome;  ///< redrive_report::outcome → letters
  /// `redriven` letters whose input has since succeeded (the ledger holds
  /// an output for their key): now `recovered` (in a dry run: would be).
  std::size_t settled = 0;
  std::size_t unreadable = 0;                         ///< records that do not read back: skipped and named
  std::vector<unreadable_record> unreadable_letters;  ///< the first max_listed_unreadable of them
};

/// Sends the original inputs of a moderation store's selected letters back
/// through a redrive_source, each at most once per automated attempt, and
/// marks each `redriven`.
///
/// Letters made after the run began (a redriven input that failed again)
/// wait for the next run. Per letter, status by status, in the store's order
/// (oldest first): a payload the ledger holds is `downstream`; the attempt is reserved
/// in the replay state before the send (so a crash during it counts it; a
/// letter whose attempts are spent is `spent`), the input is fetched and
/// sent with the link {dlq_id, attempt}, and the record moves to `redriven`
/// with a note of where the input went. A send that fails stops the run
/// with its error, its attempt still counted (it may have gone through); a
/// letter killed between the send and the status is sent again by the next
/// run, as its own attempt, and the worker's idempotency key ties both to
/// one input. Before the letters, every `redriven` letter whose input has
/// since succeeded (note_redrive_success, or any output the ledger holds
/// for its key) is settled as `recovered`.
///
/// Runs under the store's `redrive` lease; a dry run takes no lease and
/// changes nothing. Not thread-safe; one run at a time per redriver.
class redriver {
 public:
  redriver(moderation_store& store, replay_state& state, redrive_source& source, redrive_options options = {});

  /// Fails with the store's (source_unavailable, source_refused), the
  /// state's (state_unavailable, lease_held, lease_lost) or the send's
  /// (target_unavailable, target_refused) error; what was done stays done.
  [[nodiscard]] expected<redrive_summary, replay_error> run();

 private:
  moderation_store* store_;
  replay_state* state_;
  redrive_source* source_;
  redrive_options options_;
};

/// The ledger's `source` for a redriven input's success when the worker
/// gives no name of its own.
inline constexpr std::string_view redrive_success_source = "redriven";

/// The worker's success path for an input that came back by a redrive
/// (`context.redrive` set): records `output` in the ledger under the
/// input's idempotency key, so that the next redrive settles the letter as
/// `recovered` and no replay writes the payload again. Does nothing for an
/// input that did not come by a redrive.
[[nodiscard]] inline expected<void, replay_state_error> note_redrive_success(
    replay_state& state, const request_context& context, std::string_view output,
    std::string_view worker = redrive_success_source) {
  if (!context.redrive || context.idempotency_key.empty()) return {};
  auto recorded = state.record_output(context.idempotency_key, worker, context.redrive->of, output);
  if (!recorded) return unexpected(std::move(recorded.error()));
  return {};
}

LLMDLQ_END_NAMESPACE
