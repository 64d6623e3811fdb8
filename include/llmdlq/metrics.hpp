// SPDX-License-Identifier: MIT
// metrics: counters a host owns and hands to process_options::metrics (and
// the pipeline and the recovery ladder through theirs): what was accepted,
// repaired and dead-lettered, what the sinks and the replays did.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/label_slots.hpp"
#include "llmdlq/dlq_rate_alarm.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/repair.hpp"
#include "llmdlq/sink.hpp"
#include "llmdlq/taxonomy.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// The upper bounds of llmdlq_failure_path_seconds' buckets: 1 µs to 1 s.
inline constexpr std::array<double, 19> failure_path_bounds{
    1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3,
    2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1.0};

/// The label sets a registry may hold. Labels come from enums or from these
/// bounded sets: a value past a bound is counted under "other".
struct metrics_options {
  std::size_t max_models = 16;  ///< model names in llmdlq_tokens_total
  std::size_t max_sinks = 8;    ///< sink names in llmdlq_sink_*
  /// (category, triage, code) triples: a code is derived from the category,
  /// so only hosts with several code prefixes come near this.
  std::size_t max_dead_letter_series = 256;
  std::size_t max_repair_series = 64;  ///< (code, tier) pairs; repair codes are a fixed set
  std::size_t max_replay_series = 128;  ///< (step, outcome) pairs of the recovery ladder
  /// Fed by the registry: at each dead letter, with it and the responses
  /// accepted since the last feed, and at each check_alarm() (which the host
  /// calls from a timer, every few seconds, so that accepted traffic is
  /// placed in the right step of the window and a quiet window recovers).
  /// The success path stays free of clocks and locks.
  std::shared_ptr<dlq_rate_alarm> alarm;
};

/// Every value of a registry at one moment, as plain data.
struct metrics_snapshot {
  struct repair_count {
    std::string code;
    std::string tier;
    std::uint64_t count = 0;
  };
  struct dead_letter_count {
    std::string category;
    std::string triage;
    std::string code;
    std::uint64_t count = 0;
  };
  struct sink_count {
    std::string sink;
    std::uint64_t publishes = 0;  ///< envelopes the sink stored (duplicates too)
    /// failures by reason (indexed by sink_errc)
    std::array<std::uint64_t, 6> failures{};
  };
  struct replay_count {
    std::string step;
    std::string outcome;
    std::uint64_t count = 0;
  };
  struct token_count {
    std::string model;
    std::uint64_t prompt = 0;
    std::uint64_t completion = 0;
  };
  struct stream_death_count {
    std::string category;
    std::uint64_t count = 0;  ///< streamed answers found dead before their end
    std::uint64_t bytes = 0;  ///< answer bytes received up to each one's fatal byte
  };
  struct histogram {
    std::vector<double> upper_bounds;          ///< seconds, ascending (+Inf not included)
    std::vector<std::uint64_t> cumulative;     ///< per bound, then one for +Inf
    double sum = 0;                            ///< seconds
    std::uint64_t count = 0;
  };

  std::uint64_t processed = 0;  ///< accepted + every dead letter counted
  std::uint64_t accepted = 0;
  std::vector<repair_count> repaired;
  std::vector<dead_letter_count> dead_lettered;
  std::vector<sink_count> sinks;
  std::vector<replay_count> replays;
  std::vector<token_count> tokens;
  std::vector<stream_death_count> stream_deaths;
  histogram failure_path;
  std::optional<std::uint64_t> pending_records;          ///< unset until the host sets it
  std::optional<double> oldest_pending_age_seconds;      ///< unset until the host sets it

  [[nodiscard]] std::uint64_t dead_lettered_total() const noexcept {
    std::uint64_t n = 0;
    for (const auto& d : dead_lettered) n += d.count;
    return n;
  }
};

/// A thread-safe registry of llmdlq's counters. The host makes one
/// (std::make_shared), hands it to process_options::metrics and to
/// recovery_ladder_options::metrics, and exposes it: snapshot(),
/// to_prometheus_text() (metrics_exposition.hpp), or llmdlq::prometheus's
/// collectable for a prometheus-cpp registry.
///
/// An accepted response without repairs costs one relaxed atomic increment:
/// no lock, no map, no clock, with or without an alarm. Labelled series are
/// found in fixed tables without a lock once they exist.
class metrics {
 public:
  LLMDLQ_INLINE explicit metrics(metrics_options options = {});
  metrics(const metrics&) = delete;
  metrics& operator=(const metrics&) = delete;

  /// A response process_llm_response accepted, with the repairs it took.
  void count_accepted(std::span<const repair_action> repairs) {
    accepted_.fetch_add(1, std::memory_order_relaxed);
    if (!repairs.empty()) count_repairs(repairs);
  }
  /// A dead letter made by process_llm_response or make_envelope (each is one
  /// processed response), and how long building its envelope took.
  LLMDLQ_INLINE void count_dead_letter(const envelope& e, std::chrono::nanoseconds failure_path);

  /// The slot of a sink name, for count_publish and count_sink_failure: a
  /// pipeline takes it once, when it is made.
  [[nodiscard]] std::size_t sink_slot(std::string_view name) { return sinks_.find_or_add({name}); }
  void count_publish(std::size_t sink) noexcept { sinks_.add(sink, 0); }
  void count_sink_failure(std::size_t sink, sink_errc reason) noexcept {
    sinks_.add(sink, 1 + static_cast<std::size_t>(reason));
  }

  /// A recovery step run (step and outcome are names from a fixed set:
  /// recovery_step_kind and stop_reason, or "continued").
  void count_replay(std::string_view step, std::string_view outcome) {
    replays_.add(replays_.find_or_add({step, outcome}), 0);
  }
  /// Tokens a model call used.
  void count_tokens(std::string_view model, std::uint64_t prompt, std::uint64_t completion) {
    const std::size_t at = tokens_.find_or_add({model});
    tokens_.add(at, 0, prompt);
    tokens_.add(at, 1, completion);
  }

  /// A streamed answer stream_judge found dead, by its verdict's category,
  /// after `bytes` of it (the byte that killed it included): a worker that
  /// closes the connection then pays for those and no more.
  void count_stream_death(failure_category category, std::uint64_t bytes) {
    const std::size_t at = stream_deaths_.find_or_add({to_string(category)});
    stream_deaths_.add(at, 0);
    stream_deaths_.add(at, 1, bytes);
  }

  /// The DLQ's backlog, as its store last counted it: records pending and
  /// how long the oldest has waited (zero when none is pending).
  LLMDLQ_INLINE void set_pending(std::uint64_t records, std::chrono::duration<double> oldest_age) noexcept;

  /// Gives the alarm the responses accepted since it was last fed, and has
  /// it judge its window now (see metrics_options::alarm); nothing without one.
  LLMDLQ_INLINE void check_alarm();

  [[nodiscard]] LLMDLQ_INLINE metrics_snapshot snapshot() const;
  [[nodiscard]] const std::shared_ptr<dlq_rate_alarm>& alarm() const noexcept { return alarm_; }

 private:
  LLMDLQ_INLINE void count_repairs(std::span<const repair_action> repairs);
  // Records in the alarm `dead_lettered` more and the accepted not yet given to it.
  LLMDLQ_INLINE void feed_alarm(std::uint64_t dead_lettered);

  std::shared_ptr<dlq_rate_alarm> alarm_;
  std::atomic<std::uint64_t> accepted_{0};
  std::atomic<std::uint64_t> accepted_fed_to_alarm_{0};
  detail::label_slots<2, 1> repaired_;      // code, tier
  detail::label_slots<3, 1> dead_letters_;  // category, triage, code
  detail::label_slots<1, 7> sinks_;         // sink: publishes, then failures by sink_errc
  detail::label_slots<2, 1> replays_;       // step, outcome
  detail::label_slots<1, 2> tokens_;        // model: prompt, completion
  detail::label_slots<1, 2> stream_deaths_;  // category: answers, bytes
  std::array<std::atomic<std::uint64_t>, failure_path_bounds.size() + 1> failure_path_buckets_{};
  std::atomic<std::uint64_t> failure_path_nanoseconds_{0};
  std::atomic<bool> pending_set_{false};
  std::atomic<std::uint64_t> pending_records_{0};
  std::atomic<double> oldest_pending_age_{0};
};

/// Sets the backlog gauges from a store that counts its records:
/// `store.statistics()` as moderation_store gives it (records by status, and
/// when the oldest `pending` one was created). Returns what statistics()
/// returned; on its error the gauges keep their values. Call it from the
/// same timer as check_alarm(), or before each scrape.
template <class Store>
auto refresh_pending(metrics& m, Store& store, timestamp now = system_now()) -> decltype(store.statistics()) {
  auto statistics = store.statistics();
  if (statistics) {
    const auto pending = statistics->by_status.find("pending");
    std::chrono::duration<double> age{0};
    if (statistics->oldest_pending_created_at) age = now - *statistics->oldest_pending_created_at;
    m.set_pending(pending == statistics->by_status.end() ? 0 : pending->second, age);
  }
  return statistics;
}

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/metrics.ipp"
#endif
