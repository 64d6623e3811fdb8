// SPDX-License-Identifier: MIT
#include "llmdlq/llm/resolution_delivery.hpp"

#include <utility>

#include <boost/json.hpp>

#include "llmdlq/detail/store/record_check.hpp"
#include "llmdlq/envelope.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

// The store's failure: one that failed may answer next time, one that refused will not.
replay_error store_failure(const moderation_error& error, std::string message) {
  const replay_errc code = is_permanent(error.code) ? replay_errc::source_refused : replay_errc::source_unavailable;
  return {code, std::move(message), {}, {}};
}

// Who resolved the record, and why: its operator log's last `resolve`.
void read_resolver(const moderation_record& record, ledger_entry& entry) {
  boost::system::error_code ec;
  const auto log = boost::json::parse(record.operator_log, ec);
  if (ec || !log.is_array()) return;
  for (auto it = log.as_array().rbegin(); it != log.as_array().rend(); ++it) {
    const auto* action = it->is_object() ? it->as_object().if_contains("action") : nullptr;
    if (action == nullptr || !action->is_string() || action->as_string() != "resolve") continue;
    if (const auto* who = it->as_object().if_contains("operator"); who && who->is_string()) {
      entry.resolved_by = who->as_string();
    }
    if (const auto* note = it->as_object().if_contains("note"); note && note->is_string()) {
      entry.note = note->as_string();
    }
    return;
  }
}

}  // namespace

expected<resolution_delivery_summary, replay_error> deliver_resolutions(
    moderation_store& store, replay_state& state, replay_target& target, std::size_t page_size,
    const std::function<void(const resolution_delivery_summary&)>& on_letter) {
  resolution_delivery_summary summary;
  std::string after_created_at, after_dlq_id;
  for (;;) {
    auto page = store.list_after(moderation_status::resolved, after_created_at, after_dlq_id,
                                 page_size == 0 ? 1 : page_size);
    if (!page) return unexpected(store_failure(page.error(), "listing resolved letters: " + page.error().message));
    if (page->empty()) return summary;
    for (const auto& record : *page) {
      after_created_at = record.created_at;
      after_dlq_id = record.dlq_id;
      ++summary.resolved;
      if (on_letter) on_letter(summary);
      std::optional<envelope> letter;
      std::string why = record.defect_reason;
      if (record.readable()) {
        if (auto parsed = parse_envelope(record.envelope_json)) {
          letter = std::move(*parsed);
        } else {
          why = detail::store::envelope_reason(parsed.error());  // a store that checks less than read_record
        }
      }
      if (!letter) {  // skipped, counted and named: it blocks no other correction
        ++summary.unreadable;
        if (summary.unreadable_letters.size() < max_listed_unreadable) {
          summary.unreadable_letters.push_back({record.dlq_id, std::move(why)});
        }
        continue;
      }
      if (!record.resolution) continue;  // a resolved record always holds its correction
      const std::string& key = letter->idempotency_key;
      auto entry = state.find_output(key);
      if (!entry) return unexpected(detail::replay_error_of(std::move(entry.error())));
      if (!*entry) {
        auto recorded = state.record_output(key, resolution_source_name, record.dlq_id, *record.resolution);
        if (!recorded) return unexpected(detail::replay_error_of(std::move(recorded.error())));
        *entry = std::move(*recorded);
      }
      ledger_entry& e = **entry;
      if (e.source != resolution_source_name || e.dlq_id != record.dlq_id) {
        ++summary.superseded;
        continue;
      }
      if (e.delivered) {
        ++summary.already_delivered;
        continue;
      }
      read_resolver(record, e);
      if (auto delivered = target.deliver(e); !delivered) {
        delivered.error().message = "the target refused a correction: " + delivered.error().message;
        return unexpected(std::move(delivered.error()));
      }
      if (auto marked = state.mark_delivered(key); !marked) {
        return unexpected(detail::replay_error_of(std::move(marked.error())));
      }
      ++summary.delivered;
    }
  }
}

LLMDLQ_END_NAMESPACE
