// SPDX-License-Identifier: MIT
#include "llmdlq/llm/moderation_replay_source.hpp"

#include <algorithm>
#include <iterator>
#include <tuple>

#include <fmt/format.h>

#include "llmdlq/detail/store/record_check.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

// A position is the record's creation time and dlq_id; RFC 3339 text has no space.
std::string position_of(const moderation_record& r) { return r.created_at + ' ' + r.dlq_id; }

std::pair<std::string_view, std::string_view> split_position(std::string_view position) {
  const auto space = position.find(' ');
  if (space == std::string_view::npos) return {{}, {}};
  return {position.substr(0, space), position.substr(space + 1)};
}

// The store's failure as the replay's: a store that failed may answer next time, one that refused will not.
replay_error source_failure(const moderation_error& error, std::string message) {
  const replay_errc code = is_permanent(error.code) ? replay_errc::source_refused : replay_errc::source_unavailable;
  return {code, std::move(message), {}, {}};
}

// What a refused act says of the record's standing; an error only when the store failed or refused the request.
expected<letter_standing, replay_error> standing_after(const expected<moderation_record, moderation_error>& acted) {
  if (acted) return letter_standing::ours;
  switch (acted.error().code) {
    case moderation_errc::invalid_transition: return letter_standing::acted_on;  // the operator wins
    case moderation_errc::not_found: return letter_standing::purged;
    case moderation_errc::unreadable_record: return letter_standing::acted_on;  // its status was broken meanwhile
    default: return unexpected(source_failure(acted.error(), acted.error().message));
  }
}

// A record that does not read back, as the replayer skips and reports it:
// what its columns say, for the selection, and why.
stored_letter unreadable_letter(const moderation_record& record, std::string reason) {
  stored_letter stored;
  envelope& e = stored.letter;
  e.dlq_id = record.dlq_id;
  e.failure.code = record.failure_code;
  if (const auto category = failure_category_from(record.category)) e.failure.category = *category;
  if (const auto triage = triage_class_from(record.triage)) e.triage.kind = *triage;
  if (const auto created = parse_rfc3339(record.created_at)) e.created_at = *created;
  stored.position = position_of(record);
  stored.unreadable = std::move(reason);
  return stored;
}

}  // namespace

expected<std::vector<stored_letter>, replay_error> moderation_replay_source::next(std::string_view after,
                                                                                  std::size_t limit) {
  const auto [created_at, dlq_id] = split_position(after);
  std::vector<moderation_record> records;
  std::vector<moderation_status> statuses{moderation_status::requeued};
  if (!requeued_only_) statuses.push_back(moderation_status::pending);
  for (const auto status : statuses) {
    auto page = store_->list_after(status, created_at, dlq_id, limit);
    if (!page) {
      return unexpected(source_failure(page.error(),
                                       fmt::format("listing {} letters: {}", to_string(status), page.error().message)));
    }
    std::move(page->begin(), page->end(), std::back_inserter(records));
  }
  std::sort(records.begin(), records.end(), [](const moderation_record& a, const moderation_record& b) {
    return std::tie(a.created_at, a.dlq_id) < std::tie(b.created_at, b.dlq_id);
  });
  if (records.size() > limit) records.resize(limit);
  std::vector<stored_letter> letters;
  letters.reserve(records.size());
  for (const auto& record : records) {
    if (!record.readable()) {
      letters.push_back(unreadable_letter(record, record.defect_reason));
      continue;
    }
    auto letter = parse_envelope(record.envelope_json);
    if (!letter) {  // read_record read it: only a store that checks less gets here
      letters.push_back(unreadable_letter(record, detail::store::envelope_reason(letter.error())));
      continue;
    }
    letters.push_back({std::move(*letter), position_of(record), {}});
  }
  return letters;
}

expected<letter_standing, replay_error> moderation_replay_source::update(const stored_letter& before,
                                                                         const envelope& after,
                                                                         const recovery_result& result) {
  moderation_request request;
  request.dlq_id = before.letter.dlq_id;
  request.operator_name = operator_;
  request.note = fmt::format("{}: {}", to_string(result.reason), result.detail);
  request.envelope_json = serialize(after);
  const bool tried = after.attempts.history.size() > before.letter.attempts.history.size();
  switch (result.effect()) {
    case stop_effect::recovered:
      if (result.reason == stop_reason::relaxed) {
        // Downstream has it; a person still looks at what was relaxed.
        std::string dropped;
        for (const auto& path : result.dropped_paths) dropped += (dropped.empty() ? "" : ", ") + path;
        if (!dropped.empty()) request.note += "; dropped " + dropped;
        request.action = moderation_action::record_attempt;
      } else {
        request.action = moderation_action::recover;
        request.corrected = result.output;
      }
      break;
    case stop_effect::exhausted: request.action = moderation_action::exhaust; break;
    case stop_effect::unchanged:
    case stop_effect::later:
      if (!tried) return letter_standing::ours;
      request.action = moderation_action::record_attempt;
      break;
  }
  return standing_after(store_->act(request));
}

expected<letter_standing, replay_error> moderation_replay_source::record_call(const stored_letter& letter,
                                                                              const envelope& with_call) {
  moderation_request request;
  request.dlq_id = letter.letter.dlq_id;
  request.operator_name = operator_;
  request.action = moderation_action::record_attempt;
  const auto& call = with_call.attempts.history.back();
  request.note = fmt::format("a call to {} starts", call.model.empty() ? "the model" : call.model);
  request.envelope_json = serialize(with_call);
  return standing_after(store_->act(request));
}

expected<letter_standing, replay_error> moderation_replay_source::recheck(const stored_letter& letter) {
  auto record = store_->get(letter.letter.dlq_id);
  if (!record) {
    return unexpected(source_failure(record.error(),
                                     fmt::format("reading {}: {}", letter.letter.dlq_id, record.error().message)));
  }
  if (!*record) return letter_standing::purged;
  if ((*record)->defect == record_defect::status) return letter_standing::acted_on;  // no status of the replay's
  const moderation_status status = (*record)->status;
  const bool replayable = status == moderation_status::requeued || (!requeued_only_ && status == moderation_status::pending);
  return replayable ? letter_standing::ours : letter_standing::acted_on;
}

LLMDLQ_END_NAMESPACE
