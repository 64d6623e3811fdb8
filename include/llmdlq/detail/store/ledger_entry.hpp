// SPDX-License-Identifier: MIT
// The ledger entry a store's record_output returns when its call wrote the
// payload first, for every replay_state back-end.
#pragma once

#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/replay_state.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

[[nodiscard]] inline ledger_entry written_first(std::string_view idempotency_key, std::string_view source,
                                                std::string_view dlq_id, std::string_view output, timestamp at) {
  ledger_entry entry;
  entry.first = true;
  entry.idempotency_key = std::string(idempotency_key);
  entry.source = std::string(source);
  entry.dlq_id = std::string(dlq_id);
  entry.output = std::string(output);
  entry.written_at = at;
  return entry;
}

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
