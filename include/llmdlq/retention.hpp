// SPDX-License-Identifier: MIT
// How long a dead letter is kept: a default, overrides by failure category
// and by triage class, and the expiry time it gives an envelope.
#pragma once

#include <chrono>
#include <map>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/taxonomy.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// When an envelope expires: `expires_at(e)` is the envelope's first failure
/// (`attempts.first_failure_at`, else `created_at`) plus its retention. The
/// retention of an envelope is, first match wins:
///  1. `by_triage` for its triage class,
///  2. `by_category` for its failure category,
///  3. `default_retention`.
/// The triage class wins because it says what is done with the record (a
/// record held for human review must outlive its review, whatever failed).
///
/// Default-constructed: 30 days, poison 14 days (a poison pill is never
/// replayed; keeping it longer only keeps what it carried).
///
/// A duration converts to a policy under which everything expires after it,
/// so `options.retention = std::chrono::hours(24);` keeps meaning that.
struct retention_policy {
  using duration = std::chrono::milliseconds;

  duration default_retention = std::chrono::hours(24 * 30);
  std::map<failure_category, duration> by_category{{failure_category::poison, std::chrono::hours(24 * 14)}};
  std::map<triage_class, duration> by_triage;

  retention_policy() = default;
  /// Everything expires `everything` after its first failure; no overrides.
  template <class Rep, class Period>
  retention_policy(std::chrono::duration<Rep, Period> everything)  // NOLINT(google-explicit-constructor): see above
      : default_retention(everything), by_category() {}

  /// How long `e` is kept, by the rules above.
  [[nodiscard]] LLMDLQ_INLINE duration retention_for(const envelope& e) const;
  /// The first failure of `e` (or its creation) plus retention_for(e).
  [[nodiscard]] LLMDLQ_INLINE timestamp expires_at(const envelope& e) const;

  friend bool operator==(const retention_policy&, const retention_policy&) = default;
};

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/retention.ipp"
#endif
