// SPDX-License-Identifier: MIT
// The `--to` of `llmdlq replay` and `llmdlq deliver`: which allowlist the
// command line names, and what the tool says. Matching the allowlist and
// opening the target are the library's (llmdlq/stores/open.hpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <llmdlq/expected.hpp>
#include <llmdlq/replay_target.hpp>
#include <llmdlq/store_spec.hpp>

namespace llmdlq::cli {

/// The allowlist a command uses: `given` (its --allowlist), else
/// $LLMDLQ_REPLAY_ALLOWLIST; empty when neither names one.
[[nodiscard]] std::string allowlist_of(std::string_view given);

/// The target `--to` names, once the allowlist (`allowlist`, or else
/// $LLMDLQ_REPLAY_ALLOWLIST) allows it, as the allowlist matched it (a
/// `jsonl:` file absolute, links resolved); why not (a usage error).
[[nodiscard]] expected<store_spec, std::string> allowed_target_spec(std::string_view to, std::string_view allowlist);

/// Opens the target allowed_target_spec() returned; why not.
[[nodiscard]] expected<std::unique_ptr<replay_target>, std::string> open_allowed_target(const store_spec& allowed);

}  // namespace llmdlq::cli
