// SPDX-License-Identifier: MIT
// What a replay keeps in the store, so that it holds across processes and
// crashes: who is replaying (a lease), how far it got (a cursor), how many
// automated attempts each payload has had, which calls got no answer and
// must wait (holds), and which payloads already went downstream (the
// replay ledger).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/error_category.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

enum class replay_state_errc : std::uint8_t {
  lease_held,          ///< another replay holds the lease: try again after it expires
  lease_lost,          ///< this replay's lease expired and another took it: stop
  attempts_exhausted,  ///< the payload had all its automated attempts
  store_unavailable,   ///< the store failed: nothing changed, try again
};

LLMDLQ_END_NAMESPACE
template <>
struct std::is_error_code_enum<llmdlq::replay_state_errc> : std::true_type {};
LLMDLQ_BEGIN_NAMESPACE

namespace detail {
template <>
struct errc_table<replay_state_errc> {
  static constexpr const char* category = "llmdlq.replay_state";
  static constexpr std::string_view unknown = "unknown";
  static constexpr errc_entry<replay_state_errc> entries[] = {
      {replay_state_errc::lease_held, "lease_held"},
      {replay_state_errc::lease_lost, "lease_lost"},
      {replay_state_errc::attempts_exhausted, "attempts_exhausted"},
      {replay_state_errc::store_unavailable, "store_unavailable"},
  };
};
}  // namespace detail

/// The enumerator's name ("lease_held"), also the message() of its
/// std::error_code, whose category is named "llmdlq.replay_state".
[[nodiscard]] constexpr std::string_view to_string(replay_state_errc code) noexcept { return detail::errc_name(code); }

struct replay_state_error {
  replay_state_errc code = replay_state_errc::store_unavailable;
  std::string message;
  std::string holder;                   ///< lease_held: who holds it
  std::optional<timestamp> expires_at;  ///< lease_held: until when
};

/// The outcome of writing a payload's result to the ledger.
struct ledger_entry {
  bool first = false;  ///< this call wrote it: go on with the downstream write
  std::string idempotency_key;
  std::string source;  ///< who wrote it first: `replay`, `original`, a worker's name
  std::string dlq_id;  ///< the dead letter it came from, when a replay wrote it
  std::string output;  ///< the document written first
  timestamp written_at{};
  bool delivered = false;  ///< the downstream write was confirmed (mark_delivered)
  // Not kept in the ledger: deliver_resolutions() fills them in from the record.
  std::string resolved_by;  ///< source `operator`: who resolved the letter
  std::string note;         ///< source `operator`: the note they resolved it with
};

/// What the state knows of the calls for one key that got no completion
/// (429, 5xx, a timeout, a cut connection, a body that is no completion).
/// The key is a payload's idempotency key or an endpoint and model
/// (endpoint_hold_key), so waits and caps hold across runs and processes.
struct call_hold {
  std::uint32_t failures = 0;           ///< such calls in a row
  std::optional<timestamp> not_before;  ///< no call for this key before then
  std::string last_error;               ///< what the last of them got
};

/// The call_hold key of a payload.
[[nodiscard]] inline std::string payload_hold_key(std::string_view idempotency_key) {
  std::string key = "payload ";
  key.append(idempotency_key);
  return key;
}

/// The call_hold key of a model at an endpoint.
[[nodiscard]] inline std::string endpoint_hold_key(std::string_view endpoint, std::string_view model) {
  std::string key = "endpoint ";
  key.append(endpoint).append(" ").append(model);
  return key;
}

/// The lease that stands for the claim of `work` (replay_state::claim).
[[nodiscard]] inline std::string claim_lease(std::string_view work) {
  std::string name = "claim ";
  name.append(work);
  return name;
}

/// The state of replays, kept in a store (sqlite_replay_state,
/// postgres_replay_state). Every operation is one transaction, so two
/// processes replaying the same store cannot both take the lease, both
/// spend the last attempt of a payload, or both write it downstream.
class replay_state {
 public:
  virtual ~replay_state() = default;

  /// Takes the lease `name` for `owner` until now + `ttl`; taking it again
  /// while holding it renews it. Fails with lease_held while another
  /// owner's lease has not expired.
  [[nodiscard]] virtual expected<void, replay_state_error> acquire_lease(std::string_view name, std::string_view owner,
                                                                         std::chrono::seconds ttl) = 0;
  /// Gives the lease back (only when `owner` holds it).
  [[nodiscard]] virtual expected<void, replay_state_error> release_lease(std::string_view name,
                                                                         std::string_view owner) = 0;

  /// Where the replay `name` stopped: an opaque position (a dlq_id, an offset).
  [[nodiscard]] virtual expected<std::optional<std::string>, replay_state_error> load_cursor(std::string_view name) = 0;
  /// Moves the cursor `name`, only while `owner` holds the lease `lease`
  /// (else lease_lost): the lease is the store's, the cursor the replay's.
  [[nodiscard]] virtual expected<void, replay_state_error> store_cursor(std::string_view lease, std::string_view owner,
                                                                        std::string_view name,
                                                                        std::string_view position) = 0;

  /// Automated attempts made on the payload with this idempotency key.
  [[nodiscard]] virtual expected<std::uint32_t, replay_state_error> attempts(std::string_view idempotency_key) = 0;
  /// Counts one more attempt before it is made (so that a crash during the
  /// call still counts it) and returns its number, 1-based; fails with
  /// attempts_exhausted when `max_attempts` were already made.
  [[nodiscard]] virtual expected<std::uint32_t, replay_state_error> reserve_attempt(std::string_view idempotency_key,
                                                                                    std::uint32_t max_attempts) = 0;
  /// Takes back a reserved attempt that made no call to a model (the
  /// endpoint was unreachable, throttled or its breaker open).
  [[nodiscard]] virtual expected<void, replay_state_error> release_attempt(std::string_view idempotency_key) = 0;

  /// Notes a call for `key` that got no completion: one more failure in a
  /// row, no call before `not_before` (a later time already held stays).
  /// Returns the hold as it now is.
  [[nodiscard]] virtual expected<call_hold, replay_state_error> record_call_failure(std::string_view key,
                                                                                    timestamp not_before,
                                                                                    std::string_view error) = 0;
  /// The hold on `key`: no failures and no time when there is none.
  [[nodiscard]] virtual expected<call_hold, replay_state_error> hold(std::string_view key) = 0;
  /// A call for `key` got a completion: its hold is lifted.
  [[nodiscard]] virtual expected<void, replay_state_error> clear_hold(std::string_view key) = 0;

  /// Records `output` as the payload's result, unless one is recorded
  /// already: then the entry returned is the earlier one, with `first`
  /// false, and the caller must not write downstream again.
  [[nodiscard]] virtual expected<ledger_entry, replay_state_error> record_output(
      std::string_view idempotency_key, std::string_view source, std::string_view dlq_id, std::string_view output) = 0;
  /// The ledger's entry for this key, if any.
  [[nodiscard]] virtual expected<std::optional<ledger_entry>, replay_state_error> find_output(
      std::string_view idempotency_key) = 0;
  /// Notes that the downstream write of this key's output is confirmed.
  [[nodiscard]] virtual expected<void, replay_state_error> mark_delivered(std::string_view idempotency_key) = 0;
  /// Claims a piece of work (a payload to replay, a delivery) for `owner`
  /// until now + `ttl`, so that replays sharing the store take each once:
  /// true when it was free, expired or `owner`'s already (then renewed),
  /// false while another owner's claim holds. A claim is a lease named
  /// `claim WORK`: a killed replay's claims expire with their time.
  [[nodiscard]] virtual expected<bool, replay_state_error> claim(std::string_view work, std::string_view owner,
                                                                 std::chrono::seconds ttl) {
    auto taken = acquire_lease(claim_lease(work), owner, ttl);
    if (taken) return true;
    if (taken.error().code == replay_state_errc::lease_held) return false;
    return unexpected(std::move(taken.error()));
  }
  /// Gives a claim back (only when `owner` holds it).
  [[nodiscard]] virtual expected<void, replay_state_error> release_claim(std::string_view work,
                                                                         std::string_view owner) {
    return release_lease(claim_lease(work), owner);
  }
  /// Gives back every lease and claim `owner` holds, as a replay stopped by
  /// a signal does so that the next need not wait for them. A state that
  /// cannot find them by owner (this default) leaves them to expire.
  [[nodiscard]] virtual expected<void, replay_state_error> release_all(std::string_view owner) {
    (void)owner;
    return {};
  }

  /// Up to `limit` outputs recorded by `source` whose delivery is not
  /// confirmed, oldest first: a replay that was killed between the ledger
  /// and the downstream write delivers its own when it resumes.
  [[nodiscard]] virtual expected<std::vector<ledger_entry>, replay_state_error> undelivered(std::string_view source,
                                                                                            std::size_t limit) = 0;
};

LLMDLQ_END_NAMESPACE
