// SPDX-License-Identifier: MIT
#include "llmdlq/llm/replayer.hpp"

#include "llmdlq/llm/recovery_ladder.hpp"

#include <unistd.h>

#include <algorithm>
#include <thread>
#include <utility>

#include <fmt/format.h>

LLMDLQ_BEGIN_NAMESPACE

namespace {

bool selects(const std::vector<std::string>& wanted, std::string_view value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

std::string default_owner() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}:{}", host, ::getpid());
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
  if (options_.owner.empty()) options_.owner = default_owner();
  if (!options_.clock) options_.clock = system_now;
  if (options_.batch == 0) options_.batch = 1;
}

expected<replay_summary, replay_state_error> replayer::run() {
  replayer_options& o = options_;
  replay_summary summary;
  summary.dry_run = o.dry_run;
  const auto sleep = [&](std::chrono::milliseconds d) {
    if (d.count() <= 0) return;
    if (o.sleep) {
      o.sleep(d);
    } else {
      std::this_thread::sleep_for(d);
    }
  };
  const auto fail = [](std::string message) {
    return unexpected(replay_state_error{replay_state_errc::store_unavailable, std::move(message), {}, {}});
  };

  std::string cursor;
  timestamp lease_taken{};
  if (!o.dry_run) {
    if (auto lease = state_->acquire_lease(o.lease, o.owner, o.lease_ttl); !lease) return unexpected(lease.error());
    lease_taken = o.clock();
    auto stored = state_->load_cursor(o.name);
    if (!stored) return unexpected(stored.error());
    cursor = stored->value_or("");
  }
  // Releases the lease however the run ends.
  struct lease_guard {
    replayer* self;
    bool held;
    ~lease_guard() {
      if (held) (void)self->state_->release_lease(self->options_.lease, self->options_.owner);
    }
  } guard{this, !o.dry_run};

  const auto deliver = [&](const ledger_entry& entry) -> expected<void, replay_state_error> {
    if (target_ == nullptr) return {};
    if (auto delivered = target_->deliver(entry); !delivered) {
      return fail("the target refused a delivery: " + delivered.error());
    }
    ++summary.delivered;
    return state_->mark_delivered(entry.idempotency_key);
  };
  // Payloads a killed replay recorded but did not deliver go first.
  if (!o.dry_run && target_ != nullptr) {
    while (true) {
      auto pending = state_->undelivered(replay_source_name, o.batch);
      if (!pending) return unexpected(pending.error());
      if (pending->empty()) break;
      for (const auto& entry : *pending) {
        if (auto done = deliver(entry); !done) return unexpected(done.error());
      }
    }
  }

  timestamp next_allowed = o.clock();
  const auto pace = [&] {
    if (o.rate <= 0) return;
    const timestamp now = o.clock();
    if (next_allowed > now) sleep(std::chrono::duration_cast<std::chrono::milliseconds>(next_allowed - now));
    const auto interval = std::chrono::milliseconds(static_cast<std::int64_t>(1000.0 / o.rate));
    next_allowed = std::max(next_allowed, now) + interval;
  };
  const auto keep_lease = [&]() -> expected<void, replay_state_error> {
    const timestamp now = o.clock();
    if (now - lease_taken < o.lease_ttl / 3) return {};
    if (auto lease = state_->acquire_lease(o.lease, o.owner, o.lease_ttl); !lease) {
      return unexpected(replay_state_error{replay_state_errc::lease_lost, "the lease went to " + lease.error().holder,
                                           lease.error().holder, lease.error().expires_at});
    }
    lease_taken = now;
    return {};
  };
  const auto move_cursor = [&](const std::string& position) -> expected<void, replay_state_error> {
    cursor = position;
    if (o.dry_run) return {};
    return state_->store_cursor(o.lease, o.owner, o.name, cursor);
  };

  std::size_t ran = 0;
  while (true) {
    auto batch = source_->next(cursor, o.batch);
    if (!batch) return fail("the source failed: " + batch.error());
    if (batch->empty()) {
      summary.finished = true;
      break;
    }
    for (auto& stored : *batch) {
      if (o.limit > 0 && ran >= o.limit) {
        summary.stopped_because = fmt::format("the limit of {} letters", o.limit);
        return summary;
      }
      ++summary.seen;
      if (!o.filter.matches(stored.letter)) {
        if (auto moved = move_cursor(stored.position); !moved) return unexpected(moved.error());
        continue;
      }
      ++summary.selected;
      ++ran;
      const std::string& key = stored.letter.idempotency_key;

      // The payload went downstream already (the original, or another replay): never twice.
      auto written = state_->find_output(key);
      if (!written) return unexpected(written.error());

      if (o.dry_run) {
        if (*written) {
          ++summary.by_outcome["duplicate"];
        } else {
          const auto made = state_->attempts(key);
          const recovery_step step = ladder_->next_step(stored.letter, made ? *made : 0);
          ++summary.by_outcome[std::string(step.kind == recovery_step_kind::stop ? to_string(step.reason)
                                                                               : to_string(step.kind))];
          if (summary.samples.size() < o.samples) {
            replay_sample sample{stored.letter.dlq_id, step, text_prefix(stored.letter), std::nullopt};
            if (is_zero_token(step.kind)) {
              envelope copy = stored.letter;
              recovery_result trial;
              (void)ladder_->run_step(copy, step, trial, nullptr);
              sample.after = std::move(trial.output);
            }
            summary.samples.push_back(std::move(sample));
          }
        }
        cursor = stored.position;
        if (o.progress) o.progress({summary.seen, ran, cursor});
        continue;
      }

      // Relaxed by an earlier replay: downstream has it, and a person reviews what was waived.
      if (const auto decided = ladder_->next_step(stored.letter);
          decided.kind == recovery_step_kind::stop && decided.reason == stop_reason::relaxed) {
        ++summary.held;
        ++summary.by_outcome[std::string(to_string(stop_reason::relaxed))];
        if (auto moved = move_cursor(stored.position); !moved) return unexpected(moved.error());
        continue;
      }
      pace();
      if (auto lease = keep_lease(); !lease) return unexpected(lease.error());
      if (!*written) {
        auto standing = source_->recheck(stored);
        if (!standing) return fail("the source could not read a letter again: " + standing.error());
        if (*standing != letter_standing::ours) {
          ++(*standing == letter_standing::purged ? summary.purged : summary.superseded);
          if (auto moved = move_cursor(stored.position); !moved) return unexpected(moved.error());
          continue;
        }
      }
      envelope letter = stored.letter;
      recovery_result result;
      if (*written) {
        result.reason = stop_reason::recovered;
        result.detail = "already written by " + (*written)->source;
        result.output = (*written)->output;
        ++summary.duplicates;
        ++summary.by_outcome["duplicate"];
      } else {
        expected<letter_standing, std::string> journaled = letter_standing::ours;
        result = ladder_->run(letter, state_, [&](const envelope& with_call) {
          journaled = source_->record_call(stored, with_call);
          return journaled && *journaled == letter_standing::ours;
        });
        if (!journaled) return fail("the source could not record a call before it: " + journaled.error());
        if (*journaled != letter_standing::ours) {  // taken or purged just now: no call was made
          ++(*journaled == letter_standing::purged ? summary.purged : summary.superseded);
          if (auto moved = move_cursor(stored.position); !moved) return unexpected(moved.error());
          continue;
        }
        summary.usage += result.usage;
        summary.calls += result.calls;
        ++summary.by_outcome[std::string(to_string(result.reason))];
        switch (result.effect()) {
          case stop_effect::recovered: {
            auto entry = state_->record_output(key, replay_source_name, letter.dlq_id, *result.output);
            if (!entry) return unexpected(entry.error());
            if (entry->first) {
              ++summary.recovered;
              if (auto done = deliver(*entry); !done) return unexpected(done.error());
            } else {
              ++summary.duplicates;  // a late original won the race
              result.output = entry->output;
            }
            break;
          }
          case stop_effect::exhausted: ++summary.exhausted; break;
          case stop_effect::unchanged: ++summary.held; break;
          case stop_effect::later: break;
        }
      }
      auto updated = source_->update(stored, letter, result);
      if (!updated) return fail("the source could not record the replay: " + updated.error());
      summary.superseded += *updated == letter_standing::acted_on;
      summary.purged += *updated == letter_standing::purged;
      if (result.effect() == stop_effect::later && !waits_alone(result)) {
        // The endpoint or the budget says later: stop here, and resume at this letter.
        summary.stopped_because = fmt::format("{}: {}", to_string(result.reason), result.detail);
        return summary;
      }
      if (auto moved = move_cursor(stored.position); !moved) return unexpected(moved.error());
      if (o.progress) o.progress({summary.seen, ran, cursor});
    }
  }
  // The whole source was read: the next replay starts from the beginning.
  if (!o.dry_run) {
    if (auto moved = move_cursor(""); !moved) return unexpected(moved.error());
  }
  return summary;
}

LLMDLQ_END_NAMESPACE
