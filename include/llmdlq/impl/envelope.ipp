// SPDX-License-Identifier: MIT
// Definitions for envelope.hpp: the writer, the reader and the size fitter
// (envelope/writer.ipp, envelope/reader.ipp, envelope/fitter.ipp).
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/detail/json/text_passes.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/impl/envelope/fitter.ipp"
#include "llmdlq/impl/envelope/reader.ipp"
#include "llmdlq/impl/envelope/writer.ipp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE captured_text captured_text::of(std::string_view whole) {
  detail::count_text_pass(detail::text_pass::utf8_check);
  return of(whole, simdjson::validate_utf8(whole.data(), whole.size()));
}

LLMDLQ_INLINE captured_text captured_text::of(std::string_view whole, bool valid_utf8) {
  detail::count_text_pass(detail::text_pass::sha256);
  if (valid_utf8) return captured_text{std::string(whole), whole.size(), detail::sha256_hex(whole), false, false, {}};
  return captured_text{detail::base64(whole), whole.size(), detail::sha256_hex(whole), false, true, std::nullopt};
}

LLMDLQ_INLINE attempt_weight weight_of(const attempt_record& a) noexcept {
  if (a.strategy != "repair_prompt" && a.strategy != "escalate_model") return attempt_weight::local;
  // No model answered a call that failed, or whose request the provider refused.
  return a.outcome == "call_failed" || a.outcome == "request_refused" ? attempt_weight::unanswered
                                                                      : attempt_weight::counted;
}

LLMDLQ_END_NAMESPACE
