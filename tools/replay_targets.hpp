// SPDX-License-Identifier: MIT
// Where `llmdlq replay --to` and `llmdlq deliver --to` may send payloads: the
// allowlist that guards them. The target itself is the core's
// (llmdlq/jsonl_replay_target.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <llmdlq/expected.hpp>
#include <llmdlq/jsonl_replay_target.hpp>

namespace llmdlq::cli {

/// The file `--to jsonl:PATH` names, as the allowlist sees it: absolute,
/// with `.`, `..` and symbolic links resolved, so that no spelling of a
/// path leads out of an allowed prefix.
expected<std::filesystem::path, std::string> resolve_jsonl_target(std::string_view path);

/// Whether `target` is on the allowlist in `allowlist_file`: one target per
/// line, exact, or a prefix ending in `*`; `#` starts a comment. The error
/// says why not.
expected<void, std::string> check_allowlist(std::string_view target, const std::filesystem::path& allowlist_file);

/// The file a `--to` spec names, once the allowlist (`allowlist`, or else
/// $LLMDLQ_REPLAY_ALLOWLIST) allows it; the error says why not (a usage error).
expected<std::filesystem::path, std::string> allowed_jsonl_target(std::string_view to, std::string_view allowlist);

}  // namespace llmdlq::cli
