// SPDX-License-Identifier: MIT
// What a Redis server says about keeping on disk what it acknowledged: the
// Redis sink and target refuse a server that would lose it in a crash.
// Part of the llmdlq::redis library (hiredis).
#pragma once

#include <optional>
#include <string>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// What the server said about keeping entries on disk, when it was last connected to.
struct redis_persistence {
  /// `aof_enabled` of `INFO persistence`; nothing when the server did not say.
  std::optional<bool> append_only;
  /// `always`, `everysec` or `no`; empty when `CONFIG GET` is renamed or forbidden.
  std::string appendfsync;
  friend bool operator==(const redis_persistence&, const redis_persistence&) = default;
};

LLMDLQ_END_NAMESPACE
