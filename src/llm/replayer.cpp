// SPDX-License-Identifier: MIT
#include "llmdlq/llm/replayer.hpp"

#include "llmdlq/llm/recovery_ladder.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
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
  // Replayers in one process are told apart: each one's claims exclude the others'.
  static std::atomic<std::uint64_t> replayers{0};
  if (options_.owner.empty()) options_.owner = fmt::format("{}/{}", detail::default_lease_owner(), ++replayers);
  if (!options_.clock) options_.clock = system_now;
  if (options_.batch == 0) options_.batch = 1;
}

namespace {

// How a letter's turn ends: the run goes on to the next letter (the letter
// done with, or left for a later pass: it waits, or another replay holds
// it), or ends here.
enum class turn : std::uint8_t { next, later, stop };
using turn_result = expected<turn, replay_error>;

using detail::failed;
using detail::state_answer;

// Which letters a run has done with, in the order it read them: the cursor
// moves past a letter only once every letter before it is done, so a run
// that stops (or is killed) with calls in flight resumes at the first of
// them. A letter left for a later pass is passed by the cursor (the next
// pass starts over) but not by the place a source keeps itself (a consumer
// group's offsets, which no pass reads again before).
class read_order {
 public:
  using ticket = std::uint64_t;

  ticket open(std::string position) {
    letters_.push_back({std::move(position), false, false});
    return first_ + letters_.size() - 1;
  }

  /// Marks the letter done (or left for later); the position the cursor may now move to, if it moved.
  std::optional<std::string> done(ticket t, bool left_for_later) {
    letter& l = letters_[t - first_];
    l.done = true;
    l.left_for_later = left_for_later;
    std::optional<std::string> moved;
    while (!letters_.empty() && letters_.front().done) {
      held_back_ = held_back_ || letters_.front().left_for_later;
      if (!held_back_) kept_ = letters_.front().position;
      moved = std::move(letters_.front().position);
      letters_.pop_front();
      ++first_;
    }
    return moved;
  }

  /// Where every letter before is done with and none left for later: what a source that keeps its place may keep.
  [[nodiscard]] const std::string& kept() const noexcept { return kept_; }

 private:
  struct letter {
    std::string position;
    bool done;
    bool left_for_later;
  };
  std::string kept_;
  bool held_back_ = false;
  std::deque<letter> letters_;
  ticket first_ = 0;
};

// A letter handed to a worker, and its place in the read order.
struct turn_ticket {
  stored_letter stored;
  read_order::ticket ticket;
};

// Letters waiting for a worker: at most one per worker waits, so a stop
// leaves few read and not run.
class turn_queue {
 public:
  explicit turn_queue(std::size_t room) : room_(room) {}

  /// False when the queue was closed meanwhile.
  bool push(turn_ticket item) {
    std::unique_lock lock(mutex_);
    room_free_.wait(lock, [&] { return closed_ || items_.size() < room_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    ready_.notify_one();
    return true;
  }

  /// The next letter; none once the queue is closed and empty, or at once after stop().
  std::optional<turn_ticket> pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty() || stopped_) return std::nullopt;
    turn_ticket item = std::move(items_.front());
    items_.pop_front();
    room_free_.notify_one();
    return item;
  }

  void close() { end(false); }
  void stop() { end(true); }

 private:
  void end(bool stop) {
    const std::lock_guard lock(mutex_);
    closed_ = true;
    stopped_ = stopped_ || stop;
    ready_.notify_all();
    room_free_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable room_free_;
  std::deque<turn_ticket> items_;
  std::size_t room_;
  bool closed_ = false;
  bool stopped_ = false;
};

// The claim of a payload, given back however its turn ends.
class payload_claim {
 public:
  payload_claim(replay_state& state, std::string work, std::string owner, std::chrono::seconds ttl,
                const clock_function& clock)
      : state_(state), work_(std::move(work)), owner_(std::move(owner)), ttl_(ttl), clock_(clock) {}
  payload_claim(const payload_claim&) = delete;
  payload_claim& operator=(const payload_claim&) = delete;
  ~payload_claim() {
    if (held_) (void)state_.release_claim(work_, owner_);
  }

  /// Whether it is this run's now: taken, or renewed while held.
  expected<bool, replay_error> take() {
    const timestamp now = clock_();
    auto taken = state_answer(state_.claim(work_, owner_, ttl_));
    if (taken) held_ = *taken;
    if (held_) taken_at_ = now;
    return taken;
  }

  /// Whether it is still this run's: renewed once a third of its time has passed.
  expected<bool, replay_error> keep() {
    if (held_ && clock_() - taken_at_ < ttl_ / 3) return true;
    return take();
  }

 private:
  replay_state& state_;
  std::string work_;
  std::string owner_;
  std::chrono::seconds ttl_;
  const clock_function& clock_;
  timestamp taken_at_{};
  bool held_ = false;
};

// The works a run's workers are on: a second worker does not take one.
class in_flight_mark {
 public:
  struct works {
    std::mutex mutex;
    std::set<std::string, std::less<>> names;
  };
  in_flight_mark(works& all, const std::string& work) : all_(all) {
    const std::lock_guard lock(all_.mutex);
    if (all_.names.insert(work).second) name_ = work;
  }
  in_flight_mark(const in_flight_mark&) = delete;
  in_flight_mark& operator=(const in_flight_mark&) = delete;
  ~in_flight_mark() {
    if (!name_) return;
    const std::lock_guard lock(all_.mutex);
    all_.names.erase(*name_);
  }
  /// Whether no other worker was on it.
  [[nodiscard]] bool first() const noexcept { return name_.has_value(); }

 private:
  works& all_;
  std::optional<std::string> name_;
};

// One replayer::run: the lease, the cursor, the pace and the summary, the
// workers that run letters' turns, and one function per thing a turn can be.
class replay_run {
 public:
  replay_run(recovery_ladder& ladder, replay_source& source, replay_state& state, replay_target* target,
             const replayer_options& options)
      : ladder_(ladder),
        source_(source),
        state_(state),
        target_(target),
        o_(options),
        lease_(state, o_.lease + " " + o_.owner, o_.owner, o_.lease_ttl, o_.clock),
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
    std::vector<std::thread> workers;
    std::vector<std::unique_ptr<llm_client>> clients;
    if (!o_.dry_run) {
      const std::size_t count = o_.new_client ? std::max<std::size_t>(o_.concurrency, 1) : 1;
      for (std::size_t i = 0; i < count; ++i) {
        clients.push_back(i == 0 ? nullptr : o_.new_client());
        if (i > 0 && !clients.back()) break;  // no more clients to be had: fewer calls in flight
        workers.emplace_back([this, client = clients.back().get()] { work(client); });
      }
    }
    const bool read_all = read_letters();
    queue_.close();
    for (auto& worker : workers) worker.join();
    if (error_) return unexpected(std::move(*error_));
    summary_.finished = read_all && !stopping_;
    if (!o_.dry_run && cursor_ != stored_cursor_) {
      if (auto stored = store_cursor(); !stored) return unexpected(stored.error());
    }
    // The whole source was read: the next replay starts from the beginning.
    if (!o_.dry_run && summary_.finished && !stored_cursor_.empty()) {
      cursor_.clear();
      if (auto stored = store_cursor(); !stored) return unexpected(stored.error());
    }
    return summary_;
  }

 private:
  // Reads the source and hands each selected letter to a worker (or, dry,
  // previews it here); true when it read to the end.
  bool read_letters() {
    std::string after = cursor_;
    while (!stopping_) {
      auto batch = source_.next(after, o_.batch);
      if (!batch) {
        fail(failed("the source failed: ", std::move(batch.error())));
        return false;
      }
      if (batch->empty()) return true;
      for (auto& stored : *batch) {
        after = stored.position;
        if (!hand_out(std::move(stored))) return false;
      }
    }
    return false;
  }

  // False when the run stops here.
  bool hand_out(stored_letter stored) {
    if (o_.limit > 0 && ran_ >= o_.limit) {  // the letters handed out still run
      count([&](replay_summary& s) { s.stopped_because = "the limit of " + detail::counted(o_.limit, "letter"); });
      return false;
    }
    const read_order::ticket ticket = open(stored.position);
    {
      const std::lock_guard lock(summary_mutex_);
      ++summary_.seen;
    }
    if (!o_.filter.matches(stored.letter)) return done(ticket);
    if (!stored.unreadable.empty()) return unreadable(stored, ticket);
    {
      const std::lock_guard lock(summary_mutex_);
      ++summary_.selected;
    }
    ++ran_;
    if (o_.dry_run) {
      auto previewed = preview(stored);
      ++finished_;
      if (!previewed) {
        fail(std::move(previewed.error()));
        return false;
      }
      return done(ticket);
    }
    return queue_.push({std::move(stored), ticket});
  }

  // A worker: turns until the queue ends, each call through `client` (the ladder's when null).
  void work(llm_client* client) {
    while (auto item = queue_.pop()) {
      auto ended = take_turn(item->stored, client);
      count([&](replay_summary&) { ++finished_; });
      if (!ended) {
        fail(std::move(ended.error()));
      } else if (*ended != turn::stop) {
        (void)done(item->ticket, *ended == turn::later);
      }
    }
  }

  read_order::ticket open(std::string position) {
    const std::lock_guard lock(order_mutex_);
    return order_.open(std::move(position));
  }

  // The letter is done with: the cursor moves past every letter done in order. False when the run stops.
  bool done(read_order::ticket ticket, bool left_for_later = false) {
    const std::lock_guard lock(order_mutex_);
    auto moved = order_.done(ticket, left_for_later);
    if (moved) {
      cursor_ = std::move(*moved);
      // Stored once a second and when the run ends: a replay killed in
      // between reads again a few letters it ran, which are no longer due.
      if (!o_.dry_run && o_.clock() - cursor_stored_at_ >= std::chrono::seconds(1)) {
        if (auto stored = store_cursor(); !stored) {
          fail(std::move(stored.error()));
          return false;
        }
      }
    }
    report_progress();
    return !stopping_;
  }

  expected<void, replay_error> store_cursor() {
    // The run's lease outlasts turns that end without a call (letters another replay holds, the last calls).
    if (auto lease = lease_.keep(); !lease) return lease;
    if (!order_.kept().empty() && order_.kept() != passed_) {
      if (auto passed = source_.passed(order_.kept()); !passed) {
        return unexpected(failed("the source could not keep its place: ", std::move(passed.error())));
      }
      passed_ = order_.kept();
    }
    cursor_stored_at_ = o_.clock();
    stored_cursor_ = cursor_;
    return state_answer(state_.store_cursor(lease_.name(), o_.owner, o_.name, cursor_));
  }

  // The endpoint or the budget says later: no letter starts after this one.
  void stop_because(std::string why) {
    {
      const std::lock_guard lock(summary_mutex_);
      if (summary_.stopped_because.empty()) summary_.stopped_because = std::move(why);
    }
    stopping_ = true;
    queue_.stop();
  }

  // The first failure ends the run; the letters in flight end their turns.
  void fail(replay_error error) {
    {
      const std::lock_guard lock(summary_mutex_);
      if (!error_) error_ = std::move(error);
    }
    stopping_ = true;
    queue_.stop();
  }

  expected<void, replay_error> take_lease_and_cursor() {
    if (auto lease = lease_.take(); !lease) return lease;  // given back however the run ends
    auto stored = state_answer(state_.load_cursor(o_.name));
    if (!stored) return unexpected(std::move(stored.error()));
    cursor_ = stored_cursor_ = stored->value_or("");
    cursor_stored_at_ = o_.clock();
    return {};
  }

  // Once per payload, whichever replay recorded it: the delivery is claimed,
  // and made only when the ledger does not say it was made meanwhile.
  expected<void, replay_error> deliver(const ledger_entry& entry) {
    if (target_ == nullptr) return {};
    const std::lock_guard lock(deliver_mutex_);  // a target takes one delivery at a time
    payload_claim claim(state_, "delivery " + entry.idempotency_key, o_.owner, o_.lease_ttl, o_.clock);
    auto taken = claim.take();
    if (!taken) return unexpected(taken.error());
    if (!*taken) return {};  // another replay is delivering it
    auto now = state_answer(state_.find_output(entry.idempotency_key));
    if (!now) return unexpected(std::move(now.error()));
    if (*now && (*now)->delivered) return {};
    if (auto delivered = target_->deliver(entry); !delivered) {
      return unexpected(failed("the target refused a delivery: ", std::move(delivered.error())));
    }
    {
      const std::lock_guard counted(summary_mutex_);
      ++summary_.delivered;
    }
    return state_answer(state_.mark_delivered(entry.idempotency_key));
  }

  // Payloads a killed replay recorded but did not deliver go first.
  expected<void, replay_error> deliver_pending() {
    if (target_ == nullptr) return {};
    std::set<std::string> seen;  // entries another replay is delivering stay in the list
    while (true) {
      auto pending = state_answer(state_.undelivered(replay_source_name, o_.batch + seen.size()));
      if (!pending) return unexpected(std::move(pending.error()));
      bool fresh = false;
      for (const auto& entry : *pending) {
        if (!seen.insert(entry.idempotency_key).second) continue;
        fresh = true;
        if (auto done = deliver(entry); !done) return unexpected(done.error());
      }
      if (!fresh) return {};
    }
  }

  void report_progress() {
    if (!o_.progress) return;
    const std::lock_guard lock(summary_mutex_);
    o_.progress({summary_.seen, finished_, cursor_, summary_.usage.total()});
  }

  // A letter that does not read back: skipped, counted and named; it blocks no other.
  bool unreadable(const stored_letter& stored, read_order::ticket ticket) {
    unreadable_record letter{stored.letter.dlq_id, stored.unreadable};
    if (o_.on_unreadable) o_.on_unreadable(letter);
    {
      const std::lock_guard lock(summary_mutex_);
      ++summary_.unreadable;
      if (summary_.unreadable_letters.size() < max_listed_unreadable) {
        summary_.unreadable_letters.push_back(std::move(letter));
      }
    }
    return done(ticket);
  }

  // A worker's turn on one letter, its payload claimed for the length of it
  // (in the store against other replays, in the run against its other workers).
  turn_result take_turn(const stored_letter& stored, llm_client* client) {
    const std::string& key = stored.letter.idempotency_key;
    std::string work = key.empty() ? "letter " + stored.letter.dlq_id : "payload " + key;
    const in_flight_mark running(in_flight_, work);
    payload_claim claim(state_, std::move(work), o_.owner, o_.lease_ttl, o_.clock);
    auto taken = running.first() ? claim.take() : expected<bool, replay_error>(false);
    if (!taken) return unexpected(std::move(taken.error()));
    if (!*taken) {
      count([](replay_summary& s) { ++s.claimed_elsewhere; });
      return turn::later;
    }
    // The payload went downstream already (the original, or another replay): never twice.
    auto written = state_answer(state_.find_output(stored.letter.idempotency_key));
    if (!written) return unexpected(std::move(written.error()));
    // Relaxed by an earlier replay: downstream has it, and a person reviews what was waived.
    if (const auto decided = ladder_.next_step(stored.letter);
        decided.kind == recovery_step_kind::stop && decided.reason == stop_reason::relaxed) {
      count([](replay_summary& s) {
        ++s.held;
        ++s.by_outcome[std::string(to_string(stop_reason::relaxed))];
      });
      return turn::next;
    }
    pace_.pace();
    if (auto lease = lease_.keep(); !lease) return unexpected(lease.error());
    if (*written) return settle(stored, stored.letter, already_written(**written));
    return recover(stored, claim, client);
  }

  template <class Change>
  void count(Change change) {
    const std::lock_guard lock(summary_mutex_);
    change(summary_);
  }

  // A dry run: what the next step would be, with samples of zero-token steps' results.
  expected<void, replay_error> preview(const stored_letter& stored) {
    auto written = state_answer(state_.find_output(stored.letter.idempotency_key));
    if (!written) return unexpected(std::move(written.error()));
    if (*written) {
      ++summary_.by_outcome["duplicate"];
      return {};
    }
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
    return {};
  }

  recovery_result already_written(const ledger_entry& written) {
    recovery_result result;
    result.reason = stop_reason::recovered;
    result.detail = "already written by " + written.source;
    result.output = written.output;
    count([](replay_summary& s) {
      ++s.duplicates;
      ++s.by_outcome["duplicate"];
    });
    return result;
  }

  // The ladder runs on the letter, each call written down in the source
  // before it is made, the payload's claim renewed before each call.
  turn_result recover(const stored_letter& stored, payload_claim& claim, llm_client* client) {
    auto standing = source_.recheck(stored);
    if (!standing) return unexpected(failed("the source could not read a letter again: ", std::move(standing.error())));
    if (*standing != letter_standing::ours) return gone(*standing);
    envelope letter = stored.letter;
    expected<letter_standing, replay_error> journaled = letter_standing::ours;
    bool kept = true;
    recovery_result result = ladder_.run(
        letter, &state_,
        [&](const envelope& with_call) {
          auto renewed = claim.keep();
          kept = renewed && *renewed;
          if (!kept) return false;  // the claim expired and another replay took the payload: no call
          journaled = source_.record_call(stored, with_call);
          return journaled && *journaled == letter_standing::ours;
        },
        client);
    if (!kept) {
      count([](replay_summary& s) { ++s.claimed_elsewhere; });
      return turn::later;
    }
    if (!journaled) {
      return unexpected(failed("the source could not record a call before it: ", std::move(journaled.error())));
    }
    if (*journaled != letter_standing::ours) return gone(*journaled);  // taken or purged just now: no call made
    count([&](replay_summary& s) {
      s.usage += result.usage;
      s.calls += result.calls;
      ++s.by_outcome[std::string(to_string(result.reason))];
    });
    if (auto counted = count_effect(letter, result); !counted) return unexpected(counted.error());
    return settle(stored, letter, std::move(result));
  }

  // Another process took or purged the letter.
  turn_result gone(letter_standing standing) {
    count([&](replay_summary& s) { ++(standing == letter_standing::purged ? s.purged : s.superseded); });
    return turn::next;
  }

  expected<void, replay_error> count_effect(const envelope& letter, recovery_result& result) {
    switch (result.effect()) {
      case stop_effect::recovered: {
        auto entry = state_answer(state_.record_output(letter.idempotency_key, replay_source_name, letter.dlq_id,
                                                       *result.output));
        if (!entry) return unexpected(std::move(entry.error()));
        if (!entry->first) {
          count([](replay_summary& s) { ++s.duplicates; });  // a late original won the race
          result.output = entry->output;
          return {};
        }
        count([](replay_summary& s) { ++s.recovered; });
        return deliver(*entry);
      }
      case stop_effect::exhausted: count([](replay_summary& s) { ++s.exhausted; }); return {};
      case stop_effect::unchanged: count([](replay_summary& s) { ++s.held; }); return {};
      case stop_effect::later: return {};
    }
    return {};
  }

  // The source records the replay; an endpoint or budget that says later ends the run at this letter.
  turn_result settle(const stored_letter& stored, const envelope& letter, recovery_result result) {
    auto updated = source_.update(stored, letter, result);
    if (!updated) return unexpected(failed("the source could not record the replay: ", std::move(updated.error())));
    count([&](replay_summary& s) {
      s.superseded += *updated == letter_standing::acted_on;
      s.purged += *updated == letter_standing::purged;
    });
    if (result.effect() == stop_effect::later && !waits_alone(result)) {
      stop_because(fmt::format("{}: {}", to_string(result.reason), result.detail));
      return turn::stop;  // the cursor stays: the next run resumes at this letter
    }
    return result.effect() == stop_effect::later ? turn::later : turn::next;
  }

  recovery_ladder& ladder_;
  replay_source& source_;
  replay_state& state_;
  replay_target* target_;
  const replayer_options& o_;
  std::mutex summary_mutex_;  // guards summary_ and error_
  replay_summary summary_;
  std::optional<replay_error> error_;
  std::mutex order_mutex_;  // guards order_ and the cursor's
  read_order order_;
  std::string cursor_;
  std::string stored_cursor_;
  std::string passed_;  // what the source was last told it may keep
  timestamp cursor_stored_at_{};
  std::mutex deliver_mutex_;
  in_flight_mark::works in_flight_;
  std::size_t ran_ = 0;       // letters handed out (the reader's)
  std::size_t finished_ = 0;  // of them, those whose turn ended (under summary_mutex_)
  std::atomic<bool> stopping_{false};
  turn_queue queue_{std::max<std::size_t>(o_.concurrency, 1)};
  detail::run_lease lease_;
  detail::run_pace pace_;
};

}  // namespace

expected<replay_summary, replay_error> replayer::run() {
  replay_run run(*ladder_, *source_, *state_, target_, options_);
  return run.run();
}

LLMDLQ_END_NAMESPACE
