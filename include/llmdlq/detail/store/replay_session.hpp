// SPDX-License-Identifier: MIT
// What a SQL back-end supplies to the replay state's shared operations: its
// statements, and a way to run each operation under its lock.
#pragma once

#include <functional>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/store/sql_session.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/replay_state.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// One connection of a back-end, shared by the operations of one replay
/// state, one at a time.
class replay_session : public sql_statements<replay_state_error> {
 public:
  using work = std::function<expected<void, replay_state_error>()>;

  /// Runs `body`, the replay state's operation `what`, under the back-end's
  /// lock on a ready connection: in one transaction, or statement by
  /// statement, each committed as it ends (so each statement of `body` must
  /// hold on its own). A back-end that reconnects runs `body` a second time
  /// when the connection broke, but only when it is `repeatable`: a body
  /// that counts something would count it twice.
  [[nodiscard]] virtual expected<void, replay_state_error> operation(std::string_view what, bool repeatable,
                                                                     const work& body) = 0;
};

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
