// SPDX-License-Identifier: MIT
// The worker loop for a described type: a pipeline whose schema is derived
// from T, and whose accepted responses come back as T values.
#pragma once

#include <optional>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/pipeline.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/sink_handle.hpp"
#include "llmdlq/typed.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// A disposition that also carries the accepted response as a T.
template <class T>
struct typed_disposition : disposition {
  std::optional<T> value;  ///< set when the output was accepted (then `accepted` is set too)
};

/// pipeline for a struct T described with Boost.Describe: every response is
/// judged against schema_for<T>() (T's own schema; there is no other schema
/// to pass, so the two cannot disagree), and an accepted one is read as a T
/// without a second parse. Failures go to the sinks as pipeline's do, with
/// the same commit/retry answer, and the sinks are held the same way (see
/// sink_handle), and traffic is recorded as pipeline records it
/// (traffic_recording). Thread-safe when the sinks are.
///
/// \code
///   llmdlq::typed_pipeline<Receipt> p{*llmdlq::sqlite_store::open("dlq.db"), options};
///   auto d = p.handle(raw, context);
///   if (d.value) book(*d.value);
///   if (d.should_commit()) consumer.commit(message);
/// \endcode
template <class T>
class typed_pipeline {
 public:
  explicit typed_pipeline(sink_handle dead_letters, process_config config = {},
                          std::optional<sink_handle> fallback = std::nullopt,
                          traffic_recording traffic = traffic_recording::on)
      : pipeline_(schema_for<T>(), std::move(dead_letters), std::move(config), std::move(fallback), traffic) {}

  /// As pipeline::handle, and an accepted response's value as a T.
  [[nodiscard]] typed_disposition<T> handle(std::string_view raw, const request_context& context) const {
    typed_disposition<T> d;
    auto result = detail::process_typed<T>(raw, context, pipeline_.config());
    if (result) {
      d.action = disposition::commit;
      d.accepted = std::move(result->response);
      d.value = std::move(result->value);
      pipeline_.count_accepted();
    } else {
      static_cast<disposition&>(d) = pipeline_.dead_letter(std::move(result.error()));
    }
    return d;
  }

  /// Stores an envelope made elsewhere, as pipeline::dead_letter.
  [[nodiscard]] disposition dead_letter(envelope e) const { return pipeline_.dead_letter(std::move(e)); }

  [[nodiscard]] const process_config& config() const noexcept { return pipeline_.config(); }
  /// As pipeline::options: the deprecated aggregate, a copy (removed in 0.3.0).
  [[nodiscard]] process_options options() const { return pipeline_.options(); }

  /// As pipeline::records_traffic, flush_traffic and traffic.
  [[nodiscard]] bool records_traffic() const noexcept { return pipeline_.records_traffic(); }
  [[nodiscard]] expected<void, moderation_error> flush_traffic() const { return pipeline_.flush_traffic(); }
  [[nodiscard]] traffic_status traffic() const { return pipeline_.traffic(); }

 private:
  pipeline pipeline_;  // made with schema_for<T>(); handle() judges with process_typed, then counts or dead-letters
};

LLMDLQ_END_NAMESPACE
