// SPDX-License-Identifier: MIT
// The replay state a SQLite or PostgreSQL DLQ keeps beside its records
// (attempts, ledger, leases), as `deliver` and `redrive` open it.
#pragma once

#include <memory>
#include <string>

#include <llmdlq/expected.hpp>
#include <llmdlq/replay_state.hpp>
#include <llmdlq/store_spec.hpp>

namespace llmdlq::cli {

/// The replay state kept in the DLQ `spec` names; why not (the store's fault).
[[nodiscard]] expected<std::unique_ptr<replay_state>, std::string> open_ledger(const store_spec& spec);

}  // namespace llmdlq::cli
