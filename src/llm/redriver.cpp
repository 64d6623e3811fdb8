// SPDX-License-Identifier: MIT
#include "llmdlq/llm/redriver.hpp"

#include <utility>

#include <fmt/format.h>

#include "llmdlq/detail/lease_owner.hpp"
#include "run_support.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

using detail::failed;
using detail::state_answer;

replay_error store_failure(std::string_view doing, moderation_error error) {
  const replay_errc code = error.code == moderation_errc::store_unavailable ? replay_errc::source_unavailable
                                                                            : replay_errc::source_refused;
  return {code, fmt::format("{}: {}", doing, error.message), {}, {}};
}

// One redriver::run.
class redrive_run {
 public:
  redrive_run(moderation_store& store, replay_state& state, redrive_source& source, const redrive_options& o)
      : store_(store),
        state_(state),
        source_(source),
        o_(o),
        lease_(state, o_.lease, o_.owner, o_.lease_ttl, o_.clock),
        pace_(o_.rate, o_.clock, o_.sleep) {
    summary_.dry_run = o_.dry_run;
  }

  expected<redrive_summary, replay_error> run() {
    if (!o_.dry_run) {
      if (auto lease = lease_.take(); !lease) return unexpected(lease.error());
    }
    // Letters made while the run goes (a redriven input that failed again) wait for the next run.
    started_ = format_rfc3339(o_.clock());
    if (auto settled = settle(); !settled) return unexpected(settled.error());
    for (const auto status : o_.statuses) {
      if (auto walked = walk(status); !walked) return unexpected(walked.error());
      if (limit_reached()) break;
    }
    return summary_;
  }

 private:
  [[nodiscard]] bool limit_reached() const { return o_.limit > 0 && summary_.selected >= o_.limit; }

  // Every page of the records in `status`, oldest first; `visit` returns false to stop.
  template <class Visit>
  expected<void, replay_error> each_record(moderation_status status, Visit&& visit) {
    std::string after_created;
    std::string after_id;
    while (true) {
      auto page = store_.list_after(status, after_created, after_id, o_.batch);
      if (!page) return unexpected(store_failure("reading the store", std::move(page.error())));
      if (page->empty()) return {};
      for (const auto& record : *page) {
        after_created = record.created_at;
        after_id = record.dlq_id;
        auto go_on = visit(record);
        if (!go_on) return unexpected(go_on.error());
        if (!*go_on) return {};
      }
    }
  }

  // A record that does not read back is counted and named, never redriven.
  std::optional<envelope> letter_of(const moderation_record& record) {
    if (record.readable()) {
      if (auto letter = parse_envelope(record.envelope_json)) return std::move(*letter);
    }
    unreadable_record skipped{record.dlq_id,
                              record.readable() ? "its envelope does not read back" : record.defect_reason};
    ++summary_.unreadable;
    if (summary_.unreadable_letters.size() < max_listed_unreadable) summary_.unreadable_letters.push_back(skipped);
    if (o_.on_unreadable) o_.on_unreadable(skipped);
    return std::nullopt;
  }

  // Redriven letters whose input has since succeeded become `recovered`.
  expected<void, replay_error> settle() {
    return each_record(moderation_status::redriven,
                       [&](const moderation_record& record) -> expected<bool, replay_error> {
                         const auto letter = letter_of(record);
                         if (!letter) return true;
                         auto output = state_answer(state_.find_output(letter->idempotency_key));
                         if (!output) return unexpected(std::move(output.error()));
                         if (!*output) return true;
                         if (!o_.dry_run) {
                           moderation_request request{
                               record.dlq_id,     moderation_action::recover,
                               o_.owner,          fmt::format("its redriven input succeeded ({})", (*output)->source),
                               (*output)->output, record.envelope_json};
                           if (auto acted = store_.act(request); !acted) {
                             if (acted.error().code == moderation_errc::invalid_transition ||
                                 acted.error().code == moderation_errc::not_found) {
                               return true;  // an operator or a purge got there first
                             }
                             return unexpected(store_failure("settling a redriven letter", std::move(acted.error())));
                           }
                         }
                         ++summary_.settled;
                         return true;
                       });
  }

  expected<void, replay_error> walk(moderation_status status) {
    return each_record(status, [&](const moderation_record& record) -> expected<bool, replay_error> {
      if (record.created_at >= started_) return true;
      ++summary_.seen;
      const auto letter = letter_of(record);
      if (!letter || !o_.filter.matches(*letter)) return true;
      ++summary_.selected;
      auto report = take_turn(record, *letter);
      if (!report) return unexpected(std::move(report.error()));
      ++summary_.by_outcome[report->outcome];
      if (o_.on_letter) o_.on_letter(*report);
      return !limit_reached();
    });
  }

  expected<redrive_report, replay_error> take_turn(const moderation_record& record, const envelope& letter) {
    redrive_report report{record.dlq_id, "", "", "", "", 0};
    const auto spent = [&] {
      report.outcome = "spent";
      report.detail = fmt::format("its {} automated attempts are spent: it goes to a person", o_.max_attempts);
      return report;
    };
    // A payload the ledger holds went downstream already (a replay recovered it): nothing to send.
    auto written = state_answer(state_.find_output(letter.idempotency_key));
    if (!written) return unexpected(std::move(written.error()));
    if (*written) {
      report.outcome = "downstream";
      report.detail = fmt::format("its payload went downstream already ({}): nothing to redrive", (*written)->source);
      return report;
    }
    auto made = state_answer(state_.attempts(letter.idempotency_key));
    if (!made) return unexpected(std::move(made.error()));
    if (*made >= o_.max_attempts) return spent();
    auto input = source_.fetch(letter);
    if (!input) {
      if (input.error().code != replay_errc::target_refused) {
        return unexpected(failed("the source of the inputs failed: ", std::move(input.error())));
      }
      report.outcome = "refused";
      report.detail = std::move(input.error().message);
      return report;
    }
    input->idempotency_key = letter.idempotency_key;
    report.destination = input->destination;
    report.from = input->from;
    if (o_.dry_run) {
      report.outcome = "would_send";
      return report;
    }
    pace_.pace();
    if (auto lease = lease_.keep(); !lease) return unexpected(lease.error());
    // Counted before the send, so that a crash during it still counts it.
    auto attempt = state_.reserve_attempt(letter.idempotency_key, o_.max_attempts);
    if (!attempt) {
      if (attempt.error().code == replay_state_errc::attempts_exhausted) return spent();
      return unexpected(detail::replay_error_of(std::move(attempt.error())));
    }
    report.attempt = *attempt;
    if (auto sent = source_.send(*input, {record.dlq_id, *attempt}); !sent) {
      if (sent.error().code != replay_errc::target_refused) {
        return unexpected(failed("sending an input back failed: ", std::move(sent.error())));
      }
      (void)state_.release_attempt(letter.idempotency_key);  // refused: nothing went out
      report.outcome = "refused";
      report.detail = std::move(sent.error().message);
      return report;
    }
    moderation_request request{
        record.dlq_id, moderation_action::redrive,
        o_.owner,      fmt::format("sent {} to {} (automated attempt {})", input->from, input->destination, *attempt),
        std::nullopt,  std::nullopt};
    if (auto acted = store_.act(request); !acted) {
      if (acted.error().code != moderation_errc::invalid_transition &&
          acted.error().code != moderation_errc::not_found) {
        return unexpected(store_failure("marking a letter redriven", std::move(acted.error())));
      }
      report.outcome = "superseded";  // sent all the same: the action someone else took stands
      return report;
    }
    report.outcome = "sent";
    return report;
  }

  moderation_store& store_;
  replay_state& state_;
  redrive_source& source_;
  const redrive_options& o_;
  detail::run_lease lease_;
  detail::run_pace pace_;
  redrive_summary summary_;
  std::string started_;  // RFC 3339, as the stores keep created_at
};

}  // namespace

redriver::redriver(moderation_store& store, replay_state& state, redrive_source& source, redrive_options options)
    : store_(&store), state_(&state), source_(&source), options_(std::move(options)) {
  if (options_.owner.empty()) options_.owner = detail::default_lease_owner();
  if (!options_.clock) options_.clock = system_now;
  if (options_.batch == 0) options_.batch = 1;
  // Only letters a redrive may move: the others could be sent and never marked.
  std::erase_if(options_.statuses,
                [](moderation_status s) { return !transition(s, moderation_action::redrive).has_value(); });
}

expected<redrive_summary, replay_error> redriver::run() {
  redrive_run run(*store_, *state_, *source_, options_);
  return run.run();
}

LLMDLQ_END_NAMESPACE
