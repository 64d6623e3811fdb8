// SPDX-License-Identifier: MIT
// The recovery ladder: the cheapest fix first. Given a dead letter it says
// what to try next, as data (local repair, an isolated repair prompt, a
// stronger model, a declared schema relaxation, a revalidation under
// today's schema, or stop and why), and can run that step.
// Part of the llmdlq::llm library.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/llm/backoff.hpp"
#include "llmdlq/llm/circuit_breaker.hpp"
#include "llmdlq/llm/client.hpp"
#include "llmdlq/llm/recovery_step.hpp"
#include "llmdlq/llm/repair_prompt.hpp"
#include "llmdlq/llm/schema_relaxation.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/provider_schema.hpp"
#include "llmdlq/replay_state.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct recovery_ladder_options {
  std::string model;             ///< the re-ask model; empty: the envelope's model.name
  std::string escalation_model;  ///< the stronger model for later attempts; empty: none
  /// Model calls per payload. With a replay_state the count lives in the
  /// store and holds across processes; without one, in the envelope's history.
  std::uint32_t max_attempts = 2;
  /// Calls in a row for one payload that get no completion (429, 5xx, a
  /// timeout, a cut connection, a body that is no completion) before it goes
  /// to a person. They give their attempt back; with a replay_state the
  /// count, the payload's wait and the endpoint's wait and breaker live in
  /// the store and hold across runs.
  std::uint32_t max_call_failures = 5;
  std::int64_t max_tokens = 2048;  ///< a re-ask's max_tokens when the envelope names none
  /// A truncated output is asked again only with a larger max_tokens
  /// (doubled each time), up to this.
  std::int64_t max_tokens_ceiling = 32768;
  std::int64_t payload_token_budget = 32000;  ///< tokens per payload over all attempts; 0: no limit
  std::int64_t window_token_budget = 0;       ///< tokens per `budget_window` over all payloads; 0: no limit
  std::chrono::milliseconds budget_window{std::chrono::hours(1)};
  circuit_breaker_options breaker;
  backoff_options backoff;  ///< after a failed call, the next call to that endpoint waits (full jitter)
  /// The longest the ladder sleeps for a throttled or backing-off endpoint;
  /// a longer wait gives the payload back (`throttled`, with retry_after).
  std::chrono::milliseconds max_wait{std::chrono::seconds(30)};
  repair_prompt_options prompt;
  schema_relaxation relaxation;  ///< opt-in: nothing is relaxed unless declared
  /// How the schema is compiled: as the pipeline compiles it (format
  /// assertion, remote schemas), so that answers are judged as strictly as
  /// the original response was.
  compile_options schema;
  /// Today's versions: an envelope written under another schema or prompt
  /// version is revalidated first, and its deterministic failures may be
  /// re-asked. An envelope that names no version is not taken as written
  /// under another one.
  version_set current_versions;
  /// Counts each step run (llmdlq_replays_total{step,outcome}) and the
  /// tokens of each model call; nullptr: nothing is counted. (judge.metrics,
  /// when set, counts the judged answers as processed responses too.)
  std::shared_ptr<llmdlq::metrics> metrics;
  process_options judge;    ///< how answers and stored responses are judged
  bool send_schema = true;  ///< ask for structured output with the schema (json_schema, strict)
  /// How the provider takes the schema (provider_schema.hpp): the schema is
  /// sent lowered for it (strict mode only where it can take it), and the
  /// nulls lowering forced are mapped back before an answer is judged by
  /// the schema as written. `full` sends it as written.
  provider_profile provider = provider_profile::full;
  std::optional<double> temperature;
  clock_function clock = system_now;
  std::function<void(std::chrono::milliseconds)> sleep;  ///< empty: std::this_thread::sleep_for
};

/// Thread-safe: one ladder (with its circuit breaker and window budget)
/// serves every worker thread of a process.
class recovery_ladder {
 public:
  /// `schema_json` is the JSON Schema answers must follow today.
  [[nodiscard]] static expected<recovery_ladder, schema_error> create(std::string_view schema_json, llm_client& client,
                                                                      recovery_ladder_options options = {});

  recovery_ladder(recovery_ladder&&) noexcept;
  recovery_ladder& operator=(recovery_ladder&&) noexcept;
  ~recovery_ladder();

  /// The next step for `e`, from its failure, triage, versions and attempt
  /// history. `attempts_made` is the store's count of model calls for its
  /// payload when it has one (the larger of it and the history counts).
  [[nodiscard]] recovery_step next_step(const envelope& e, std::uint32_t attempts_made = 0) const;

  /// The repair prompt the next model step would send, built from the
  /// failed output redacted by `judge.redaction` (a no-op for a letter
  /// process_llm_response stored, which is redacted already).
  [[nodiscard]] repair_prompt prompt_for(const envelope& e) const;

  /// Given `e` with the model call about to start as the last record of its
  /// history (outcome `call_started`: model, time), writes it down; false
  /// when it could not, and the call is not made. A process killed during
  /// the call so leaves the call in the letter's history, as the store's
  /// attempt count has it.
  using call_journal = std::function<bool(const envelope& with_call)>;

  /// Runs `step` on `e`, appending an attempt to `e.attempts.history`, and
  /// returns the step to stop with when it ended the ladder. A model step
  /// reserves its attempt in `state` first (when given), and gives it back
  /// when no model answered; `journal` (when given) writes it down before
  /// the call; `client` (when given) makes the call instead of the ladder's
  /// own: a client makes one call at a time, so calls in flight together
  /// need one each, while the breaker, backoff and window stay the ladder's.
  std::optional<recovery_step> run_step(envelope& e, const recovery_step& step, recovery_result& result,
                                        replay_state* state = nullptr, const call_journal& journal = {},
                                        llm_client* client = nullptr);

  /// Runs steps until one stops the ladder.
  [[nodiscard]] recovery_result run(envelope& e, replay_state* state = nullptr, const call_journal& journal = {},
                                    llm_client* client = nullptr);

  [[nodiscard]] const circuit_breaker& breaker() const noexcept;
  [[nodiscard]] const recovery_ladder_options& options() const noexcept;

 private:
  struct impl;
  explicit recovery_ladder(std::unique_ptr<impl> impl) noexcept;
  std::optional<recovery_step> take_step(envelope& e, const recovery_step& step, recovery_result& result,
                                         replay_state* state, const call_journal& journal, llm_client& client);
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
