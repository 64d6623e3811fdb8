// SPDX-License-Identifier: MIT
#include "replay_ledger.hpp"

#include <llmdlq/sqlite/replay_state.hpp>
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
#include <llmdlq/postgres/replay_state.hpp>
#endif

namespace llmdlq::cli {

expected<std::unique_ptr<replay_state>, std::string> open_ledger(const store_spec& spec) {
  if (spec.kind == store_spec::store_kind::sqlite) {
    auto state = sqlite_replay_state::open(spec.location);
    if (!state) return unexpected(state.error().message);
    return std::unique_ptr<replay_state>(std::make_unique<sqlite_replay_state>(std::move(*state)));
  }
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
  if (spec.kind == store_spec::store_kind::postgres) {
    auto state = postgres_replay_state::open(spec.location);
    if (!state) return unexpected(state.error().message);
    return std::unique_ptr<replay_state>(std::make_unique<postgres_replay_state>(std::move(*state)));
  }
#endif
  return unexpected(std::string("this needs a store that keeps a ledger (sqlite: or postgres:)"));
}

}  // namespace llmdlq::cli
