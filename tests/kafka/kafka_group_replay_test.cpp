// SPDX-License-Identifier: MIT
// Replayers that share a Kafka dead-letter topic through a consumer group,
// on librdkafka's mock cluster: each reads only the partitions the group
// gives it; a replayer that stops without keeping its place, and answers
// the group no more, leaves its letters to the one the group gives its
// partitions next, which reads them again and asks the model only about
// those never asked; and one that joins during another's run takes half
// the partitions, none lost or asked twice.
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <llmdlq/kafka/producer.hpp>
#include <llmdlq/kafka/replay_source.hpp>
#include <llmdlq/llm/recovery_ladder.hpp>
#include <llmdlq/llm/replayer.hpp>
#include <llmdlq/sqlite/replay_state.hpp>

#include "catch.hpp"
#include "kafka_test_support.hpp"
#include "support/eventually.hpp"
#include "support/replay_letters.hpp"
#include "support/temp_dir.hpp"

namespace kafka_group_replay_test {

namespace {

using namespace std::chrono_literals;
using llmdlq::test::mock_cluster;

const std::string dlq_topic = "receipts-dead-letter-queue";
const std::string group = "receipt-replayers";
constexpr int partition_count = 4;
constexpr int letter_count = 200;

// Letter n (key-n) goes to partition n % 4.
int partition_of(const std::string& key) { return std::stoi(key.substr(4)) % partition_count; }

void fill_topic(const mock_cluster& cluster) {
  cluster.create_topic(dlq_topic, partition_count);
  auto producer = llmdlq::kafka_producer::open({cluster.properties(), std::chrono::seconds(10), {}});
  REQUIRE(producer.has_value());
  const std::vector<llmdlq::test::stored_failure> cut_off(letter_count, llmdlq::test::stored_failure::cut_off);
  const auto letters = llmdlq::test::replay_letters(cut_off);
  for (const auto& letter : letters) {
    const llmdlq::kafka_record record{
        dlq_topic, partition_of(letter.idempotency_key), letter.idempotency_key, llmdlq::serialize(letter), {}};
    REQUIRE(producer->send(record).has_value());
  }
}

// A model that recovers every letter at its first call, and counts the calls of each.
class recovering_model {
 public:
  explicit recovering_model(std::chrono::milliseconds latency = 1ms) : latency_(latency) {}

  llmdlq::expected<llmdlq::completion, llmdlq::call_error> answer(const llmdlq::llm_request& request) {
    int n = -1;
    for (const auto& message : request.messages) n = std::max(n, llmdlq::test::letter_of(message.content));
    {
      const std::lock_guard lock(mutex_);
      ++calls_[n];
    }
    std::this_thread::sleep_for(latency_);
    return llmdlq::completion{
        .text = llmdlq::test::recovered_answer(n), .finish_reason = "stop", .usage = {10, 10}, .model = request.model};
  }
  [[nodiscard]] std::map<int, std::size_t> calls() const {
    const std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  std::chrono::milliseconds latency_;
  mutable std::mutex mutex_;
  std::map<int, std::size_t> calls_;
};

class model_client final : public llmdlq::llm_client {
 public:
  explicit model_client(recovering_model& model) : model_(model) {}
  llmdlq::expected<llmdlq::completion, llmdlq::call_error> complete(const llmdlq::llm_request& request) override {
    return model_.answer(request);
  }
  [[nodiscard]] std::string endpoint() const override { return "test://model"; }

 private:
  recovering_model& model_;
};

// A group member's source as its replayer reads it: the partitions of the
// letters it handed out, each checked against what the group assigned it
// then; passed() goes through only while `keeps_place`.
class watched_source final : public llmdlq::replay_source {
 public:
  explicit watched_source(llmdlq::kafka_replay_source source) : source_(std::move(source)) {}

  llmdlq::expected<std::vector<llmdlq::stored_letter>, llmdlq::replay_error> next(std::string_view after,
                                                                                  std::size_t limit) override {
    auto letters = source_.next(after, limit);
    if (!letters) return letters;
    const auto assigned = source_.assigned();
    const std::set<std::int32_t> held(assigned.begin(), assigned.end());
    for (const auto& l : *letters) {
      const int partition = partition_of(l.letter.idempotency_key);
      read_from.insert(partition);
      if (!held.contains(partition)) ++outside_assignment;
    }
    return letters;
  }
  llmdlq::expected<llmdlq::letter_standing, llmdlq::replay_error> update(
      const llmdlq::stored_letter& before, const llmdlq::envelope& after,
      const llmdlq::recovery_result& result) override {
    return source_.update(before, after, result);
  }
  llmdlq::expected<llmdlq::letter_standing, llmdlq::replay_error> recheck(const llmdlq::stored_letter& l) override {
    return source_.recheck(l);
  }
  llmdlq::expected<llmdlq::letter_standing, llmdlq::replay_error> record_call(const llmdlq::stored_letter& l,
                                                                              const llmdlq::envelope& e) override {
    return source_.record_call(l, e);
  }
  llmdlq::expected<void, llmdlq::replay_error> passed(std::string_view position) override {
    if (!keeps_place) return {};
    return source_.passed(position);
  }

  [[nodiscard]] std::vector<std::int32_t> assigned() const { return source_.assigned(); }

  bool keeps_place = true;
  std::set<int> read_from;     // partitions of the letters read
  int outside_assignment = 0;  // letters of a partition the group did not assign the source when it read them

 private:
  llmdlq::kafka_replay_source source_;
};

// A private folder for the replay state.
struct state_dir {
  llmdlq::test::temp_dir dir;
  std::filesystem::path path = dir.path() / "state";
  state_dir() {
    std::filesystem::create_directory(path);
    std::filesystem::permissions(path, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
  }
  [[nodiscard]] std::filesystem::path db() const { return path / "state.db"; }
};

// One replayer of the group: its own consumer, state connection, ladder and client.
struct group_replayer {
  watched_source source;
  llmdlq::sqlite_replay_state state;
  model_client client;
  llmdlq::recovery_ladder ladder;
  llmdlq::replayer_options options;

  group_replayer(const mock_cluster& cluster, const state_dir& dir, recovering_model& model, const std::string& name)
      : group_replayer(open_source(cluster), dir, model, name) {}

  group_replayer(llmdlq::kafka_replay_source opened, const state_dir& dir, recovering_model& model,
                 const std::string& name)
      : source(std::move(opened)),
        state(*llmdlq::sqlite_replay_state::open(dir.db())),
        client(model),
        ladder(*llmdlq::recovery_ladder::create(llmdlq::test::replay_schema, client)) {
    options.dry_run = false;
    options.rate = 0;
    options.batch = 20;
    options.name = name;
    options.owner = name;
  }

  static llmdlq::kafka_replay_source open_source(const mock_cluster& cluster) {
    auto source = try_open_source(cluster);
    REQUIRE(source.has_value());
    return std::move(*source);
  }

  static llmdlq::expected<llmdlq::kafka_replay_source, llmdlq::kafka_error> try_open_source(
      const mock_cluster& cluster) {
    llmdlq::kafka_topic_options topic;
    topic.properties = cluster.properties();
    topic.properties["fetch.wait.max.ms"] = "20";
    // The mock cluster rebalances a group a second before its session timeout.
    topic.properties["session.timeout.ms"] = "3000";
    topic.properties["heartbeat.interval.ms"] = "200";
    topic.topic = dlq_topic;
    topic.group = group;
    topic.timeout = 20s;
    return llmdlq::kafka_replay_source::open(std::move(topic));
  }

  llmdlq::expected<llmdlq::replay_summary, llmdlq::replay_error> run() {
    llmdlq::replayer replayer(ladder, source, state, options);
    return replayer.run();
  }
};

using run_result = std::optional<llmdlq::expected<llmdlq::replay_summary, llmdlq::replay_error>>;

// Two replayers whose sources open at once, so both join before the
// group's first assignment (the mock cluster waits three seconds after the
// first member's join), however slowly either opens.
std::pair<std::unique_ptr<group_replayer>, std::unique_ptr<group_replayer>> open_together(const mock_cluster& cluster,
                                                                                          const state_dir& dir,
                                                                                          recovering_model& model) {
  std::optional<llmdlq::expected<llmdlq::kafka_replay_source, llmdlq::kafka_error>> first;
  std::optional<llmdlq::expected<llmdlq::kafka_replay_source, llmdlq::kafka_error>> second;
  std::thread one([&] { first = group_replayer::try_open_source(cluster); });
  std::thread other([&] { second = group_replayer::try_open_source(cluster); });
  one.join();
  other.join();
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  REQUIRE(first->has_value());
  REQUIRE(second->has_value());
  return {std::make_unique<group_replayer>(std::move(**first), dir, model, "replayer-a"),
          std::make_unique<group_replayer>(std::move(**second), dir, model, "replayer-b")};
}

// Runs both replayers at once, each in its own thread.
std::pair<llmdlq::replay_summary, llmdlq::replay_summary> run_together(group_replayer& a, group_replayer& b) {
  run_result first;
  run_result second;
  std::thread one([&] { first = a.run(); });
  std::thread other([&] { second = b.run(); });
  one.join();
  other.join();
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  INFO((*first ? "" : first->error().message));
  REQUIRE(first->has_value());
  INFO((*second ? "" : second->error().message));
  REQUIRE(second->has_value());
  return {**first, **second};
}

// Every letter was asked about once, and its payload is in the ledger once.
void check_each_asked_once(const recovering_model& model, const state_dir& dir) {
  const auto calls = model.calls();
  CHECK(calls.size() == static_cast<std::size_t>(letter_count));
  auto state = llmdlq::sqlite_replay_state::open(dir.db());
  REQUIRE(state.has_value());
  std::size_t ledger_entries = 0;
  for (int n = 0; n < letter_count; ++n) {
    INFO("letter " << n);
    const auto asked = calls.find(n);
    CHECK((asked != calls.end() && asked->second == 1));
    auto entry = state->find_output("key-" + std::to_string(n));
    REQUIRE(entry.has_value());
    if (entry->has_value()) ++ledger_entries;
  }
  CHECK(ledger_entries == static_cast<std::size_t>(letter_count));
}

const std::vector<std::int64_t> every_partition_read(partition_count, letter_count / partition_count);

}  // namespace

TEST_CASE("Two replayers in one consumer group split a topic's partitions and replay each letter once",
          "[kafka][replay][group]") {
  mock_cluster cluster;
  fill_topic(cluster);
  state_dir dir;
  recovering_model model;
  auto [one, other] = open_together(cluster, dir, model);
  group_replayer& a = *one;
  group_replayer& b = *other;
  const auto [first, second] = run_together(a, b);
  CHECK(first.finished);
  CHECK(second.finished);

  // Each read only what the group assigned it when it read, and the group
  // ends with two partitions each. Where one member's join came after the
  // group's first assignment (a slow machine), the other held every
  // partition until then, and the letters it read but did not pass are read
  // again by their new owner: reading is at least once, asking exactly once.
  CHECK(a.source.outside_assignment == 0);
  CHECK(b.source.outside_assignment == 0);
  const auto a_holds = a.source.assigned();
  const auto b_holds = b.source.assigned();
  CHECK(a_holds.size() == 2);
  CHECK(b_holds.size() == 2);
  std::set<std::int32_t> both(a_holds.begin(), a_holds.end());
  both.insert(b_holds.begin(), b_holds.end());
  CHECK(both.size() == static_cast<std::size_t>(partition_count));
  CHECK(first.seen + second.seen >= static_cast<std::size_t>(letter_count));
  CHECK(first.recovered + second.recovered == static_cast<std::size_t>(letter_count));
  check_each_asked_once(model, dir);
  // The group's place is at every partition's end.
  CHECK(llmdlq::test::committed_offsets(cluster.bootstrap(), group, dlq_topic, partition_count) ==
        every_partition_read);
}

TEST_CASE(
    "Group replay: a replayer that stops without keeping its place leaves its letters to the group and none is lost or asked twice",
    "[kafka][replay][group]") {
  mock_cluster cluster;
  fill_topic(cluster);
  state_dir dir;
  recovering_model model;
  // A, alone in the group, holds every partition; it runs forty letters
  // and commits none of them, then hangs in the group without polling, as
  // a replayer that stopped before its place was kept.
  auto a = std::make_unique<group_replayer>(cluster, dir, model, "replayer-a");
  a->options.limit = 40;
  a->source.keeps_place = false;
  const auto stopped = a->run();
  INFO((stopped ? "" : stopped.error().message));
  REQUIRE(stopped.has_value());
  CHECK_FALSE(stopped->finished);
  CHECK(stopped->selected == 40);
  CHECK(stopped->recovered == 40);
  CHECK(a->source.outside_assignment == 0);
  CHECK(a->source.assigned().size() == static_cast<std::size_t>(partition_count));

  // B joins: A answers no rebalance, so the group drops it and gives B
  // every partition from where the group stands, the start. B reads every
  // letter and asks only about the 160 A never asked about.
  group_replayer b(cluster, dir, model, "replayer-b");
  const auto whole = b.run();
  INFO((whole ? "" : whole.error().message));
  REQUIRE(whole.has_value());
  CHECK(whole->finished);
  CHECK(whole->seen == static_cast<std::size_t>(letter_count));
  CHECK(whole->recovered == static_cast<std::size_t>(letter_count - 40));
  CHECK(b.source.read_from.size() == static_cast<std::size_t>(partition_count));
  CHECK(b.source.outside_assignment == 0);
  CHECK(b.source.assigned().size() == static_cast<std::size_t>(partition_count));

  // A closes after the group dropped it: librdkafka cannot name the
  // group's protocol in that last revocation, and nothing breaks.
  a.reset();
  check_each_asked_once(model, dir);
  CHECK(llmdlq::test::committed_offsets(cluster.bootstrap(), group, dlq_topic, partition_count) ==
        every_partition_read);
}

TEST_CASE(
    "Group replay: a replayer that joins during another's run takes half the partitions and none is lost or asked twice",
    "[kafka][replay][group]") {
  mock_cluster cluster;
  fill_topic(cluster);
  state_dir dir;
  recovering_model model(20ms);
  group_replayer a(cluster, dir, model, "replayer-a");
  run_result first;
  std::thread one([&] { first = a.run(); });
  // B joins once A is under way: the group takes every partition from A and gives each of them two.
  CHECK(llmdlq::test::eventually([&] { return model.calls().size() >= 20; }, 30s));
  group_replayer b(cluster, dir, model, "replayer-b");
  auto second = b.run();
  one.join();
  REQUIRE(first.has_value());
  INFO((*first ? "" : first->error().message));
  REQUIRE(first->has_value());
  INFO((second ? "" : second.error().message));
  REQUIRE(second.has_value());
  CHECK((*first)->finished);
  CHECK(second->finished);

  CHECK(a.source.outside_assignment == 0);
  CHECK(b.source.outside_assignment == 0);
  CHECK(a.source.read_from.size() == static_cast<std::size_t>(partition_count));
  CHECK(b.source.read_from.size() == 2);
  CHECK((*first)->recovered + second->recovered == static_cast<std::size_t>(letter_count));
  check_each_asked_once(model, dir);
  CHECK(llmdlq::test::committed_offsets(cluster.bootstrap(), group, dlq_topic, partition_count) ==
        every_partition_read);
}

}  // namespace kafka_group_replay_test
