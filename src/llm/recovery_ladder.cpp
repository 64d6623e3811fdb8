// SPDX-License-Identifier: MIT
#include "llmdlq/llm/recovery_ladder.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "llmdlq/detail/counted.hpp"
#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/llm/token_budget.hpp"
#include "llmdlq/repair.hpp"
#include "llmdlq/provider_schema.hpp"
#include "llmdlq/stream_judge.hpp"

LLMDLQ_BEGIN_NAMESPACE

std::string_view to_string(recovery_step_kind kind) noexcept {
  switch (kind) {
    case recovery_step_kind::local_repair: return "local_repair";
    case recovery_step_kind::repair_prompt: return "repair_prompt";
    case recovery_step_kind::escalate_model: return "escalate_model";
    case recovery_step_kind::relax_schema: return "relax_schema";
    case recovery_step_kind::revalidate: return "revalidate";
    case recovery_step_kind::stop: return "stop";
  }
  return "stop";
}

std::string_view to_string(stop_reason reason) noexcept {
  switch (reason) {
    case stop_reason::recovered: return "recovered";
    case stop_reason::relaxed: return "relaxed";
    case stop_reason::poison: return "poison";
    case stop_reason::policy: return "policy";
    case stop_reason::held: return "held";
    case stop_reason::human_review: return "human_review";
    case stop_reason::exhausted: return "exhausted";
    case stop_reason::fingerprint_repeated: return "fingerprint_repeated";
    case stop_reason::truncation_limit: return "truncation_limit";
    case stop_reason::payload_budget_spent: return "payload_budget_spent";
    case stop_reason::no_model: return "no_model";
    case stop_reason::window_budget_spent: return "window_budget_spent";
    case stop_reason::circuit_open: return "circuit_open";
    case stop_reason::throttled: return "throttled";
    case stop_reason::call_failed: return "call_failed";
    case stop_reason::call_rejected: return "call_rejected";
    case stop_reason::call_waiting: return "call_waiting";
    case stop_reason::request_refused: return "request_refused";
  }
  return "held";
}

stop_effect effect_of(stop_reason reason) noexcept {
  switch (reason) {
    case stop_reason::recovered:
    case stop_reason::relaxed: return stop_effect::recovered;
    case stop_reason::exhausted:
    case stop_reason::fingerprint_repeated:
    case stop_reason::truncation_limit:
    case stop_reason::payload_budget_spent:
    case stop_reason::call_rejected: return stop_effect::exhausted;
    case stop_reason::poison:
    case stop_reason::policy:
    case stop_reason::held:
    case stop_reason::human_review:
    case stop_reason::no_model: return stop_effect::unchanged;
    case stop_reason::window_budget_spent:
    case stop_reason::circuit_open:
    case stop_reason::throttled:
    case stop_reason::call_failed:
    case stop_reason::call_waiting:
    case stop_reason::request_refused: return stop_effect::later;
  }
  return stop_effect::unchanged;
}

std::string error_fingerprint(const failure_details& failure) {
  // A cut-off or empty answer says nothing about repeating errors: the next
  // attempt has more room or another model.
  if (failure.errors.empty() && !failure.syntax) return {};
  std::set<std::string> parts;
  if (failure.syntax) parts.insert("syntax@" + std::to_string(failure.syntax->offset));
  for (const auto& e : failure.errors) parts.insert(e.keyword + '\x1f' + e.schema_path + '\x1f' + e.instance_path);
  std::string text(to_string(failure.category));
  for (const auto& part : parts) {
    text.push_back('\x1e');
    text += part;
  }
  return detail::sha256_hex(text).substr(0, 16);
}

namespace {

// History outcomes (attempt_record::outcome) the ladder writes.
constexpr std::string_view outcome_recovered = "recovered";
constexpr std::string_view outcome_relaxed = "relaxed";
constexpr std::string_view outcome_call_failed = "call_failed";  // no model answered: not counted
// Written before a call and replaced by its outcome after: left only by a
// process that died during the call, which counts (the model may have answered).
constexpr std::string_view outcome_call_started = "call_started";

bool is_model_step(std::string_view strategy) {
  return strategy == to_string(recovery_step_kind::repair_prompt) ||
         strategy == to_string(recovery_step_kind::escalate_model);
}

bool has_strategy(const envelope& e, recovery_step_kind kind) {
  return std::any_of(e.attempts.history.begin(), e.attempts.history.end(),
                     [&](const attempt_record& a) { return a.strategy == to_string(kind); });
}

std::uint32_t model_calls(const envelope& e) {
  return static_cast<std::uint32_t>(std::count_if(e.attempts.history.begin(), e.attempts.history.end(),
                                                  [](const attempt_record& a) {
                                                    return weight_of(a) == attempt_weight::counted;
                                                  }));
}

std::int64_t tokens_spent(const envelope& e) {
  std::int64_t total = 0;
  for (const auto& a : e.attempts.history) total += std::max<std::int64_t>(a.tokens, 0);
  return total;
}

// The stored response, when it is whole and readable text.
std::optional<std::string_view> stored_text(const envelope& e) {
  if (!e.raw_response.text || e.raw_response.base64 || e.raw_response.cut) return std::nullopt;
  return std::string_view(*e.raw_response.text);
}

// Written under another version: both name one, and they differ.
bool versions_drifted(const envelope& e, const version_set& current) {
  const auto differs = [](const std::string& then, const std::string& now) {
    return !then.empty() && !now.empty() && then != now;
  };
  return differs(e.versions.schema, current.schema) || differs(e.versions.prompt, current.prompt);
}

recovery_step stop_with(stop_reason reason, std::string detail) {
  return {recovery_step_kind::stop, reason, {}, std::nullopt, std::move(detail)};
}

// What a model-step outcome says about the answer, for the history.
std::string outcome_of(const envelope& failed) { return std::string(to_string(failed.failure.category)); }

// One step being taken: the letter, what the run has gathered, and the
// attempt the step adds to the letter's history.
// What a call may spend at most, as far as is known before it is made: its
// answer's max_tokens, and its prompt at a token per four bytes.
std::int64_t most_spent_by(const llm_request& request) {
  std::int64_t bytes = 0;
  for (const auto& message : request.messages) bytes += static_cast<std::int64_t>(message.content.size());
  return request.max_tokens.value_or(0) + bytes / 4;
}

struct step_run {
  envelope& e;
  const recovery_step& step;
  recovery_result& result;
  llm_client& client;  // who makes a model step's call
  attempt_record record;

  // The attempt goes into the history with `outcome`.
  void write_down(std::string_view outcome) {
    record.outcome = std::string(outcome);
    e.attempts.history.push_back(std::move(record));
  }
  recovery_step recovered(std::string output) {
    write_down(outcome_recovered);
    result.output = std::move(output);
    return stop_with(stop_reason::recovered, "recovered by " + std::string(to_string(step.kind)));
  }
  // A judged text that failed again: the failure goes into the history.
  void write_down(const envelope& failed) {
    record.fingerprint = error_fingerprint(failed.failure);
    write_down(outcome_of(failed));
  }
  // Another failure of this payload, from a model's answer.
  void count_failure() {
    ++e.attempts.count;
    e.attempts.last_failure_at = record.at;
  }
};

recovery_step wait_for(recovery_result& result, std::chrono::milliseconds wait, stop_reason reason,
                       std::string detail) {
  result.retry_after = wait;
  return stop_with(reason, std::move(detail));
}

template <class Duration>
std::chrono::milliseconds as_ms(Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

// A model call being made: where it goes, and what the replay state said of
// this payload and this endpoint before it.
struct model_call {
  std::string endpoint;
  std::string key;  // endpoint and model: the backoff's slot
  std::string payload_key;
  std::string endpoint_key;
  call_hold payload_hold;
  call_hold endpoint_hold;
  timestamp now;
  timestamp not_before;
};

}  // namespace

struct recovery_ladder::impl {
  llm_client* client;
  recovery_ladder_options options;
  schema compiled;
  boost::json::value schema_json;
  std::string schema_text;
  std::string schema_compact;  // for repair prompts
  lowered_schema sent;         // the schema as the provider takes it
  circuit_breaker breaker;
  token_budget window;
  std::mutex mutex;  // guards what follows
  std::mt19937_64 random{std::random_device{}()};
  std::map<std::string, std::pair<std::uint32_t, timestamp>, std::less<>>
      backing_off;  // endpoint+model: failures, not before

  impl(llm_client& c, recovery_ladder_options o, schema s, boost::json::value json, std::string text,
       lowered_schema lowered)
      : client(&c),
        options(std::move(o)),
        compiled(std::move(s)),
        schema_json(std::move(json)),
        schema_text(std::move(text)),
        schema_compact(boost::json::serialize(schema_json)),
        sent(std::move(lowered)),
        breaker(options.breaker, options.clock),
        window(options.window_token_budget, options.budget_window, options.clock) {
    if (!options.clock) options.clock = system_now;
  }

  void sleep(std::chrono::milliseconds d) const {
    if (d.count() <= 0) return;
    if (options.sleep) {
      options.sleep(d);
    } else {
      std::this_thread::sleep_for(d);
    }
  }

  request_context context_for(const envelope& e, std::string_view model) const {
    request_context ctx;
    ctx.idempotency_key = e.idempotency_key;
    ctx.record_id = e.record_id;
    ctx.correlation_id = e.correlation_id;
    ctx.trace_id = e.trace_id;
    ctx.source_ref = e.source_ref;
    ctx.prompt = e.prompt;
    ctx.model = e.model;
    if (!model.empty()) ctx.model.name = std::string(model);
    ctx.versions = e.versions;
    if (!options.current_versions.schema.empty()) ctx.versions.schema = options.current_versions.schema;
    if (!options.current_versions.prompt.empty()) ctx.versions.prompt = options.current_versions.prompt;
    ctx.origin = e.origin;
    ctx.attempt = e.attempts.count;
    ctx.received_at = e.created_at;
    return ctx;
  }

  process_config judge_options() const {
    process_config o = options.judge;
    o.envelope.clock = options.clock;
    if (sent.nulls) o.judging.forced_nulls = sent.nulls;
    return o;
  }

  repair_prompt prompt_for(const envelope& e) const {
    // A letter stored before redaction (or by a host that turned it off) is
    // redacted here too: the model never sees what the redactor would remove.
    const redactor& redaction = options.judge.redaction;
    if (redaction.active() && e.raw_response.text && !e.raw_response.base64) {
      std::string redacted = redaction.redact_document(*e.raw_response.text, compiled.pii_paths());
      if (redacted != *e.raw_response.text) {
        envelope copy = e;
        copy.raw_response.text = std::move(redacted);
        return detail::build_repair_prompt(copy, schema_json, schema_compact, options.prompt);
      }
    }
    return detail::build_repair_prompt(e, schema_json, schema_compact, options.prompt);
  }

  // One function per step kind (recovery_ladder::take_step dispatches), and
  // a model step's call in its phases.
  std::optional<recovery_step> finish_local(step_run& run, expected<accepted, envelope> judged);
  std::optional<recovery_step> revalidate(step_run& run);
  std::optional<recovery_step> repair_locally(step_run& run);
  std::optional<recovery_step> relax_schema(step_run& run);
  std::optional<recovery_step> ask_model(step_run& run, replay_state* state, const call_journal& journal);
  std::optional<recovery_step> read_holds(step_run& run, model_call& call, replay_state* state);
  std::optional<recovery_step> wait_for_endpoint(step_run& run, model_call& call);
  std::optional<recovery_step> reserve_attempt(step_run& run, replay_state* state);
  std::optional<recovery_step> journal_call(step_run& run, replay_state* state, const call_journal& journal);
  std::optional<recovery_step> call_failed(step_run& run, const model_call& call, const call_error& error,
                                           replay_state* state);
  std::optional<recovery_step> judge_answer(step_run& run, const model_call& call, completion& c, stream_judge& judge,
                                            const repair_prompt& prompt, replay_state* state);
};

recovery_ladder::recovery_ladder(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
recovery_ladder::recovery_ladder(recovery_ladder&&) noexcept = default;
recovery_ladder& recovery_ladder::operator=(recovery_ladder&&) noexcept = default;
recovery_ladder::~recovery_ladder() = default;

expected<recovery_ladder, schema_error> recovery_ladder::create(std::string_view schema_json, llm_client& client,
                                                                recovery_ladder_options options) {
  auto compiled = schema::compile(schema_json, options.schema);
  if (!compiled) return unexpected(std::move(compiled.error()));
  boost::system::error_code ec;
  boost::json::value json = boost::json::parse(schema_json, ec);
  if (ec) return unexpected(schema_error{schema_errc::invalid_json, "", ec.message(), std::nullopt});
  std::string text(schema_json);
  auto lowered = lower_schema(json, options.provider);
  if (!lowered)
    return unexpected(schema_error{schema_errc::invalid_json, lowered.error().pointer, lowered.error().message,
                                   std::nullopt});
  return recovery_ladder(std::make_unique<impl>(client, std::move(options), std::move(*compiled), std::move(json),
                                                std::move(text), std::move(*lowered)));
}

const circuit_breaker& recovery_ladder::breaker() const noexcept { return impl_->breaker; }
const recovery_ladder_options& recovery_ladder::options() const noexcept { return impl_->options; }

repair_prompt recovery_ladder::prompt_for(const envelope& e) const { return impl_->prompt_for(e); }

namespace {

// A letter the ladder is done with: recovered or relaxed already, poison, or a refusal.
std::optional<recovery_step> settled(const envelope& e) {
  const auto& history = e.attempts.history;
  for (const auto& a : history) {
    if (a.outcome == outcome_recovered) return stop_with(stop_reason::recovered, "recovered by " + a.strategy);
    if (a.outcome == outcome_relaxed) return stop_with(stop_reason::relaxed, "accepted under relaxations");
  }
  const failure_category category = e.failure.category;
  if (category == failure_category::poison || e.triage.kind == triage_class::poison) {
    return stop_with(stop_reason::poison, "poison is never replayed");
  }
  if (category == failure_category::refusal || e.triage.kind == triage_class::policy) {
    return stop_with(stop_reason::policy, "a refusal is never asked again");
  }
  // An answer of an earlier attempt that was poison or a refusal ends it too.
  for (const auto& a : history) {
    if (a.outcome == to_string(failure_category::poison)) {
      return stop_with(stop_reason::poison, "an answer to a repair prompt was poison");
    }
    if (a.outcome == to_string(failure_category::refusal)) {
      return stop_with(stop_reason::policy, "the model refused a repair prompt");
    }
  }
  return std::nullopt;
}

// The same errors twice (the stored failure, then each answer): asking again will not help.
bool fingerprint_repeated(const envelope& e) {
  const auto& history = e.attempts.history;
  const bool answered = std::any_of(history.begin(), history.end(), [](const attempt_record& a) {
    return is_model_step(a.strategy) && !a.fingerprint.empty();
  });
  std::string previous = answered ? error_fingerprint(e.failure) : std::string();
  for (const auto& a : history) {
    if (!is_model_step(a.strategy) || a.fingerprint.empty()) continue;
    if (!previous.empty() && a.fingerprint == previous) return true;
    previous = a.fingerprint;
  }
  return false;
}

// A truncated answer is asked for again only with more room: double the
// limit it was cut at, each time, up to the ceiling.
recovery_step with_more_room(recovery_step step, const envelope& e, std::uint32_t made,
                             const recovery_ladder_options& o) {
  const auto& history = e.attempts.history;
  const std::int64_t cut_at = e.model.max_tokens.value_or(o.max_tokens / 2);
  const auto limit_for = [&](std::uint32_t attempt) {  // the limit of model attempt `attempt` (0-based)
    std::int64_t limit = std::max<std::int64_t>(cut_at, 1);
    for (std::uint32_t i = 0; i <= attempt; ++i) {
      limit = limit > o.max_tokens_ceiling / 2 ? std::max(o.max_tokens_ceiling, limit) : limit * 2;
    }
    return limit;
  };
  const std::int64_t limit = limit_for(made);
  // Cut off again at the last limit: the same limit would cut it again.
  const auto last_model = std::find_if(history.rbegin(), history.rend(),
                                       [](const attempt_record& a) { return weight_of(a) == attempt_weight::counted; });
  const std::int64_t previous_limit = made > 0 && last_model != history.rend() &&
                                              last_model->outcome == to_string(failure_category::truncated)
                                          ? limit_for(made - 1)
                                          : cut_at;
  if (limit <= previous_limit) {
    return stop_with(stop_reason::truncation_limit,
                     fmt::format("cut off at {} tokens, and the ceiling is {}", previous_limit, o.max_tokens_ceiling));
  }
  step.max_tokens = limit;
  step.detail = fmt::format("cut off: ask again with max_tokens {}", limit);
  return step;
}

// The step after the zero-token ones, for a letter a model may be asked about.
recovery_step model_step(const envelope& e, std::uint32_t attempts_made, bool contract_changed, bool can_relax,
                         const recovery_ladder_options& o) {
  const failure_category category = e.failure.category;
  const auto relax_or = [&](stop_reason reason, std::string detail) -> recovery_step {
    if (can_relax) {
      return {recovery_step_kind::relax_schema, {}, {}, std::nullopt, detail + "; the pipeline declared relaxations"};
    }
    return stop_with(reason, std::move(detail));
  };
  if (category == failure_category::semantic || category == failure_category::low_confidence) {
    return relax_or(stop_reason::human_review, "ambiguous: a person judges it");
  }
  if (category == failure_category::schema && !contract_changed) {
    return relax_or(stop_reason::held, "deterministic: held until the schema or prompt version changes");
  }
  const std::uint32_t made = std::max(attempts_made, model_calls(e));
  if (made >= o.max_attempts) {
    return relax_or(stop_reason::exhausted, fmt::format("{} of {} automated attempts made", made, o.max_attempts));
  }
  if (fingerprint_repeated(e)) {
    return relax_or(stop_reason::fingerprint_repeated, "an answer failed with the same errors as before");
  }
  const std::int64_t spent = tokens_spent(e);
  if (o.payload_token_budget > 0 && spent >= o.payload_token_budget) {
    return relax_or(stop_reason::payload_budget_spent,
                    fmt::format("{} of {} tokens spent on this payload", spent, o.payload_token_budget));
  }
  recovery_step step;
  const bool escalate = made > 0 && !o.escalation_model.empty();
  step.kind = escalate ? recovery_step_kind::escalate_model : recovery_step_kind::repair_prompt;
  step.model = escalate ? o.escalation_model : (o.model.empty() ? e.model.name : o.model);
  if (step.model.empty()) return relax_or(stop_reason::no_model, "no model to ask");
  if (category == failure_category::truncated) return with_more_room(std::move(step), e, made, o);
  step.max_tokens = e.model.max_tokens.value_or(o.max_tokens);
  step.detail = escalate ? "a stronger model, with the same repair prompt" : "an isolated repair prompt";
  return step;
}

}  // namespace

recovery_step recovery_ladder::next_step(const envelope& e, std::uint32_t attempts_made) const {
  const recovery_ladder_options& o = impl_->options;
  if (auto done = settled(e)) return *done;
  const auto text = stored_text(e);
  const bool drifted = versions_drifted(e, o.current_versions);
  const bool revalidated = has_strategy(e, recovery_step_kind::revalidate);
  if (drifted && text && !revalidated) {
    return {recovery_step_kind::revalidate,
            {},
            {},
            std::nullopt,
            "written under other schema or prompt versions: judge it again at zero tokens"};
  }
  if (text && e.triage.action == recommended_action::local_repair &&
      !has_strategy(e, recovery_step_kind::local_repair)) {
    return {recovery_step_kind::local_repair, {}, {}, std::nullopt, "repair the stored response at zero tokens"};
  }
  const failure_category category = e.failure.category;
  const bool can_relax = o.relaxation.any() && text && !has_strategy(e, recovery_step_kind::relax_schema) &&
                         (category == failure_category::schema || category == failure_category::semantic);
  return model_step(e, attempts_made, drifted || revalidated, can_relax, o);
}

std::optional<recovery_step> recovery_ladder::run_step(envelope& e, const recovery_step& step, recovery_result& result,
                                                       replay_state* state, const call_journal& journal,
                                                       llm_client* client) {
  auto stop = take_step(e, step, result, state, journal, client != nullptr ? *client : *impl_->client);
  if (const auto& m = impl_->options.metrics) {
    m->count_replay(to_string(step.kind), stop ? to_string(stop->reason) : std::string_view("continued"));
  }
  return stop;
}

std::optional<recovery_step> recovery_ladder::take_step(envelope& e, const recovery_step& step, recovery_result& result,
                                                        replay_state* state, const call_journal& journal,
                                                        llm_client& client) {
  result.steps.push_back(step);
  step_run run{e, step, result, client, {}};
  run.record.strategy = std::string(to_string(step.kind));
  run.record.at = impl_->options.clock();
  switch (step.kind) {
    case recovery_step_kind::stop: return step;
    case recovery_step_kind::revalidate: return impl_->revalidate(run);
    case recovery_step_kind::local_repair: return impl_->repair_locally(run);
    case recovery_step_kind::relax_schema: return impl_->relax_schema(run);
    case recovery_step_kind::repair_prompt:
    case recovery_step_kind::escalate_model: return impl_->ask_model(run, state, journal);
  }
  return step;
}

std::optional<recovery_step> recovery_ladder::impl::finish_local(step_run& run, expected<accepted, envelope> judged) {
  if (judged) return run.recovered(std::move(judged->json));
  run.write_down(judged.error());
  return std::nullopt;
}

std::optional<recovery_step> recovery_ladder::impl::revalidate(step_run& run) {
  const impl& m = *this;
  const auto text = stored_text(run.e);
  if (!text) return stop_with(stop_reason::held, "the stored response is not whole");
  auto judged = process_llm_response(*text, m.compiled, m.context_for(run.e, {}), m.judge_options());
  if (!judged) {
    // Today's verdict replaces the old one: the failure, triage and versions are now current.
    envelope& now = judged.error();
    run.e.failure = now.failure;
    run.e.triage = now.triage;
    run.e.versions = now.versions;
  }
  return finish_local(run, std::move(judged));
}

std::optional<recovery_step> recovery_ladder::impl::repair_locally(step_run& run) {
  const impl& m = *this;
  const auto text = stored_text(run.e);
  if (!text) return stop_with(stop_reason::held, "the stored response is not whole");
  process_config judge = m.judge_options();
  judge.judging.repair = repair_mode::local;
  return finish_local(run, process_llm_response(*text, m.compiled, m.context_for(run.e, {}), judge));
}

std::optional<recovery_step> recovery_ladder::impl::relax_schema(step_run& run) {
  const impl& m = *this;
  const auto text = stored_text(run.e);
  if (!text) return stop_with(stop_reason::held, "the stored response is not whole");
  boost::system::error_code ec;
  boost::json::value doc = boost::json::parse(*text, ec);
  if (ec) {
    auto repaired = repair(*text);
    if (repaired && !repaired->truncated) doc = boost::json::parse(repaired->json, ec);
    if (!repaired || repaired->truncated || ec) {
      run.write_down("syntax");
      return stop_with(stop_reason::exhausted, "the stored response is not JSON: nothing to relax");
    }
  }
  validate_options rules;
  rules.now = m.options.clock();  // content rules, as process_llm_response judges them
  auto relaxed = relax(doc, m.compiled, m.options.relaxation, rules);
  if (!relaxed) {
    run.write_down("failed");
    const bool deterministic = run.e.failure.category == failure_category::schema;
    return stop_with(deterministic ? stop_reason::held : stop_reason::human_review,
                     "relaxation does not cover it: " + relaxed.error().message);
  }
  run.write_down(outcome_relaxed);
  run.result.output = std::move(relaxed->json);
  run.result.dropped_paths = std::move(relaxed->dropped_paths);
  run.result.waived_paths = std::move(relaxed->waived_paths);
  return stop_with(stop_reason::relaxed, "accepted under the declared relaxations");
}

std::optional<recovery_step> recovery_ladder::impl::ask_model(step_run& run, replay_state* state,
                                                              const call_journal& journal) {
  impl& m = *this;
  model_call call;
  call.endpoint = run.client.endpoint();
  call.key = call.endpoint + '\n' + run.step.model;
  call.payload_key = payload_hold_key(run.e.idempotency_key);
  call.endpoint_key = endpoint_hold_key(call.endpoint, run.step.model);
  call.now = call.not_before = m.options.clock();
  const repair_prompt prompt = prompt_for(run.e);
  llm_request request;
  request.model = run.step.model;
  request.messages = prompt.messages();
  request.max_tokens = run.step.max_tokens;
  request.temperature = m.options.temperature;
  if (m.options.send_schema) {
    request.json_schema = m.options.provider == provider_profile::full ? m.schema_text : m.sent.text();
    request.strict = m.sent.strict;
  }
  if (auto stop = read_holds(run, call, state)) return stop;
  if (auto stop = wait_for_endpoint(run, call)) return stop;
  // The window counts what the calls in flight may still spend, so that calls made together stay within it.
  const token_budget::share spending = m.window.reserve(most_spent_by(request));
  if (!spending.admitted()) {
    return wait_for(run.result, as_ms(m.options.budget_window), stop_reason::window_budget_spent,
                    "the tokens of this time window are spent, or held by the calls in flight");
  }
  if (auto stop = reserve_attempt(run, state)) return stop;
  run.record.model = run.step.model;
  if (auto stop = journal_call(run, state, journal)) return stop;
  // Streamed where the client can: an answer found dead is cut there, and
  // the rest is not paid for.
  stream_judge judge(m.compiled, {}, m.judge_options());
  auto answer = run.client.complete_streamed(request, judge);
  ++run.result.calls;
  if (!answer) return call_failed(run, call, answer.error(), state);
  return judge_answer(run, call, *answer, judge, prompt, state);
}

// What earlier runs and other processes were told, when a state keeps it.
std::optional<recovery_step> recovery_ladder::impl::read_holds(step_run& run, model_call& call, replay_state* state) {
  if (state == nullptr) return std::nullopt;
  const recovery_ladder_options& o = options;
  auto held = state->hold(call.payload_key);
  auto at_endpoint = held ? state->hold(call.endpoint_key) : held;
  if (!held || !at_endpoint) {
    return wait_for(run.result, std::chrono::seconds(1), stop_reason::call_failed,
                    "the replay state is unavailable: " + (!held ? held : at_endpoint).error().message);
  }
  call.payload_hold = std::move(*held);
  call.endpoint_hold = std::move(*at_endpoint);
  const call_hold& payload = call.payload_hold;
  if (payload.failures >= o.max_call_failures) {
    return stop_with(stop_reason::exhausted,
                     fmt::format("{} in a row got no completion (the last: {})",
                                 detail::counted(payload.failures, "call"), payload.last_error));
  }
  if (payload.not_before && *payload.not_before > call.now) {
    return wait_for(run.result, as_ms(*payload.not_before - call.now), stop_reason::call_waiting,
                    fmt::format("its last call got no completion ({}); it waits until {}", payload.last_error,
                                format_rfc3339(*payload.not_before)));
  }
  const call_hold& endpoint = call.endpoint_hold;
  if (endpoint.not_before && *endpoint.not_before > call.now) {
    if (endpoint.failures >= o.breaker.failure_threshold) {
      return wait_for(run.result, as_ms(*endpoint.not_before - call.now), stop_reason::circuit_open,
                      fmt::format("the circuit of {} is open after {} in a row", run.step.model,
                                  detail::counted(endpoint.failures, "failed call")));
    }
    call.not_before = *endpoint.not_before;
  }
  return std::nullopt;
}

// The breaker and the backoff.
std::optional<recovery_step> recovery_ladder::impl::wait_for_endpoint(step_run& run, model_call& call) {
  impl& m = *this;
  if (auto refusal = m.breaker.admit(call.endpoint, run.step.model)) {
    if (refusal->reason == call_refusal::reason_kind::circuit_open) {
      return wait_for(run.result, as_ms(refusal->until - call.now), stop_reason::circuit_open,
                      "the circuit of " + run.step.model + " is open");
    }
    call.not_before = std::max(call.not_before, refusal->until);
  }
  {
    const std::lock_guard lock(m.mutex);
    if (const auto it = m.backing_off.find(call.key); it != m.backing_off.end()) {
      call.not_before = std::max(call.not_before, it->second.second);
    }
  }
  if (call.not_before > call.now) {
    const auto wait = as_ms(call.not_before - call.now);
    if (wait > m.options.max_wait) {
      return wait_for(run.result, wait, stop_reason::throttled,
                      fmt::format("the endpoint asked to wait {} ms", wait.count()));
    }
    m.sleep(wait);
  }
  return std::nullopt;
}

std::optional<recovery_step> recovery_ladder::impl::reserve_attempt(step_run& run, replay_state* state) {
  if (state == nullptr) return std::nullopt;
  auto reserved = state->reserve_attempt(run.e.idempotency_key, options.max_attempts);
  if (reserved) return std::nullopt;
  if (reserved.error().code == replay_state_errc::attempts_exhausted) {
    return stop_with(stop_reason::exhausted, "the store counts every automated attempt as made");
  }
  return wait_for(run.result, std::chrono::seconds(1), stop_reason::call_failed,
                  "the replay state is unavailable: " + reserved.error().message);
}

// The call is written down before it is made: a process that dies during it
// leaves a `call_started` attempt, which counts.
std::optional<recovery_step> recovery_ladder::impl::journal_call(step_run& run, replay_state* state,
                                                                 const call_journal& journal) {
  if (!journal) return std::nullopt;
  auto& history = run.e.attempts.history;
  history.push_back(run.record);
  history.back().outcome = std::string(outcome_call_started);
  const bool written = journal(run.e);
  history.pop_back();
  if (written) return std::nullopt;
  if (state != nullptr) (void)state->release_attempt(run.e.idempotency_key);
  return wait_for(run.result, std::chrono::seconds(1), stop_reason::call_failed,
                  "the call could not be written down before it was made");
}

std::optional<recovery_step> recovery_ladder::impl::call_failed(step_run& run, const model_call& call,
                                                                const call_error& error, replay_state* state) {
  impl& m = *this;
  const recovery_ladder_options& o = m.options;
  run.record.latency_ms = error.latency.count();
  run.record.at = o.clock();
  if (error.decision.verdict == call_verdict::dead_letter) {
    run.write_down("call_rejected");
    return stop_with(stop_reason::call_rejected, "the request cannot succeed: " + error.decision.reason);
  }
  if (error.decision.verdict == call_verdict::fix_request) {
    // Not this letter's fault: it keeps its attempt and waits for the configuration to change.
    run.write_down("request_refused");
    if (state != nullptr) (void)state->release_attempt(run.e.idempotency_key);
    return stop_with(stop_reason::request_refused,
                     fmt::format("the provider refuses the request itself ({}{}): {}; fix the request (the schema as "
                                 "sent, --provider, a parameter) and run again",
                                 error.decision.reason,
                                 error.http_status ? fmt::format(", HTTP {}", *error.http_status) : std::string(),
                                 error.message));
  }
  // No model answered: the attempt is given back, and the next call to this endpoint waits.
  run.write_down(outcome_call_failed);
  if (state != nullptr) (void)state->release_attempt(run.e.idempotency_key);
  const timestamp after = o.clock();
  std::chrono::milliseconds wait{};
  {
    const std::lock_guard lock(m.mutex);
    auto& [failures, until] = m.backing_off[call.key];
    wait = full_jitter_backoff(failures++, o.backoff, m.random);
    if (error.decision.retry_after) wait = std::max(wait, *error.decision.retry_after);
    until = after + wait;
  }
  run.result.retry_after = wait;
  const bool rate_limited = error.decision.reason == "rate_limited";
  if (state != nullptr) {
    // The payload waits at least the backoff's ceiling for its failures so far, so a next run does not ask
    // again at once; the endpoint waits what it said, or the cool-down once the breaker's threshold is met.
    const std::string what = error.decision.reason + ": " + error.message;
    const auto payload_wait = std::max(wait, backoff_ceiling(call.payload_hold.failures, o.backoff));
    (void)state->record_call_failure(call.payload_key, after + payload_wait, what);
    const bool opens = !rate_limited && call.endpoint_hold.failures + 1 >= o.breaker.failure_threshold;
    (void)state->record_call_failure(call.endpoint_key, after + (opens ? std::max(wait, o.breaker.cool_down) : wait),
                                     what);
  }
  if (rate_limited) {
    m.breaker.record_throttle(call.endpoint, run.step.model, after + wait);
    return stop_with(stop_reason::throttled, "rate limited: " + error.message);
  }
  m.breaker.record_failure(call.endpoint, run.step.model);
  return stop_with(stop_reason::call_failed, error.decision.reason + ": " + error.message);
}

// A completion came: the endpoint is healthy again, its tokens are counted,
// and the answer is judged as a worker would judge it.
std::optional<recovery_step> recovery_ladder::impl::judge_answer(step_run& run, const model_call& call, completion& c,
                                                                 stream_judge& judge, const repair_prompt& prompt,
                                                                 replay_state* state) {
  impl& m = *this;
  m.breaker.record_success(call.endpoint, run.step.model);
  if (state != nullptr) {
    if (call.payload_hold.failures > 0) (void)state->clear_hold(call.payload_key);
    if (call.endpoint_hold.failures > 0) (void)state->clear_hold(call.endpoint_key);
  }
  {
    const std::lock_guard lock(m.mutex);
    m.backing_off.erase(call.key);
  }
  m.window.spend(c.usage.total());
  run.result.usage += c.usage;
  run.record.tokens = c.usage.total();
  run.record.latency_ms = c.latency.count();
  if (!c.model.empty()) run.record.model = c.model;
  if (m.options.metrics) {
    m.options.metrics->count_tokens(run.record.model,
                                    static_cast<std::uint64_t>(std::max<std::int64_t>(c.usage.prompt_tokens, 0)),
                                    static_cast<std::uint64_t>(std::max<std::int64_t>(c.usage.completion_tokens, 0)));
  }
  if (auto breakout = find_breakout(c.text, prompt)) {
    run.count_failure();
    run.write_down(to_string(failure_category::poison));
    return stop_with(stop_reason::poison, *breakout);
  }
  request_context ctx = m.context_for(run.e, run.record.model);
  ctx.finish_reason = c.finish_reason;
  ctx.refusal = c.refusal;
  ctx.model.max_tokens = run.step.max_tokens;
  ctx.cancelled_at = judge.context().cancelled_at;
  judge.context() = std::move(ctx);
  auto judged = judge.finish();  // process_llm_response over the answer received
  if (judged) return run.recovered(std::move(judged->json));
  const failure_category answer_category = judged.error().failure.category;
  run.count_failure();
  run.write_down(judged.error());
  if (answer_category == failure_category::poison) return stop_with(stop_reason::poison, "the answer is poison");
  if (answer_category == failure_category::refusal) return stop_with(stop_reason::policy, "the model refused");
  return std::nullopt;
}

recovery_result recovery_ladder::run(envelope& e, replay_state* state, const call_journal& journal,
                                     llm_client* client) {
  recovery_result result;
  std::uint32_t made = 0;
  if (state != nullptr) {
    if (auto count = state->attempts(e.idempotency_key)) made = *count;
  }
  // Each model step spends an attempt and local steps run once each, so
  // this ends; the bound is a second guard.
  for (int steps = 0; steps < 16; ++steps) {
    const recovery_step step = next_step(e, made);
    if (auto stop = run_step(e, step, result, state, journal, client)) {
      result.reason = stop->reason;
      result.detail = std::move(stop->detail);
      if (step.kind != recovery_step_kind::stop) result.steps.push_back(*stop);
      return result;
    }
    if (state != nullptr &&
        (step.kind == recovery_step_kind::repair_prompt || step.kind == recovery_step_kind::escalate_model)) {
      ++made;
    }
  }
  result.reason = stop_reason::exhausted;
  result.detail = "too many steps";
  return result;
}

LLMDLQ_END_NAMESPACE
