// SPDX-License-Identifier: MIT
// Definitions for pipeline.hpp.
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/pipeline.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE disposition pipeline::handle(std::string_view raw, const request_context& context) const {
  auto result = process_llm_response(raw, schema_, context, options_);
  if (result) {
    disposition d;
    d.action = disposition::commit;
    d.accepted = std::move(*result);
    return d;
  }
  return dead_letter(std::move(result.error()));
}

namespace detail {

inline void count_publish(metrics* m, std::size_t slot, const expected<receipt, sink_error>& outcome) noexcept {
  if (!m) return;
  if (outcome) m->count_publish(slot);
  else m->count_sink_failure(slot, outcome.error().code);
}

}  // namespace detail

LLMDLQ_INLINE disposition pipeline::dead_letter(envelope e) const {
  disposition d;
  auto stored = sink_->publish(e);
  detail::count_publish(options_.metrics.get(), sink_slot_, stored);
  if (stored) {
    d.action = disposition::commit;
    d.stored = std::move(*stored);
  } else if (fallback_ && is_permanent(stored.error().code)) {
    d.error = std::move(stored.error());
    auto spooled = (*fallback_)->publish(e);
    detail::count_publish(options_.metrics.get(), fallback_slot_, spooled);
    if (spooled) {
      d.action = disposition::commit;
      d.stored = std::move(*spooled);
      d.in_fallback = true;
    } else {
      d.action = disposition::retry;
      d.fallback_error = std::move(spooled.error());
    }
  } else {
    d.action = disposition::retry;
    d.error = std::move(stored.error());
  }
  d.dead_letter = std::move(e);
  return d;
}

LLMDLQ_END_NAMESPACE
