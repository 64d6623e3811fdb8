// SPDX-License-Identifier: MIT
// Why a replay, or one of its parts, failed: the source it reads letters
// from (replay_source), the state it keeps (replay_state), the target it
// delivers payloads to (replay_target). Each part answers with the codes of
// its own failures; replayer::run() and deliver_resolutions() pass them on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/error_category.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/replay_state.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Why a replay's source, state or target failed.
enum class replay_errc : std::uint8_t {
  /// The source could not be read or written: a store that failed, a
  /// cluster that did not answer in time. Nothing was lost: try again.
  source_unavailable,
  /// The source refused what the replay asked (a topic it may not read, an
  /// envelope the store will not take): asking again gets the same answer.
  source_refused,
  /// The replay state's store failed (replay_state_errc::store_unavailable):
  /// nothing changed, try again.
  state_unavailable,
  /// Another replay holds the lease (replay_error::holder, until
  /// replay_error::expires_at): try again after it ends or expires.
  lease_held,
  /// This replay's lease expired and another replay took it: this one
  /// stopped, and leaves the letters to it.
  lease_lost,
  /// The target could not take a delivery (a write or a sync that failed, a
  /// file it could not open): the ledger keeps the payload undelivered, and
  /// the next replay or delivery writes it.
  target_unavailable,
  /// The target refuses the delivery however often it is asked (an output
  /// that is not JSON, a file another user could have written).
  target_refused,
};

LLMDLQ_END_NAMESPACE
template <>
struct std::is_error_code_enum<llmdlq::replay_errc> : std::true_type {};
LLMDLQ_BEGIN_NAMESPACE

namespace detail {
template <>
struct errc_table<replay_errc> {
  static constexpr const char* category = "llmdlq.replay";
  static constexpr std::string_view unknown = "unknown";
  static constexpr bool has_permanence = true;
  static constexpr errc_entry<replay_errc> entries[] = {
      {replay_errc::source_unavailable, "source_unavailable"},
      {replay_errc::source_refused, "source_refused", true},
      {replay_errc::state_unavailable, "state_unavailable"},
      {replay_errc::lease_held, "lease_held"},
      {replay_errc::lease_lost, "lease_lost"},
      {replay_errc::target_unavailable, "target_unavailable"},
      {replay_errc::target_refused, "target_refused", true},
  };
};
}  // namespace detail

/// Whether running the replay (or the delivery) again can never get past
/// this failure: the source or the target must change first. A
/// std::error_code of it says the same by comparing equal to
/// failure_condition::permanent.
[[nodiscard]] constexpr bool is_permanent(replay_errc code) noexcept { return detail::errc_permanent(code); }

/// The enumerator's name ("lease_held"), also the message() of its
/// std::error_code, whose category is named "llmdlq.replay".
[[nodiscard]] constexpr std::string_view to_string(replay_errc code) noexcept { return detail::errc_name(code); }

struct replay_error {
  replay_errc code = replay_errc::source_unavailable;
  std::string message;
  std::string holder;                   ///< lease_held, lease_lost: who holds the lease now
  std::optional<timestamp> expires_at;  ///< lease_held: until when
};

namespace detail {
/// A failure of a replay's part with no holder or expiry: a target's, a redrive source's.
[[nodiscard]] inline unexpected<replay_error> target_failure(replay_errc code, std::string message) {
  return unexpected(replay_error{code, std::move(message), {}, {}});
}

/// A replay_state's failure as a replay reports it: lease_held and
/// lease_lost as they are, the rest (a store that failed; attempts_exhausted,
/// which the ladder answers itself and no operation of a run or a delivery
/// returns) as state_unavailable.
[[nodiscard]] inline replay_error replay_error_of(replay_state_error error) {
  replay_errc code = replay_errc::state_unavailable;
  if (error.code == replay_state_errc::lease_held) code = replay_errc::lease_held;
  if (error.code == replay_state_errc::lease_lost) code = replay_errc::lease_lost;
  return {code, std::move(error.message), std::move(error.holder), error.expires_at};
}
}  // namespace detail

LLMDLQ_END_NAMESPACE
