// SPDX-License-Identifier: MIT
// envelope_rewrite: how a store's stored envelopes are rewritten in place
// (key rotation re-seals them), one row at a time.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Sees a row's dlq_id and stored envelope JSON; returns the JSON to store
/// instead, or nothing to leave the row as it is. It must not throw.
using envelope_rewrite = std::function<std::optional<std::string>(std::string_view dlq_id, std::string_view json)>;

LLMDLQ_END_NAMESPACE
