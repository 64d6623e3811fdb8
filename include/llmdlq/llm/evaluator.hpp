// SPDX-License-Identifier: MIT
// A DLQ as the test set of a prompt or a model: each selected letter's
// input asked of a candidate (a prompt template, a model, a schema) and the
// answer judged as the pipeline judges it, together with inputs that succeed
// today (controls), counted as fixed, still failing and regressed. Reads
// letters, never writes them: no status, attempt or ledger changes.
// Part of the llmdlq::llm library.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/field_cipher.hpp"
#include "llmdlq/llm/client.hpp"
#include "llmdlq/process_config.hpp"
#include "llmdlq/provider_schema.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/timestamp.hpp"
#include "llmdlq/token_usage.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// A prompt with places for what each case brings: `{{input}}` (the
/// original input, as the model saw it) and `{{failed_output}}` (the
/// output the letter stores, redacted as stored). The whole text is the
/// user message; each place may appear any number of times.
class prompt_template {
 public:
  static constexpr std::string_view input_place = "{{input}}";
  static constexpr std::string_view failed_output_place = "{{failed_output}}";

  /// Fails when the text holds neither place: every case would be asked the same.
  [[nodiscard]] static expected<prompt_template, std::string> parse(std::string text);

  [[nodiscard]] bool uses_input() const noexcept { return uses_input_; }
  [[nodiscard]] bool uses_failed_output() const noexcept { return uses_failed_output_; }
  /// The text with each place filled; a place's value is put in as it is,
  /// so a value holding `{{input}}` is not filled again.
  [[nodiscard]] std::string render(std::string_view input, std::string_view failed_output) const;

 private:
  std::string text_;
  bool uses_input_ = false;
  bool uses_failed_output_ = false;
};

/// One input to ask the candidate: a dead letter's or a control's.
struct eval_case {
  std::string id;               ///< the letter's dlq_id, or the control's id
  bool control = false;         ///< an input that succeeds today: it can only regress
  std::string before_category;  ///< the letter's failure category (a control: empty, accepted)
  std::string before_code;      ///< the letter's failure code
  std::string input;
  std::string failed_output;
  std::string model;          ///< the model that answered it before (the candidate's default)
  std::string not_evaluable;  ///< why it cannot be asked (empty: it can)
};

/// The case of `letter` for `prompt`: its input is the one it stores
/// (stored_original_input, opening a sealed copy with `cipher`), its failed
/// output the stored raw response. A letter whose stored input the template
/// needs and cannot have, or whose output is only partly stored, is not
/// evaluable, and says why.
[[nodiscard]] eval_case eval_case_of(const envelope& letter, const prompt_template& prompt,
                                     const field_cipher* cipher = nullptr);

/// The indices of at most `n` of `strata` (one key per item, such as
/// `category/code`), chosen by `seed` alone: the same seed and keys give
/// the same choice on every machine. Each stratum gets a share proportional
/// to its size (largest remainders), and at least one item when `n` is at
/// least the number of strata; within a stratum the items are ranked by a
/// hash of the seed and `ids[i]`, so an item stays chosen when others join.
/// Sorted; all of them when `n` is not less than their number.
[[nodiscard]] std::vector<std::size_t> stratified_sample(std::span<const std::string> strata,
                                                         std::span<const std::string> ids, std::size_t n,
                                                         std::uint64_t seed);

/// What became of one case.
enum class eval_outcome : std::uint8_t {
  accepted,       ///< the answer passed the judge
  failed,         ///< the answer was dead-lettered: after_category, after_code
  not_evaluable,  ///< never asked: detail says why
  not_asked,      ///< the token budget was spent before its turn
  call_failed,    ///< no answer: the call failed (detail), nothing judged
};

[[nodiscard]] std::string_view to_string(eval_outcome outcome) noexcept;

struct eval_result {
  std::string id;
  bool control = false;
  std::string before_category;  ///< empty: accepted before (a control)
  std::string before_code;
  eval_outcome outcome = eval_outcome::not_evaluable;
  std::string after_category;  ///< failed: the answer's failure category
  std::string after_code;
  std::string detail;
  token_usage usage;
  std::chrono::milliseconds latency{0};
};

/// A proportion's 95 % Wilson score interval; [0, 1] when `n` is 0.
struct proportion_interval {
  double low = 0;
  double high = 1;
};
[[nodiscard]] proportion_interval wilson_interval(std::uint64_t successes, std::uint64_t n, double z = 1.959964);

/// The counts of a run.
struct eval_summary {
  std::uint64_t letters = 0;        ///< letters among the cases
  std::uint64_t evaluated = 0;      ///< letters asked and judged
  std::uint64_t fixed = 0;          ///< of them, accepted now
  std::uint64_t not_evaluable = 0;  ///< letters that could not be asked
  std::uint64_t controls = 0;
  std::uint64_t controls_evaluated = 0;
  std::uint64_t regressed = 0;  ///< controls whose answer fails now
  std::uint64_t not_asked = 0;  ///< letters and controls left when the budget was spent
  std::uint64_t call_failed = 0;
  /// Letters by failure category before, then "accepted" or the category now.
  std::map<std::string, std::map<std::string, std::uint64_t>> matrix;
  /// Controls that fail now, by the category they fail with.
  std::map<std::string, std::uint64_t> regressions;
  token_usage usage;
  std::uint64_t calls = 0;
  std::chrono::milliseconds latency_p50{0};
  std::chrono::milliseconds latency_p95{0};

  [[nodiscard]] proportion_interval fixed_interval() const { return wilson_interval(fixed, evaluated); }
  [[nodiscard]] proportion_interval regressed_interval() const {
    return wilson_interval(regressed, controls_evaluated);
  }
};

[[nodiscard]] eval_summary summarize(std::span<const eval_result> results);

struct evaluator_options {
  std::string model;  ///< the candidate model; empty: the model each case names
  std::optional<std::int64_t> max_tokens = 2048;
  std::optional<double> temperature;
  /// How the provider takes the schema: sent lowered for it, the nulls its
  /// lowering forced read as absent, as the recovery ladder does.
  provider_profile provider = provider_profile::full;
  bool send_schema = true;  ///< ask for structured output with the schema
  /// How answers are judged: as the pipeline judges its responses (repair
  /// policy, coercion, confidence, guard, code prefix). Nothing is stored.
  process_config judge;
  /// Stops asking once the calls made spent this many tokens (0: no limit);
  /// calls in flight finish, so a run may spend a little more.
  std::int64_t token_budget = 0;
  double rate = 0;  ///< calls per second over all clients (0: no limit)
  clock_function clock = system_now;
  std::function<void(std::chrono::milliseconds)> sleep;  ///< empty: std::this_thread::sleep_for
};

/// Asks a candidate for each case and judges the answers.
class evaluator {
 public:
  /// `schema_json`: the schema answers must pass, compiled with `compile`.
  [[nodiscard]] static expected<evaluator, schema_error> create(std::string_view schema_json, prompt_template prompt,
                                                                evaluator_options options = {},
                                                                compile_options compile = {});

  evaluator(evaluator&&) noexcept;
  evaluator& operator=(evaluator&&) noexcept;
  ~evaluator();

  /// Asks each evaluable case once, `clients.size()` calls in flight (one
  /// per client, each on a thread of its own: a client makes one call at a
  /// time), and returns the results in the order of `cases`. `on_result`
  /// (when set) gets each result as it is judged, from the clients'
  /// threads, one call at a time.
  [[nodiscard]] std::vector<eval_result> run(std::span<const eval_case> cases, std::span<llm_client* const> clients,
                                             const std::function<void(const eval_result&)>& on_result = {}) const;

 private:
  struct impl;
  explicit evaluator(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
