// SPDX-License-Identifier: MIT
// kafka_moderation_consumer on librdkafka's mock cluster, into the SQLite store:
// one row per dead letter, records that are not envelopes, a consumer that
// dies between the insert and the commit, and a store that fails.
#include <algorithm>
#include <set>
#include <thread>

#include <llmdlq/kafka/moderation_consumer.hpp>
#include <llmdlq/kafka/producer.hpp>
#include <llmdlq/kafka/sink.hpp>
#include <llmdlq/memory_sink.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "kafka_test_support.hpp"
#include "support/envelope_check.hpp"
#include "support/temp_dir.hpp"

namespace kafka_moderation_consumer_test {

namespace {

using llmdlq::test::committed_offsets;
using llmdlq::test::mock_cluster;

const std::string dlq_topic = "receipts-dead-letter-queue";
const std::string group = "moderation-test";

llmdlq::envelope sample(std::string key) {
  llmdlq::request_context context;
  context.idempotency_key = std::move(key);
  context.origin = {"receipt-processor", "worker-1", "receipts", 0, 1};
  return llmdlq::make_envelope({.category = llmdlq::failure_category::schema, .message = "1 schema error"},
                               R"({"total": "4250.00"})", context);
}

struct killed {};  // what the "process" dies of, between the insert and the commit

// The SQLite moderation store, seen through a sink that records every call
// and fails or dies on demand.
class store_probe final : public llmdlq::sink {
 public:
  explicit store_probe(llmdlq::sqlite_store& table) : table_(table) {}

  std::function<bool(const llmdlq::envelope&)> fail_before;  // true: fail, storing nothing
  std::function<bool(const llmdlq::envelope&)> die_after;    // true: store, then die
  std::vector<llmdlq::envelope> calls;                       // every publish, in order
  std::vector<std::string> outcomes;                         // "stored", "duplicate", "failed"

  llmdlq::expected<llmdlq::receipt, llmdlq::sink_error> publish(const llmdlq::envelope& e) override {
    calls.push_back(e);
    if (fail_before && fail_before(e)) {
      outcomes.emplace_back("failed");
      return llmdlq::unexpected(llmdlq::sink_error{llmdlq::sink_errc::unavailable, "the store is down"});
    }
    auto r = table_.publish(e);
    outcomes.emplace_back(!r ? "failed" : r->duplicate ? "duplicate" : "stored");
    if (r && die_after && die_after(e)) throw killed{};
    return r;
  }

 private:
  llmdlq::sqlite_store& table_;
};

llmdlq::kafka_moderation_consumer_options consumer_options(const mock_cluster& cluster) {
  llmdlq::kafka_moderation_consumer_options options;
  options.properties = cluster.properties();
  options.properties["group.id"] = group;
  options.properties["session.timeout.ms"] = "3000";  // the mock makes a new member wait this - 1 s
  options.properties["heartbeat.interval.ms"] = "300";
  options.topic = dlq_topic;
  options.retry_backoff = std::chrono::milliseconds(300);
  return options;
}

// Polls until `done` holds for the totals (or 30 s pass); returns the totals.
llmdlq::moderation_poll_result poll_until(llmdlq::kafka_moderation_consumer& consumer,
                                          const std::function<bool(const llmdlq::moderation_poll_result&)>& done) {
  llmdlq::moderation_poll_result total;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done(total) && std::chrono::steady_clock::now() < until)
    total += consumer.poll_once(std::chrono::milliseconds(100));
  return total;
}

std::uint64_t rows(llmdlq::sqlite_store& table) {
  auto stats = table.statistics();
  REQUIRE(stats.has_value());
  return stats->total;
}

llmdlq::kafka_producer make_producer(const mock_cluster& cluster) {
  auto producer = llmdlq::kafka_producer::open({cluster.properties(), std::chrono::seconds(5), {}});
  REQUIRE(producer.has_value());
  return std::move(*producer);
}

void produce(llmdlq::kafka_producer& producer, const llmdlq::envelope& e, std::int32_t partition = -1) {
  auto record = llmdlq::to_kafka_record(e, dlq_topic);
  record.partition = partition;
  REQUIRE(producer.send(record).has_value());
}

}  // namespace

TEST_CASE("kafka_moderation_consumer stores each dead letter once as a pending row, then commits", "[kafka]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 2);
  llmdlq::test::temp_dir dir;
  auto table = llmdlq::sqlite_store::open(dir.path() / "moderation.db");
  REQUIRE(table.has_value());
  store_probe store(*table);

  std::vector<llmdlq::envelope> letters;
  for (int i = 0; i < 5; ++i) letters.push_back(sample("receipts:0:" + std::to_string(i)));
  {
    auto sink = llmdlq::kafka_sink::open({cluster.properties(), dlq_topic, std::chrono::seconds(5), {}});
    REQUIRE(sink.has_value());
    REQUIRE(sink->publish_batch(letters).has_value());
    REQUIRE(sink->publish(letters[0]).has_value());  // a re-published dead letter: same dlq_id
    // A record that is not an envelope: it must reach an operator, not block partition 1.
    REQUIRE(sink->producer().send({dlq_topic, 1, "junk", "{\"dlq_id\": 17, \"half\": \"an envel", {}}).has_value());
  }

  auto consumer = llmdlq::kafka_moderation_consumer::open(store, consumer_options(cluster));
  REQUIRE(consumer.has_value());
  const auto total = poll_until(*consumer, [](const auto& t) { return t.stored + t.duplicates >= 7; });
  CHECK(total.stored == 6);
  CHECK(total.duplicates == 1);
  CHECK(total.unreadable == 1);
  CHECK(total.failed == 0);
  CHECK(total.commit_failures == 0);
  CHECK_FALSE(total.last_store_error.has_value());
  CHECK_FALSE(total.last_kafka_error.has_value());

  // One row per dlq_id, all pending; nothing lost, nothing twice.
  CHECK(rows(*table) == 6);
  auto stats = table->statistics();
  CHECK(stats->by_status["pending"] == 6);
  CHECK(stats->by_category["poison"] == 1);
  CHECK(stats->by_code["dlq_unreadable_record"] == 1);
  for (const auto& e : letters) {
    auto found = table->find(e.dlq_id);
    REQUIRE(found.has_value());
    REQUIRE(found->has_value());
    CHECK(**found == e);
  }

  // The unreadable record, as an operator sees it.
  const auto poison = std::find_if(store.calls.begin(), store.calls.end(), [](const auto& e) {
    return e.failure.category == llmdlq::failure_category::poison;
  });
  REQUIRE(poison != store.calls.end());
  llmdlq::test::check_envelope(*poison);
  CHECK(poison->failure.code == "dlq_unreadable_record");
  CHECK(poison->raw_response.text == "{\"dlq_id\": 17, \"half\": \"an envel");
  const auto records = llmdlq::test::read_topic(cluster.bootstrap(), dlq_topic, 2);
  const auto junk = std::find_if(records.begin(), records.end(), [](const auto& r) { return r.key == "junk"; });
  REQUIRE(junk != records.end());
  CHECK(poison->idempotency_key == "kafka:" + dlq_topic + "/1@" + std::to_string(junk->offset));
  CHECK(poison->origin.topic == dlq_topic);
  CHECK(poison->origin.partition == 1);
  CHECK(poison->origin.offset == junk->offset);
  CHECK(poison->triage.kind == llmdlq::triage_class::poison);
  CHECK_FALSE(poison->triage.auto_replayable);

  // Every record is committed.
  std::vector<std::int64_t> ends(2, 0);
  for (const auto& r : records) ends[static_cast<std::size_t>(r.partition)] = r.offset + 1;
  CHECK(records.size() == 7);
  CHECK(committed_offsets(cluster.bootstrap(), group, dlq_topic, 2) == ends);
}

TEST_CASE("kafka_moderation_consumer killed between the insert and the commit gets the record again and keeps one row",
          "[kafka][fault]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 1);
  llmdlq::test::temp_dir dir;
  auto table = llmdlq::sqlite_store::open(dir.path() / "moderation.db");
  REQUIRE(table.has_value());

  const std::vector<llmdlq::envelope> letters = {sample("a"), sample("b"), sample("c"), sample("d")};
  {
    auto producer = make_producer(cluster);
    produce(producer, letters[0]);
    produce(producer, letters[1]);
    // The third record is not an envelope: its poison envelope must get the
    // same dlq_id when it is read again.
    REQUIRE(producer.send({dlq_topic, -1, "junk", std::string("\xff\xfe binary\0", 10), {}}).has_value());
    produce(producer, letters[2]);
    produce(producer, letters[3]);
  }

  std::string killed_on;
  {
    store_probe dying(*table);
    dying.die_after = [](const llmdlq::envelope& e) { return e.failure.category == llmdlq::failure_category::poison; };
    auto consumer = llmdlq::kafka_moderation_consumer::open(dying, consumer_options(cluster));
    REQUIRE(consumer.has_value());
    bool died = false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!died && std::chrono::steady_clock::now() < until) {
      try {
        (void)consumer->poll_once(std::chrono::milliseconds(100));
      } catch (const killed&) {
        died = true;
      }
    }
    REQUIRE(died);
    killed_on = dying.calls.back().dlq_id;
    CHECK(dying.outcomes == std::vector<std::string>{"stored", "stored", "stored"});
    CHECK(rows(*table) == 3);
    // The two records before it are committed; the one it died on is not.
    CHECK(committed_offsets(cluster.bootstrap(), group, dlq_topic, 1) == std::vector<std::int64_t>{2});
  }  // the consumer is gone, without committing

  store_probe store(*table);
  auto consumer = llmdlq::kafka_moderation_consumer::open(store, consumer_options(cluster));
  REQUIRE(consumer.has_value());
  const auto total = poll_until(*consumer, [](const auto& t) { return t.stored + t.duplicates >= 3; });
  CHECK(total.duplicates == 1);  // the record it died on, already stored
  CHECK(total.unreadable == 1);
  CHECK(total.stored == 2);
  REQUIRE_FALSE(store.calls.empty());
  CHECK(store.calls.front().dlq_id == killed_on);  // the same dlq_id on redelivery

  // Nothing lost, nothing twice: five records, five rows.
  CHECK(rows(*table) == 5);
  CHECK(table->statistics()->by_category["poison"] == 1);
  for (const auto& e : letters) CHECK(table->find(e.dlq_id)->has_value());
  CHECK(committed_offsets(cluster.bootstrap(), group, dlq_topic, 1) == std::vector<std::int64_t>{5});
}

TEST_CASE("kafka_moderation_consumer: while the store fails nothing is committed, the record is stored after recovery "
          "and other partitions go on",
          "[kafka][fault]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 2);
  llmdlq::test::temp_dir dir;
  auto table = llmdlq::sqlite_store::open(dir.path() / "moderation.db");
  REQUIRE(table.has_value());

  const std::vector<llmdlq::envelope> a = {sample("a1"), sample("a2"), sample("a3")};
  const std::vector<llmdlq::envelope> b = {sample("b1"), sample("b2"), sample("b3")};
  {
    auto producer = make_producer(cluster);
    for (const auto& e : a) produce(producer, e, 0);
    for (const auto& e : b) produce(producer, e, 1);
  }

  store_probe store(*table);
  int failures_left = 3;
  store.fail_before = [&](const llmdlq::envelope& e) { return e.dlq_id == a[1].dlq_id && failures_left-- > 0; };
  auto consumer = llmdlq::kafka_moderation_consumer::open(store, consumer_options(cluster));
  REQUIRE(consumer.has_value());

  // Until the first failure.
  auto total = poll_until(*consumer, [](const auto& t) { return t.failed >= 1; });
  REQUIRE(total.failed == 1);
  REQUIRE(total.last_store_error.has_value());
  CHECK(total.last_store_error->code == llmdlq::sink_errc::unavailable);
  CHECK(total.last_store_error->message == "the store is down");
  CHECK_FALSE(total.last_kafka_error.has_value());
  // a1 is committed, a2 is not (and neither is anything after it).
  CHECK(committed_offsets(cluster.bootstrap(), group, dlq_topic, 2)[0] == 1);

  total += poll_until(*consumer, [&](const auto& t) { return total.stored + t.stored >= 6; });
  CHECK(total.stored == 6);
  CHECK(total.failed == 3);
  CHECK(total.duplicates == 0);
  CHECK(rows(*table) == 6);
  CHECK(committed_offsets(cluster.bootstrap(), group, dlq_topic, 2) == std::vector<std::int64_t>{3, 3});

  // Partition 0 kept its order: a2 was tried until it was stored, and a3 only then.
  std::vector<std::string> partition0;
  std::size_t last_a2 = 0, b3 = 0;
  for (std::size_t i = 0; i < store.calls.size(); ++i) {
    const auto& id = store.calls[i].dlq_id;
    if (id == a[0].dlq_id || id == a[1].dlq_id || id == a[2].dlq_id) {
      partition0.push_back(id + ":" + store.outcomes[i]);
    }
    if (id == a[1].dlq_id) last_a2 = i;
    if (id == b[2].dlq_id) b3 = i;
  }
  CHECK(partition0 == std::vector<std::string>{a[0].dlq_id + ":stored", a[1].dlq_id + ":failed",
                                               a[1].dlq_id + ":failed", a[1].dlq_id + ":failed",
                                               a[1].dlq_id + ":stored", a[2].dlq_id + ":stored"});
  // Partition 1 did not wait for partition 0's store to come back.
  CHECK(b3 < last_a2);
}

TEST_CASE("kafka_moderation_consumer::run polls until stop is requested and returns the totals", "[kafka]") {
  mock_cluster cluster;
  cluster.create_topic(dlq_topic, 1);
  llmdlq::test::temp_dir dir;
  auto table = llmdlq::sqlite_store::open(dir.path() / "moderation.db");
  REQUIRE(table.has_value());
  {
    auto producer = make_producer(cluster);
    produce(producer, sample("r1"));
    produce(producer, sample("r2"));
  }
  auto consumer = llmdlq::kafka_moderation_consumer::open(*table, consumer_options(cluster));
  REQUIRE(consumer.has_value());
  llmdlq::moderation_poll_result total;
  {
    std::jthread runner([&](std::stop_token stop) { total = consumer->run(stop, std::chrono::milliseconds(50)); });
    CHECK(llmdlq::test::eventually([&] { return rows(*table) == 2; }, std::chrono::seconds(30)));
  }  // stop requested and joined
  CHECK(total.stored == 2);
  consumer->close();
  CHECK(consumer->poll_once(std::chrono::milliseconds(10)).stored == 0);
}

TEST_CASE("kafka_moderation_consumer reports bad configuration as an error", "[kafka]") {
  llmdlq::memory_sink store;
  llmdlq::kafka_moderation_consumer_options options;
  options.properties = {{"bootstrap.servers", "localhost:1"}, {"no.such.property", "x"}};
  auto consumer = llmdlq::kafka_moderation_consumer::open(store, options);
  REQUIRE_FALSE(consumer.has_value());
  CHECK(consumer.error().code == llmdlq::kafka_errc::invalid_configuration);
  CHECK(llmdlq::is_permanent(consumer.error().code));
  options.properties = {{"bootstrap.servers", "localhost:1"}};
  options.topic.clear();
  consumer = llmdlq::kafka_moderation_consumer::open(store, options);
  REQUIRE_FALSE(consumer.has_value());
  CHECK(consumer.error().code == llmdlq::kafka_errc::invalid_configuration);
}

}  // namespace kafka_moderation_consumer_test
