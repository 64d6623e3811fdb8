// SPDX-License-Identifier: MIT
// Definitions for process.hpp: the judging stages run in order (see
// process/stages.ipp), and the first failure becomes an envelope.
#pragma once

#include <chrono>
#include <cmath>

#include <boost/json/parse.hpp>
#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/impl/process/build_envelope.ipp"
#include "llmdlq/impl/process/stages.ipp"
#include "llmdlq/process.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE boost::json::value accepted::value() const {
  parse_options limits;
  limits.max_size = json.size();
  limits.max_depth = 1u << 16;  // it was parsed once already, under the caller's limits
  auto parsed = parse_value(json, limits);
  return parsed ? *std::move(parsed) : boost::json::value();
}

namespace detail {

// build() is the envelope of a failure; counted in config.metrics, with
// the time it took, when the host gave one.
template <class Build>
envelope counted_envelope(const process_config& config, Build&& build) {
  if (!config.metrics) return build();
  const auto start = std::chrono::steady_clock::now();
  envelope e = build();
  config.metrics->count_dead_letter(e, std::chrono::steady_clock::now() - start);
  return e;
}

LLMDLQ_INLINE expected<accepted, envelope> process_response(
    std::string_view raw, const schema& schema, const request_context& context, const process_config& config,
    const std::function<std::optional<std::string>(const json_document&)>& on_accept,
    const std::function<request_context()>& letter_context) {
  judgement j(raw, schema, context, config, on_accept);
  for (const judging_stage& stage : judging_stages) {
    if (stage_result failure = stage.run(j)) {
      failure->repaired_locally = j.repaired_locally();
      return unexpected(counted_envelope(config, [&] {
        const auto build = [&](const request_context& c) {
          return build_envelope(j.now, std::move(*failure), raw, j.raw_utf8_end(), c, config, schema.fingerprint(),
                                schema.pii_paths());
        };
        return letter_context ? build(letter_context()) : build(context);
      }));
    }
  }
  if (config.metrics) config.metrics->count_accepted(j.repairs);
  return accepted{j.repairs.empty() ? std::string(raw) : std::move(j.repaired_text), std::move(j.repairs)};
}

}  // namespace detail

LLMDLQ_INLINE envelope make_envelope(failure_report failure, std::string_view raw, const request_context& context,
                                     const process_config& config) {
  // No schema here: the versions the host declared stand for it in a derived key.
  return detail::counted_envelope(config, [&] {
    return detail::build_envelope(config.envelope.clock ? config.envelope.clock() : system_now(), std::move(failure),
                                  raw, detail::first_invalid_utf8(raw), context, config, context.versions.schema, {});
  });
}

LLMDLQ_INLINE envelope make_envelope(failure_report failure, std::string_view raw, const schema& schema,
                                     const request_context& context, const process_config& config) {
  return detail::counted_envelope(config, [&] {
    return detail::build_envelope(config.envelope.clock ? config.envelope.clock() : system_now(), std::move(failure),
                                  raw, detail::first_invalid_utf8(raw), context, config, schema.fingerprint(),
                                  schema.pii_paths());
  });
}

LLMDLQ_INLINE expected<void, options_error> check_options(const judging_options& options) {
  if (options.min_confidence && !std::isfinite(*options.min_confidence)) {
    return unexpected(options_error{"min_confidence",
                                    fmt::format("must be a finite number, not {}", *options.min_confidence)});
  }
  return {};
}

LLMDLQ_INLINE expected<void, options_error> check_options(const process_config& config) {
  auto checked = check_options(config.judging);
  if (!checked) checked.error().option.insert(0, "judging.");
  return checked;
}

LLMDLQ_INLINE expected<void, options_error> check_options(const process_options& options) {
  return check_options(options.judging_part());
}

LLMDLQ_INLINE expected<accepted, envelope> process_llm_response(std::string_view raw, const schema& schema,
                                                                const request_context& context,
                                                                const process_config& config) {
  return detail::process_response(raw, schema, context, config, {});
}

LLMDLQ_END_NAMESPACE
