// SPDX-License-Identifier: MIT
#include "llmdlq/llm/replayer.hpp"

#include "llmdlq/llm/recovery_ladder.hpp"

#include <algorithm>
#include <thread>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "llmdlq/detail/counted.hpp"
#include "llmdlq/detail/lease_owner.hpp"
#include "run_support.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

bool selects(const std::vector<std::string>& wanted, std::string_view value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

bool is_zero_token(recovery_step_kind kind) {
  return kind == recovery_step_kind::local_repair || kind == recovery_step_kind::revalidate ||
         kind == recovery_step_kind::relax_schema;
}

// A later that holds back this letter only (its call got no completion, and
// the state keeps its wait): the run goes on with the others, whose calls
// wait for the endpoint or stop the run when it says so before a call.
bool waits_alone(const recovery_result& result) {
  if (result.reason == stop_reason::call_waiting) return true;
  return result.calls > 0 && (result.reason == stop_reason::call_failed || result.reason == stop_reason::throttled);
}

constexpr std::size_t sample_text_bytes = 512;

// The ledger's `source` of what replays write.
constexpr std::string_view replay_source_name = "replay";

std::string text_prefix(const envelope& e) {
  if (!e.raw_response.text) return {};
  std::string_view text = *e.raw_response.text;
  if (text.size() <= sample_text_bytes) return std::string(text);
  std::size_t end = sample_text_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "…";
}

}  // namespace

bool replay_filter::matches(const envelope& e) const {
  return selects(categories, to_string(e.failure.category)) && selects(triage_classes, to_string(e.triage.kind)) &&
         selects(codes, e.failure.code) && selects(dlq_ids, e.dlq_id) &&
         (schema_version.empty() || e.versions.schema == schema_version) &&
         (prompt_version.empty() || e.versions.prompt == prompt_version) &&
         (model_version.empty() || e.versions.model == model_version) && (!since || e.created_at >= *since) &&
         (!until || e.created_at < *until);
}

replayer::replayer(recovery_ladder& ladder, replay_source& source, replay_state& state, replayer_options options)
    : ladder_(&ladder), source_(&source), state_(&state), options_(std::move(options)) {
  if (options_.owner.empty()) options_.owner = detail::default_lease_owner();
  if (!options_.clock) options_.clock = system_now;
  if (options_.batch == 0) options_.batch = 1;
}

namespace {

// How a letter's turn ends: the run goes on to the next letter, or ends here.
enum class turn : std::uint8_t { next, stop };
using turn_result = expected<turn, replay_error>;

using detail::failed;
using detail::state_answer;

// One replayer::run: the lease, the cursor, the pace and the summary, and
// one function per thing a letter's turn can be.
class replay_run {
 public:
  replay_run(recovery_ladder& ladder, replay_source& source, replay_state& state, replay_target* target,
             const replayer_options& options)
      : ladder_(ladder),
        source_(source),
        state_(state),
        target_(target),
        o_(options),
        lease_(state, o_.lease, o_.owner, o_.lease_ttl, o_.clock),
        pace_(o_.rate, o_.clock, o_.sleep) {
    summary_.dry_run = o_.dry_run;
  }
  replay_run(const replay_run&) = delete;
  replay_run& operator=(const replay_run&) = delete;
  ~replay_run() = default;

  expected<replay_summary, replay_error> run() {
    if (!o_.dry_run) {
      if (auto begun = take_lease_and_cursor(); !begun) return unexpected(begun.error());
      if (auto pending = deliver_pending(); !pending) return unexpected(pending.error());
    }
    while (true) {
      auto batch = source_.next(cursor_, o_.batch);
      if (!batch) return unexpected(failed("the source failed: ", std::move(batch.error())));
      if (batch->empty()) break;
      for (auto& stored : *batch) {
        auto ended = take_turn(stored);
        if (!ended) return unexpected(ended.error());
        if (*ended == turn::stop) return summary_;
      }
    }
    summary_.finished = true;
    // The whole source was read: the next replay starts from the beginning.
    if (!o_.dry_run) {
      if (auto moved = move_cursor(""); !moved) return unexpected(moved.error());
    }
    return summary_;
  }

 private:
  expected<void, replay_error> take_lease_and_cursor() {
    if (auto lease = lease_.take(); !lease) return lease;  // given back however the run ends
    auto stored = state_answer(state_.load_cursor(o_.name));
    if (!stored) return unexpected(std::move(stored.error()));
    cursor_ = stored->value_or("");
    return {};
  }

  expected<void, replay_error> deliver(const ledger_entry& entry) {
    if (target_ == nullptr) return {};
    if (auto delivered = target_->deliver(entry); !delivered) {
      return unexpected(failed("the target refused a delivery: ", std::move(delivered.error())));
    }
    ++summary_.delivered;
    return state_answer(state_.mark_delivered(entry.idempotency_key));
  }

  // Payloads a killed replay recorded but did not deliver go first.
  expected<void, replay_error> deliver_pending() {
    if (target_ == nullptr) return {};
    while (true) {
      auto pending = state_answer(state_.undelivered(replay_source_name, o_.batch));
      if (!pending) return unexpected(std::move(pending.error()));
      if (pending->empty()) return {};
      for (const auto& entry : *pending) {
        if (auto done = deliver(entry); !done) return unexpected(done.error());
      }
    }
  }

  expected<void, replay_error> move_cursor(const std::string& position) {
    cursor_ = position;
    if (o_.dry_run) return {};
    return state_answer(state_.store_cursor(o_.lease, o_.owner, o_.name, cursor_));
  }

  // The letter is done with: the cursor moves past it.
  turn_result passed(const stored_letter& stored) {
    if (auto moved = move_cursor(stored.position); !moved) return unexpected(moved.error());
    return turn::next;
  }

  void report_progress() const {
    if (o_.progress) o_.progress({summary_.seen, ran_, cursor_, summary_.usage.total()});
  }

  turn_result take_turn(const stored_letter& stored) {
    if (o_.limit > 0 && ran_ >= o_.limit) {
      summary_.stopped_because = "the limit of " + detail::counted(o_.limit, "letter");
      return turn::stop;
    }
    ++summary_.seen;
    if (!o_.filter.matches(stored.letter)) return passed(stored);
    if (!stored.unreadable.empty()) return unreadable(stored);
    ++summary_.selected;
    ++ran_;
    // The payload went downstream already (the original, or another replay): never twice.
    auto written = state_answer(state_.find_output(stored.letter.idempotency_key));
    if (!written) return unexpected(std::move(written.error()));
    if (o_.dry_run) return preview(stored, written->has_value());
    // Relaxed by an earlier replay: downstream has it, and a person reviews what was waived.
    if (const auto decided = ladder_.next_step(stored.letter);
        decided.kind == recovery_step_kind::stop && decided.reason == stop_reason::relaxed) {
      ++summary_.held;
      ++summary_.by_outcome[std::string(to_string(stop_reason::relaxed))];
      return passed(stored);
    }
    pace_.pace();
    if (auto lease = lease_.keep(); !lease) return unexpected(lease.error());
    if (*written) return settle(stored, stored.letter, already_written(**written));
    return recover(stored);
  }

  // A letter that does not read back: skipped, counted and named; it blocks no other.
  turn_result unreadable(const stored_letter& stored) {
    ++summary_.unreadable;
    unreadable_record letter{stored.letter.dlq_id, stored.unreadable};
    if (o_.on_unreadable) o_.on_unreadable(letter);
    if (summary_.unreadable_letters.size() < max_listed_unreadable) {
      summary_.unreadable_letters.push_back(std::move(letter));
    }
    return passed(stored);
  }

  // A dry run: what the next step would be, with samples of zero-token steps' results.
  turn_result preview(const stored_letter& stored, bool written) {
    if (written) {
      ++summary_.by_outcome["duplicate"];
    } else {
      const auto made = state_.attempts(stored.letter.idempotency_key);
      const recovery_step step = ladder_.next_step(stored.letter, made ? *made : 0);
      ++summary_.by_outcome[std::string(step.kind == recovery_step_kind::stop ? to_string(step.reason)
                                                                              : to_string(step.kind))];
      if (summary_.samples.size() < o_.samples) {
        replay_sample sample{stored.letter.dlq_id, step, text_prefix(stored.letter), std::nullopt};
        if (is_zero_token(step.kind)) {
          envelope copy = stored.letter;
          recovery_result trial;
          (void)ladder_.run_step(copy, step, trial, nullptr);
          sample.after = std::move(trial.output);
        }
        summary_.samples.push_back(std::move(sample));
      }
    }
    cursor_ = stored.position;
    report_progress();
    return turn::next;
  }

  recovery_result already_written(const ledger_entry& written) {
    recovery_result result;
    result.reason = stop_reason::recovered;
    result.detail = "already written by " + written.source;
    result.output = written.output;
    ++summary_.duplicates;
    ++summary_.by_outcome["duplicate"];
    return result;
  }

  // The ladder runs on the letter, each call written down in the source before it is made.
  turn_result recover(const stored_letter& stored) {
    auto standing = source_.recheck(stored);
    if (!standing) return unexpected(failed("the source could not read a letter again: ", std::move(standing.error())));
    if (*standing != letter_standing::ours) return gone(stored, *standing);
    envelope letter = stored.letter;
    expected<letter_standing, replay_error> journaled = letter_standing::ours;
    recovery_result result = ladder_.run(letter, &state_, [&](const envelope& with_call) {
      journaled = source_.record_call(stored, with_call);
      return journaled && *journaled == letter_standing::ours;
    });
    if (!journaled) {
      return unexpected(failed("the source could not record a call before it: ", std::move(journaled.error())));
    }
    if (*journaled != letter_standing::ours) return gone(stored, *journaled);  // taken or purged just now: no call made
    summary_.usage += result.usage;
    summary_.calls += result.calls;
    ++summary_.by_outcome[std::string(to_string(result.reason))];
    if (auto counted = count_effect(letter, result); !counted) return unexpected(counted.error());
    return settle(stored, letter, std::move(result));
  }

  // Another process took or purged the letter.
  turn_result gone(const stored_letter& stored, letter_standing standing) {
    ++(standing == letter_standing::purged ? summary_.purged : summary_.superseded);
    return passed(stored);
  }

  expected<void, replay_error> count_effect(const envelope& letter, recovery_result& result) {
    switch (result.effect()) {
      case stop_effect::recovered: {
        auto entry = state_answer(state_.record_output(letter.idempotency_key, replay_source_name, letter.dlq_id,
                                                       *result.output));
        if (!entry) return unexpected(std::move(entry.error()));
        if (!entry->first) {
          ++summary_.duplicates;  // a late original won the race
          result.output = entry->output;
          return {};
        }
        ++summary_.recovered;
        return deliver(*entry);
      }
      case stop_effect::exhausted: ++summary_.exhausted; return {};
      case stop_effect::unchanged: ++summary_.held; return {};
      case stop_effect::later: return {};
    }
    return {};
  }

  // The source records the replay; an endpoint or budget that says later ends the run at this letter.
  turn_result settle(const stored_letter& stored, const envelope& letter, recovery_result result) {
    auto updated = source_.update(stored, letter, result);
    if (!updated) return unexpected(failed("the source could not record the replay: ", std::move(updated.error())));
    summary_.superseded += *updated == letter_standing::acted_on;
    summary_.purged += *updated == letter_standing::purged;
    if (result.effect() == stop_effect::later && !waits_alone(result)) {
      summary_.stopped_because = fmt::format("{}: {}", to_string(result.reason), result.detail);
      return turn::stop;  // the cursor stays: the next run resumes at this letter
    }
    if (auto moved = move_cursor(stored.position); !moved) return unexpected(moved.error());
    report_progress();
    return turn::next;
  }

  recovery_ladder& ladder_;
  replay_source& source_;
  replay_state& state_;
  replay_target* target_;
  const replayer_options& o_;
  replay_summary summary_;
  std::string cursor_;
  std::size_t ran_ = 0;
  detail::run_lease lease_;
  detail::run_pace pace_;
};

}  // namespace

expected<replay_summary, replay_error> replayer::run() {
  replay_run run(*ladder_, *source_, *state_, target_, options_);
  return run.run();
}

LLMDLQ_END_NAMESPACE
