// SPDX-License-Identifier: MIT
// The worker loop's one call: judge a response, dead-letter it if it failed,
// and tell the host whether it may commit its input offset.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/moderation.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/request_context.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/sink.hpp"
#include "llmdlq/sink_handle.hpp"
#include "llmdlq/stream_judge.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// What the host does with its input after handle().
struct disposition {
  enum action_type : std::uint8_t {
    /// The output was accepted, or its envelope is durably in the DLQ: move
    /// on. From a pipeline without a sink, a failure's envelope is handed
    /// back in dead_letter, unstored: the caller keeps it.
    commit,
    retry,  ///< the sink failed: do not commit the input; handle it again later
  };
  action_type action = retry;
  std::optional<llmdlq::accepted> accepted;  ///< set when the output was accepted
  std::optional<envelope> dead_letter;       ///< set when it failed (stored when `stored` is set)
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

/// Whether a pipeline adds what it judged to its dead-letter store's traffic
/// (moderation_store::record_traffic), from which timeline(), the console
/// and `llmdlq report` give each minute its DLQ rate.
enum class traffic_recording : std::uint8_t {
  off,  ///< nothing is recorded (for a host that records the traffic itself)
  on,   ///< the default: recorded when the dead-letter sink is a moderation_store; a no-op for other sinks
};

/// How a pipeline's traffic flushes have gone (pipeline::traffic()).
struct traffic_status {
  bool recording = false;            ///< traffic_recording::on, and the sink is a moderation_store
  std::uint64_t failed_flushes = 0;  ///< record_traffic calls that failed (their counts were kept for the next)
  std::optional<moderation_error> last_error;  ///< why the latest flush failed; cleared when one succeeds
};

template <class T>
class typed_pipeline;

namespace detail {

// The counts a pipeline owes its store's traffic, shared by the pipeline's
// copies; what is left is flushed when the last copy goes.
class traffic_counter {
 public:
  LLMDLQ_INLINE traffic_counter(sink_handle dead_letters, moderation_store& store, clock_function clock);
  traffic_counter(const traffic_counter&) = delete;
  traffic_counter& operator=(const traffic_counter&) = delete;
  LLMDLQ_INLINE ~traffic_counter();

  void count_accepted() noexcept { accepted_.fetch_add(1, std::memory_order_relaxed); }
  // A stored dead letter; flushes when the minute has moved on since the last flush.
  LLMDLQ_INLINE void count_dead_letter();
  LLMDLQ_INLINE expected<void, moderation_error> flush();
  [[nodiscard]] LLMDLQ_INLINE traffic_status status() const;

 private:
  [[nodiscard]] LLMDLQ_INLINE timestamp now() const;
  // Under mutex_.
  LLMDLQ_INLINE expected<void, moderation_error> flush_locked(timestamp at);

  alignas(64) std::atomic<std::uint64_t> accepted_{0};  // the success path's only write, on a line of its own
  alignas(64) std::atomic<std::uint64_t> dead_lettered_{0};
  std::atomic<std::int64_t> flushed_minute_;  // minutes since the epoch of the last flush
  sink_handle sink_;                          // keeps an owned store alive for the last flush
  moderation_store* store_;
  clock_function clock_;
  mutable std::mutex mutex_;
  std::uint64_t failed_flushes_ = 0;  // under mutex_
  std::optional<moderation_error> last_error_;
};

// A counter for `dead_letters` when it is a moderation_store, else nothing.
[[nodiscard]] LLMDLQ_INLINE std::shared_ptr<traffic_counter> make_traffic_counter(const sink_handle& dead_letters,
                                                                                const clock_function& clock);

}  // namespace detail

/// A schema, a sink and a config: what a worker holds for its lifetime.
/// handle() is thread-safe when the sinks are (every built-in sink is).
///
/// A pipeline made without a sink judges alone: handle(), settle() and
/// dead_letter() answer commit and hand a failure's envelope back in
/// disposition::dead_letter, for the caller to keep, print or store as it
/// sees fit; nothing is published, no sink is counted, no traffic recorded.
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
/// With process_config::metrics, each sink's publishes and failures are
/// counted under its handle's name() (sink_handle::named, else its kind).
///
/// With traffic_recording::on (the default) and a dead-letter sink that is a
/// moderation_store (sqlite_store, postgres_store), the pipeline adds the
/// responses it judged, and the dead letters it stored, to the store's
/// traffic. An accepted response costs one relaxed atomic increment: no
/// clock, no lock, no I/O. The counts go to the store at a flush: when a
/// dead letter is stored in a later minute than the last flush (that path
/// does I/O already), at each flush_traffic(), which the host calls from a
/// timer (the one that calls metrics::check_alarm()), and when the last copy
/// of the pipeline is destroyed. Everything counted since the last flush is
/// attributed to the minute of the flush (the config's envelope clock), so a timer
/// every few seconds keeps each minute right to within that interval. A
/// dead letter whose answer is retry is counted when it is stored.
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
  pipeline(llmdlq::schema schema, sink_handle dead_letters, process_config config = {},
           std::optional<sink_handle> fallback = std::nullopt, traffic_recording traffic = traffic_recording::on)
      : schema_(std::move(schema)),
        sink_(std::move(dead_letters)),
        fallback_(std::move(fallback)),
        config_(std::move(config)) {
    if (config_.metrics) {
      sink_slot_ = config_.metrics->sink_slot(sink_->name());
      if (fallback_) fallback_slot_ = config_.metrics->sink_slot(fallback_->name());
    }
    if (traffic == traffic_recording::on) traffic_ = detail::make_traffic_counter(*sink_, config_.envelope.clock);
  }

  /// A pipeline without a sink: it judges, and hands each failure's envelope back.
  explicit pipeline(llmdlq::schema schema, process_config config = {})
      : schema_(std::move(schema)), config_(std::move(config)) {}

  /// Accepted: commit. Failed and stored in the sink: commit (the failure
  /// moved to the DLQ and frees the input's partition). Failed and the sink
  /// failed too: retry, and the message stays where it is. Failed without a
  /// sink: commit, with the envelope in dead_letter.
  [[nodiscard]] LLMDLQ_INLINE disposition handle(std::string_view raw, const request_context& context) const;

  /// Stores an envelope made elsewhere (make_envelope, a transport failure),
  /// with the same commit/retry answer (without a sink: handed back, commit).
  [[nodiscard]] LLMDLQ_INLINE disposition dead_letter(envelope e) const;

  /// A judge for a streamed answer, with this pipeline's schema and options
  /// (see stream_judge.hpp): feed it the answer's text as it arrives, close
  /// the stream when its verdict is dead (and say so with cancel()), then
  /// settle() what finish() says. The pipeline must outlive the judge.
  ///
  /// \code
  ///   auto judge = p.judge_stream(context);
  ///   while (auto text = next_piece()) {
  ///     if (judge.feed(*text).dead) { close_stream(); judge.cancel(tokens_so_far); break; }
  ///   }
  ///   auto d = p.settle(judge.finish(finish_reason));  // commit or retry, as handle() says
  /// \endcode
  [[nodiscard]] stream_judge judge_stream(request_context context) const {
    return stream_judge(schema_, std::move(context), config_);
  }
  /// The disposition of a response judged elsewhere (stream_judge::finish,
  /// judged_stream::finish, process_llm_response with this pipeline's
  /// schema and config): handle()'s, without judging it again.
  [[nodiscard]] LLMDLQ_INLINE disposition settle(expected<accepted, envelope> judged) const;

  [[nodiscard]] const process_config& config() const noexcept { return config_; }
  /// The config as the deprecated aggregate, a copy (removed in 0.3.0 with process_options).
  [[nodiscard]] process_options options() const { return process_options::of(config_); }

  /// Whether failures are published: the pipeline was made with a sink.
  [[nodiscard]] bool publishes() const noexcept { return sink_.has_value(); }

  /// Whether the pipeline records traffic: made with traffic_recording::on,
  /// and its dead-letter sink is a moderation_store.
  [[nodiscard]] bool records_traffic() const noexcept { return traffic_ != nullptr; }

  /// Adds what was counted since the last flush to the store's traffic, in
  /// the minute of now. Thread-safe; success, and nothing done, when the
  /// pipeline does not record traffic or nothing was counted. On an error
  /// the counts are kept for the next flush; handle() is never affected.
  [[nodiscard]] LLMDLQ_INLINE expected<void, moderation_error> flush_traffic() const;

  /// Whether the flushes fail, and why the latest did.
  [[nodiscard]] LLMDLQ_INLINE traffic_status traffic() const;

 private:
  template <class T>
  friend class typed_pipeline;

  // An accepted response: handle()'s, or typed_pipeline's (which judges it itself).
  void count_accepted() const noexcept {
    if (traffic_) traffic_->count_accepted();
  }

  llmdlq::schema schema_;
  std::optional<sink_handle> sink_;  // none: failures are handed back
  std::optional<sink_handle> fallback_;
  process_config config_;
  std::size_t sink_slot_ = 0;  // the sinks' series in config_.metrics
  std::size_t fallback_slot_ = 0;
  std::shared_ptr<detail::traffic_counter> traffic_;  // null when no traffic is recorded
};

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/pipeline.ipp"
#endif
