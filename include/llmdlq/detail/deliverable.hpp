// SPDX-License-Identifier: MIT
// What every built-in replay target checks before it writes: a ledger
// entry's output is JSON, or the delivery is refused for good.
#pragma once

#include <string>

#include <boost/json/parse.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/replay_error.hpp"
#include "llmdlq/replay_state.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// target_refused unless `entry.output` is one JSON value.
[[nodiscard]] inline expected<void, replay_error> deliverable(const ledger_entry& entry) {
  boost::system::error_code ec;
  (void)boost::json::parse(entry.output, ec);
  if (!ec) return {};
  return unexpected(replay_error{
      replay_errc::target_refused, "the recorded output is not JSON: " + ec.message(), {}, {}});
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
