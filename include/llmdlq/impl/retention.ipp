// SPDX-License-Identifier: MIT
// Definitions for retention.hpp.
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/retention.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE retention_policy::duration retention_policy::retention_for(const envelope& e) const {
  if (const auto found = by_triage.find(e.triage.kind); found != by_triage.end()) return found->second;
  if (const auto found = by_category.find(e.failure.category); found != by_category.end()) return found->second;
  return default_retention;
}

LLMDLQ_INLINE timestamp retention_policy::expires_at(const envelope& e) const {
  return e.attempts.first_failure_at.value_or(e.created_at) + retention_for(e);
}

LLMDLQ_END_NAMESPACE
