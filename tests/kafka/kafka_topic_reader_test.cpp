// SPDX-License-Identifier: MIT
// A Kafka dead-letter topic read without a consumer group, on librdkafka's
// mock cluster: kafka_replay_source (the letters with resumable positions)
// and kafka_topic_store (the topic as a read-only moderation store).
#include <map>
#include <set>

#include <llmdlq/kafka/producer.hpp>
#include <llmdlq/kafka/replay_source.hpp>
#include <llmdlq/kafka/sink.hpp>
#include <llmdlq/kafka/topic_store.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"
#include "kafka_test_support.hpp"
#include "support/envelope_check.hpp"

namespace kafka_topic_reader_test {

namespace {

using llmdlq::test::mock_cluster;

const std::string dlq_topic = "receipts-dead-letter-queue";

llmdlq::envelope letter(const std::string& key, llmdlq::failure_category category, std::string_view created_at) {
  llmdlq::request_context context;
  context.idempotency_key = key;
  context.versions.schema = category == llmdlq::failure_category::syntax ? "receipt-v3" : "receipt-v4";
  llmdlq::process_options options;
  options.failure_code_prefix = "ocr";
  auto e = llmdlq::make_envelope({.category = category, .message = "the answer failed"}, "{\"total\": 1,,}", context,
                                 options);
  e.created_at = llmdlq::parse_rfc3339(created_at).value();
  return llmdlq::test::check_envelope(std::move(e));
}

// Publishes `letters` through kafka_sink (keyed by idempotency key, so
// spread over the partitions) and `junk` as plain records that are no envelopes.
void fill_topic(const mock_cluster& cluster, const std::vector<llmdlq::envelope>& letters,
                const std::vector<std::string>& junk = {}) {
  auto sink = llmdlq::kafka_sink::open({cluster.properties(), dlq_topic, std::chrono::seconds(10), {}});
  REQUIRE(sink.has_value());
  REQUIRE(sink->publish_batch(letters).has_value());
  auto producer = llmdlq::kafka_producer::open({cluster.properties(), std::chrono::seconds(10), {}});
  REQUIRE(producer.has_value());
  for (const auto& value : junk) REQUIRE(producer->send({dlq_topic, 1, "", value, {}}).has_value());
}

llmdlq::kafka_topic_options topic_options(const mock_cluster& cluster) {
  llmdlq::kafka_topic_options options;
  options.properties = cluster.properties();
  options.properties["fetch.wait.max.ms"] = "20";  // each page waits for every partition's end
  options.topic = dlq_topic;
  return options;
}

std::vector<llmdlq::envelope> twelve_letters() {
  std::vector<llmdlq::envelope> letters;
  for (int i = 0; i < 12; ++i) {
    const auto category = i % 3 == 0 ? llmdlq::failure_category::schema : llmdlq::failure_category::syntax;
    letters.push_back(letter("receipts:" + std::to_string(i), category,
                             "2026-03-0" + std::to_string(1 + i % 4) + "T10:00:00.00" + std::to_string(i % 10) + "Z"));
  }
  return letters;
}

}  // namespace

TEST_CASE("kafka_replay_source reads every letter on every partition once, in pages, and resumes at any position",
          "[kafka][replay]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 3);
  const auto letters = twelve_letters();
  fill_topic(cluster, letters, {"not an envelope", "{\"also\": \"not one\"}"});
  auto source = llmdlq::kafka_replay_source::open(topic_options(cluster));
  REQUIRE(source.has_value());
  CHECK(source->topic() == dlq_topic);

  // Pages of five, each resuming after the last letter of the one before.
  std::vector<llmdlq::stored_letter> read;
  std::string position;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 10);
    auto page = source->next(position, 5);
    REQUIRE(page.has_value());
    CHECK(page->size() <= 5);
    if (page->empty()) break;
    position = page->back().position;
    for (auto& l : *page) read.push_back(std::move(l));
  }
  std::multiset<std::string> ids;
  for (const auto& l : read) ids.insert(l.letter.dlq_id);
  std::multiset<std::string> published;
  for (const auto& e : letters) published.insert(e.dlq_id);
  CHECK(ids == published);  // each once: no letter lost at a page's edge, none twice
  CHECK(source->skipped() == 2);
  std::map<std::string, std::string> sent;
  for (const auto& e : letters) sent[e.dlq_id] = llmdlq::serialize(e);
  for (const auto& l : read) CHECK(llmdlq::serialize(l.letter) == sent[l.letter.dlq_id]);

  // From the position after any letter, the rest comes, and only the rest.
  for (std::size_t at = 0; at < read.size(); ++at) {
    auto rest = source->next(read[at].position, 100);
    REQUIRE(rest.has_value());
    std::set<std::string> expected;
    for (std::size_t i = at + 1; i < read.size(); ++i) expected.insert(read[i].letter.dlq_id);
    std::set<std::string> got;
    for (const auto& l : *rest) got.insert(l.letter.dlq_id);
    CHECK(got == expected);
  }

  // A letter published after the end is read from the last position.
  const auto late = letter("receipts:late", llmdlq::failure_category::schema, "2026-03-09T00:00:00.000Z");
  fill_topic(cluster, {late});
  auto after_end = source->next(position, 100);
  REQUIRE(after_end.has_value());
  REQUIRE(after_end->size() == 1);
  CHECK(after_end->front().letter.dlq_id == late.dlq_id);

  // A position it cannot read starts every partition from the beginning.
  auto from_start = source->next("garbage,1:x", 100);
  REQUIRE(from_start.has_value());
  CHECK(from_start->size() == letters.size() + 1);
}

TEST_CASE("kafka_replay_source: an empty topic has no letters, and a replay writes nothing to a topic", "[kafka][replay]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 2);
  auto source = llmdlq::kafka_replay_source::open(topic_options(cluster));
  REQUIRE(source.has_value());
  auto none = source->next("", 10);
  REQUIRE(none.has_value());
  CHECK(none->empty());
  const llmdlq::stored_letter l{letter("k", llmdlq::failure_category::syntax, "2026-03-01T00:00:00.000Z"), "0:0"};
  CHECK(source->recheck(l).value() == llmdlq::letter_standing::ours);
  CHECK(source->record_call(l, l.letter).value() == llmdlq::letter_standing::ours);
}

TEST_CASE("kafka_replay_source and kafka_topic_store report what they cannot open as typed errors", "[kafka][replay]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 1);
  auto options = topic_options(cluster);

  auto no_name = options;
  no_name.topic.clear();
  auto unnamed = llmdlq::kafka_replay_source::open(no_name);
  REQUIRE_FALSE(unnamed.has_value());
  CHECK(unnamed.error().code == llmdlq::kafka_errc::invalid_configuration);

  auto bad_property = options;
  bad_property.properties["no.such.property"] = "1";
  auto refused = llmdlq::kafka_topic_store::open(bad_property);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == llmdlq::kafka_errc::invalid_configuration);
  CHECK(refused.error().message.find("no.such.property") != std::string::npos);

  auto nobody = options;
  nobody.properties["bootstrap.servers"] = "127.0.0.1:1";
  nobody.timeout = std::chrono::milliseconds(500);
  auto unanswered = llmdlq::kafka_replay_source::open(nobody);
  REQUIRE_FALSE(unanswered.has_value());
  CHECK_FALSE(llmdlq::is_permanent(unanswered.error().code));
}

TEST_CASE(
    "kafka_replay_source: a cluster that stops answering is source_unavailable, a topic it refuses source_refused",
    "[kafka][replay][errors]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 1);
  fill_topic(cluster, twelve_letters());
  auto options = topic_options(cluster);
  options.timeout = std::chrono::milliseconds(1500);

  SECTION("the broker is down") {
    auto source = llmdlq::kafka_replay_source::open(options);
    REQUIRE(source.has_value());
    REQUIRE(rd_kafka_mock_broker_set_down(cluster.get(), 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
    auto page = source->next("", 100);
    REQUIRE_FALSE(page.has_value());
    CHECK(page.error().code == llmdlq::replay_errc::source_unavailable);
    CHECK_FALSE(llmdlq::is_permanent(page.error().code));
  }
  SECTION("the topic is not authorized") {
    auto source = llmdlq::kafka_replay_source::open(options);
    REQUIRE(source.has_value());
    // Every fetch from now on is refused.
    for (int i = 0; i < 100; ++i) {
      rd_kafka_mock_push_request_errors(cluster.get(), 1 /* Fetch */, 1, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
    }
    auto page = source->next("", 100);
    REQUIRE_FALSE(page.has_value());
    CHECK(page.error().code == llmdlq::replay_errc::source_refused);
    CHECK(llmdlq::is_permanent(page.error().code));
    // The topic store reads the same way: the refusal is kafka_errc::rejected.
    auto store = llmdlq::kafka_topic_store::open(options);
    REQUIRE_FALSE(store.has_value());
    CHECK(store.error().code == llmdlq::kafka_errc::rejected);
  }
}

TEST_CASE("kafka_topic_store: the topic's letters as pending records, each dlq_id once, queried like any store",
          "[kafka][moderation]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 3);
  auto letters = twelve_letters();
  fill_topic(cluster, letters, {"not an envelope"});
  fill_topic(cluster, {letters[4]});  // a redelivery: one record still
  auto store = llmdlq::kafka_topic_store::open(topic_options(cluster));
  REQUIRE(store.has_value());
  auto& topic = **store;
  CHECK(topic.skipped() == 1);
  const auto census = topic.unreadable_records();  // named as list and stats name them
  REQUIRE(census.has_value());
  CHECK(census->count == 1);
  REQUIRE(census->records.size() == 1);
  CHECK(census->records[0].dlq_id.rfind("partition ", 0) == 0);
  CHECK(census->records[0].dlq_id.find(" offset ") != std::string::npos);
  CHECK(census->records[0].reason.rfind("envelope: ", 0) == 0);

  auto stats = topic.statistics();
  REQUIRE(stats.has_value());
  CHECK(stats->total == letters.size());
  CHECK(stats->by_category == std::map<std::string, std::uint64_t>{{"schema", 4}, {"syntax", 8}});
  CHECK(stats->by_status == std::map<std::string, std::uint64_t>{{"pending", 12}});
  CHECK(stats->oldest_pending_created_at == llmdlq::parse_rfc3339("2026-03-01T10:00:00.000Z"));

  // Pages in created_at, dlq_id order, every record once.
  llmdlq::moderation_query q;
  q.limit = 5;
  std::vector<std::string> order;
  for (;;) {
    auto page = topic.query(q);
    REQUIRE(page.has_value());
    for (const auto& r : page->records) {
      CHECK(r.status == llmdlq::moderation_status::pending);
      if (!order.empty()) CHECK(order.back() < r.created_at + "/" + r.dlq_id);
      order.push_back(r.created_at + "/" + r.dlq_id);
    }
    if (!page->more) break;
    q.after = page->next;
  }
  CHECK(order.size() == letters.size());

  llmdlq::moderation_query schema_only;
  schema_only.categories = {"schema"};
  schema_only.schema_version = "receipt-v4";
  CHECK(topic.query(schema_only).value().records.size() == 4);
  schema_only.schema_version = "receipt-v3";
  CHECK(topic.query(schema_only).value().records.empty());

  auto one = topic.get(letters[7].dlq_id);
  REQUIRE(one.has_value());
  REQUIRE(one->has_value());
  CHECK((*one)->envelope_json == llmdlq::serialize(letters[7]));
  CHECK((*one)->raw_response == "{\"total\": 1,,}");
  CHECK_FALSE(topic.get("no-such-id").value().has_value());

  const auto day = std::chrono::hours(24);
  auto timeline = topic.timeline(*llmdlq::parse_rfc3339("2026-03-01T00:00:00.000Z"),
                                 *llmdlq::parse_rfc3339("2026-03-05T00:00:00.000Z"), day);
  REQUIRE(timeline.has_value());
  REQUIRE(timeline->size() == 4);
  for (const auto& bucket : *timeline) {
    std::uint64_t letters_that_day = 0;
    for (const auto& [category, count] : bucket.dead_letters_by_category) letters_that_day += count;
    CHECK(letters_that_day == 3);
  }

  // Read only: nothing is written to the topic, and the refusals say so.
  auto published = topic.publish(letters[0]);
  REQUIRE_FALSE(published.has_value());
  CHECK(published.error().code == llmdlq::sink_errc::rejected);
  auto acted = topic.act({letters[0].dlq_id, llmdlq::moderation_action::claim, "ops", "", std::nullopt, std::nullopt});
  REQUIRE_FALSE(acted.has_value());
  CHECK(acted.error().message.find("read only") != std::string::npos);
  CHECK_FALSE(topic.record_traffic(llmdlq::system_now(), 1, 1).has_value());
  CHECK(llmdlq::test::read_topic(cluster.bootstrap(), dlq_topic, 3).size() == letters.size() + 2);
}

}  // namespace kafka_topic_reader_test
