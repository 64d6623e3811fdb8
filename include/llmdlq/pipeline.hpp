// SPDX-License-Identifier: MIT
// The worker loop's one call: judge a response, dead-letter it if it failed,
// and tell the host whether it may commit its input offset.
#pragma once

#include <optional>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/sink.hpp"
#include "llmdlq/sink_handle.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// What the host does with its input after handle().
struct disposition {
  enum action_type : std::uint8_t {
    commit,  ///< the output was accepted, or its envelope is durably in the DLQ: move on
    retry,   ///< the sink failed: do not commit the input; handle it again later
  };
  action_type action = retry;
  std::optional<llmdlq::accepted> accepted;  ///< set when the output was accepted
  std::optional<envelope> dead_letter;       ///< set when it failed (stored, unless action is retry)
  std::optional<receipt> stored;             ///< the receipt for dead_letter (from the fallback sink if in_fallback)
  std::optional<sink_error> error;           ///< why the dead-letter sink failed
  bool in_fallback = false;                  ///< the sink rejected dead_letter; the fallback sink holds it
  std::optional<sink_error> fallback_error;  ///< why the fallback sink failed too

  [[nodiscard]] bool should_commit() const noexcept { return action == commit; }
  /// A retry that cannot succeed by itself: the sink rejected the envelope
  /// for good (size, constraint, a read-only store) and no fallback took it.
  /// Alarm: retrying blocks the input's partition until someone acts.
  [[nodiscard]] bool rejected() const noexcept {
    return action == retry && error && is_permanent(error->code);
  }
  friend bool operator==(const disposition& d, action_type a) noexcept { return d.action == a; }
};

/// A schema, a sink and options: what a worker holds for its lifetime.
/// handle() is thread-safe when the sinks are (every built-in sink is).
///
/// The pipeline holds the schema by value (a copy shares the compiled
/// schema) and each sink through a sink_handle: a sink passed as an lvalue
/// is referred to and must outlive the pipeline; a sink passed as an rvalue
/// (`*sqlite_store::open(path)`) or a smart pointer is owned.
///
/// A sink error that is_permanent() (the sink rejected the envelope) goes to
/// the optional fallback sink, a local JSON Lines spool for instance, and
/// the input is committed once the fallback holds the envelope. Without a
/// fallback the answer is retry, with disposition::rejected() true.
///
/// With process_options::metrics, each sink's publishes and failures are
/// counted under its handle's name() (sink_handle::named, else its kind).
///
/// \code
///   llmdlq::pipeline p{*llmdlq::schema::compile(text), *llmdlq::sqlite_store::open("dlq.db"), options};
///   for (auto& message : consumer) {
///     auto d = p.handle(call_llm(message), context_for(message));
///     if (d == llmdlq::disposition::retry) break;  // keep the offset; try again later
///     consumer.commit(message);
///   }
/// \endcode
class pipeline {
 public:
  pipeline(llmdlq::schema schema, sink_handle dead_letters, process_options options = {},
           std::optional<sink_handle> fallback = std::nullopt)
      : schema_(std::move(schema)),
        sink_(std::move(dead_letters)),
        fallback_(std::move(fallback)),
        options_(std::move(options)) {
    if (options_.metrics) {
      sink_slot_ = options_.metrics->sink_slot(sink_.name());
      if (fallback_) fallback_slot_ = options_.metrics->sink_slot(fallback_->name());
    }
  }

  /// Accepted: commit. Failed and stored in the sink: commit (the failure
  /// moved to the DLQ and frees the input's partition). Failed and the sink
  /// failed too: retry, and the message stays where it is.
  [[nodiscard]] LLMDLQ_INLINE disposition handle(std::string_view raw, const request_context& context) const;

  /// Stores an envelope made elsewhere (make_envelope, a transport failure),
  /// with the same commit/retry answer.
  [[nodiscard]] LLMDLQ_INLINE disposition dead_letter(envelope e) const;

  [[nodiscard]] const process_options& options() const noexcept { return options_; }

 private:
  llmdlq::schema schema_;
  sink_handle sink_;
  std::optional<sink_handle> fallback_;
  process_options options_;
  std::size_t sink_slot_ = 0;  // the sinks' series in options_.metrics
  std::size_t fallback_slot_ = 0;
};

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/pipeline.ipp"
#endif
