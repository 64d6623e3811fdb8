// SPDX-License-Identifier: MIT
#include "llmdlq/kafka/topic_store.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include "llmdlq/detail/store/query_results.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace {

moderation_error read_only(std::string_view topic) {
  return {moderation_errc::store_unavailable, fmt::format("kafka: topic {} is read only", topic), std::nullopt};
}

bool any_of_or_empty(const std::vector<std::string>& wanted, std::string_view value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

// Whether `r` (with its envelope `e`) is one of the records `q` asks for.
bool matches(const moderation_query& q, const moderation_record& r, const envelope& e) {
  if (!q.statuses.empty() && std::find(q.statuses.begin(), q.statuses.end(), r.status) == q.statuses.end()) {
    return false;
  }
  if (!any_of_or_empty(q.categories, r.category) || !any_of_or_empty(q.triage_classes, r.triage) ||
      !any_of_or_empty(q.failure_codes, r.failure_code)) {
    return false;
  }
  if ((!q.schema_version.empty() && q.schema_version != e.versions.schema) ||
      (!q.prompt_version.empty() && q.prompt_version != e.versions.prompt) ||
      (!q.model_version.empty() && q.model_version != e.versions.model)) {
    return false;
  }
  if ((q.created_since && e.created_at < *q.created_since) || (q.created_before && e.created_at >= *q.created_before)) {
    return false;
  }
  // RFC 3339 UTC with three fraction digits: text order is time order.
  return !q.after ||
         std::pair<std::string_view, std::string_view>(r.created_at, r.dlq_id) >
             std::pair<std::string_view, std::string_view>(q.after->after_created_at, q.after->after_dlq_id);
}

}  // namespace

expected<std::unique_ptr<kafka_topic_store>, kafka_error> kafka_topic_store::open(kafka_topic_options options) {
  options.group.clear();  // the store is the whole topic, not what a group would give it
  auto source = kafka_replay_source::open(std::move(options));
  if (!source) return unexpected(std::move(source.error()));
  std::map<std::string, envelope> latest;  // by dlq_id: a redelivered letter counts once
  std::string position;
  for (;;) {
    auto letters = source->next(position, 500);
    if (!letters) {
      const bool refused = letters.error().code == replay_errc::source_refused;
      return unexpected(kafka_error{refused ? kafka_errc::rejected : kafka_errc::unavailable,
                                    std::move(letters.error().message)});
    }
    if (letters->empty()) break;
    position = letters->back().position;
    for (auto& l : *letters) latest.insert_or_assign(l.letter.dlq_id, std::move(l.letter));
  }
  std::unique_ptr<kafka_topic_store> store(new kafka_topic_store());
  store->topic_ = source->topic();
  store->skipped_ = source->skipped();
  store->skipped_messages_ = source->skipped_messages();
  for (auto& [id, e] : latest) {
    moderation_record r;
    r.dlq_id = id;
    r.category = std::string(to_string(e.failure.category));
    r.triage = std::string(to_string(e.triage.kind));
    r.failure_code = e.failure.code;
    r.raw_response = e.raw_response.text && !e.raw_response.base64 ? *e.raw_response.text : std::string();
    r.envelope_json = serialize(e);
    r.created_at = r.updated_at = format_rfc3339(e.created_at);
    r.operator_log = "[]";
    store->records_.push_back(std::move(r));
    store->envelopes_.push_back(std::move(e));
  }
  std::vector<std::size_t> order(store->records_.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = store->records_[a];
    const auto& y = store->records_[b];
    return std::tie(x.created_at, x.dlq_id) < std::tie(y.created_at, y.dlq_id);
  });
  std::vector<moderation_record> records;
  std::vector<envelope> envelopes;
  for (const auto i : order) {
    records.push_back(std::move(store->records_[i]));
    envelopes.push_back(std::move(store->envelopes_[i]));
  }
  store->records_ = std::move(records);
  store->envelopes_ = std::move(envelopes);
  return store;
}

expected<receipt, sink_error> kafka_topic_store::publish(const envelope&) {
  return unexpected(sink_error{sink_errc::rejected, fmt::format("kafka: topic {} is open read only", topic_)});
}

expected<moderation_record, moderation_error> kafka_topic_store::act(const moderation_request&) {
  return unexpected(read_only(topic_));
}

expected<void, moderation_error> kafka_topic_store::record_traffic(timestamp, std::uint64_t, std::uint64_t) {
  return unexpected(read_only(topic_));
}

expected<std::optional<moderation_record>, moderation_error> kafka_topic_store::get(std::string_view dlq_id) {
  for (const auto& r : records_) {
    if (r.dlq_id == dlq_id) return std::optional<moderation_record>(r);
  }
  return std::optional<moderation_record>();
}

expected<std::vector<moderation_record>, moderation_error> kafka_topic_store::list(moderation_status status,
                                                                                   std::size_t limit) {
  return list_after(status, {}, {}, limit);
}

expected<std::vector<moderation_record>, moderation_error> kafka_topic_store::list_after(
    moderation_status status, std::string_view after_created_at, std::string_view after_dlq_id, std::size_t limit) {
  moderation_query q;
  q.statuses = {status};
  if (!after_created_at.empty()) q.after = moderation_cursor{std::string(after_created_at), std::string(after_dlq_id)};
  q.limit = limit;
  auto page = query(q);
  return std::move(page->records);
}

expected<moderation_page, moderation_error> kafka_topic_store::query(const moderation_query& q) {
  std::vector<moderation_record> found;
  for (std::size_t i = 0; i < records_.size() && found.size() <= q.limit; ++i) {
    if (matches(q, records_[i], envelopes_[i])) found.push_back(records_[i]);
  }
  return detail::store::make_moderation_page(std::move(found), q.limit);
}

expected<unreadable_census, moderation_error> kafka_topic_store::unreadable_records() {
  return unreadable_census{skipped_, skipped_messages_};
}

expected<dlq_statistics, moderation_error> kafka_topic_store::statistics() {
  dlq_statistics stats;
  for (const auto& r : records_) {
    ++stats.total;
    ++stats.by_category[r.category];
    ++stats.by_triage[r.triage];
    ++stats.by_status[std::string(to_string(r.status))];
    ++stats.by_code[r.failure_code];
  }
  if (!envelopes_.empty()) stats.oldest_pending_created_at = envelopes_.front().created_at;
  return stats;
}

expected<std::vector<dlq_timeline_bucket>, moderation_error> kafka_topic_store::timeline(timestamp since,
                                                                                         timestamp until,
                                                                                         std::chrono::seconds width) {
  auto buckets = detail::store::empty_timeline(since, until, width);
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const auto at = envelopes_[i].created_at;
    if (at < since || at >= until) continue;
    const auto index = static_cast<std::size_t>((at - since) / width);
    if (index < buckets.size()) ++buckets[index].dead_letters_by_category[records_[i].category];
  }
  return buckets;
}

LLMDLQ_END_NAMESPACE
