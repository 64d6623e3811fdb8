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

LLMDLQ_INLINE disposition pipeline::dead_letter(envelope e) const {
  disposition d;
  auto stored = sink_->publish(e);
  if (stored) {
    d.action = disposition::commit;
    d.stored = std::move(*stored);
  } else if (fallback_ && is_permanent(stored.error().code)) {
    d.error = std::move(stored.error());
    auto spooled = (*fallback_)->publish(e);
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
