// SPDX-License-Identifier: MIT
// Programs run as processes against a mock cluster this test owns: the
// README's moderation service, and examples/kafka_worker, whose every input
// is committed only once its result or dead letter is durable, whose poison
// inputs block nothing, and which commits nothing while the brokers of its
// DLQ and output are down.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <map>
#include <set>

#include <llmdlq/kafka/sink.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "kafka_test_support.hpp"
#include "support/temp_dir.hpp"

extern char** environ;

namespace kafka_process_test {


namespace {

using namespace std::string_literals;
using llmdlq::test::committed_offsets;
using llmdlq::test::mock_cluster;
using llmdlq::test::read_topic;

const std::string input = "receipts-llm-responses";
const std::string output = "receipts-extracted";
const std::string dlq = "receipts-dead-letter-queue";
const std::string group = "receipts-worker";

// A program started with its output going to a file; killed if the test
// ends before it does.
class child_process {
 public:
  child_process(const std::vector<std::string>& args, const std::string& log) {
    std::vector<char*> argv;
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    REQUIRE(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
  }
  ~child_process() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  void signal(int number) const { kill(pid_, number); }

  // The exit status, or -1 if it was still running after `timeout`.
  int wait(std::chrono::seconds timeout = std::chrono::seconds(60)) {
    int status = 0;
    const bool exited = llmdlq::test::eventually([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, timeout);
    if (!exited) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace

TEST_CASE("The README's moderation service stores the DLQ topic's envelopes and stops on SIGTERM", "[kafka]") {
  mock_cluster cluster;
  cluster.create_topic(dlq, 2);
  llmdlq::test::temp_dir dir;
  const auto db = (dir.path() / "moderation.db").string();
  const auto log = (dir.path() / "service.log").string();
  {
    auto sink = llmdlq::kafka_sink::open({cluster.properties(), dlq, std::chrono::seconds(5), {}});
    REQUIRE(sink.has_value());
    llmdlq::request_context context;
    for (const auto* key : {"receipts:0:1", "receipts:0:2", "receipts:1:1"}) {
      context.idempotency_key = key;
      REQUIRE(sink->publish(
          llmdlq::make_envelope({.category = llmdlq::failure_category::syntax, .message = "not JSON"}, "{", context)));
    }
  }
  auto table = llmdlq::sqlite_store::open(db);  // the service's store, read alongside it
  REQUIRE(table.has_value());

  child_process service({README_MODERATION_SERVICE, cluster.bootstrap(), db}, log);
  const bool stored = llmdlq::test::eventually([&] {
    auto stats = table->statistics();
    return stats && stats->total == 3;
  }, std::chrono::seconds(30));
  service.signal(SIGTERM);
  const int status = service.wait();
  INFO(llmdlq::test::slurp(log));
  CHECK(stored);
  CHECK(status == 0);
  CHECK(committed_offsets(cluster.bootstrap(), "receipts-moderation", dlq, 2) ==
        llmdlq::test::consumed_all(cluster.bootstrap(), dlq, 2));
}

namespace {

// Inputs by partition: a poison response first on partition 0.
const std::vector<std::pair<int, std::string>> inputs = {
    {0, "{\"merchant\": \"AH\0\", \"total\": 1}"s},  // NUL byte: poison
    {0, R"({"merchant": "Albert Heijn", "total": 23.47})"},
    {1, R"({"merchant": "Keells", "total": "4250.00"})"},  // schema
    {1, "```json\n{\"merchant\": \"Lidl\", \"total\": 3.99}\n```"},
    {2, R"({"merchant": "Jumbo", "total": 8.10})"},
    {2, R"({"merchant": "Пятёрочка", "total": 13)"},  // truncated
};
const std::set<std::string> accepted_keys = {input + "/0@1", input + "/1@1", input + "/2@0"};
const std::set<std::string> dead_keys = {input + "/0@0", input + "/1@0", input + "/2@1"};

// The worker's command line: fast reconnects, short delivery timeouts.
std::vector<std::string> worker_args(const mock_cluster& cluster) {
  std::vector<std::string> args = {KAFKA_WORKER, "--bootstrap", cluster.bootstrap(), "--max-messages",
                                   std::to_string(inputs.size()), "--delivery-timeout-ms", "1000"};
  for (const auto& [name, value] : cluster.properties()) {
    if (name != "bootstrap.servers") args.insert(args.end(), {"-X", name + "=" + value});
  }
  return args;
}

void fill_input(const mock_cluster& cluster) {
  auto producer = llmdlq::kafka_producer::open({cluster.properties(), std::chrono::seconds(5), {}});
  REQUIRE(producer.has_value());
  for (const auto& [partition, text] : inputs) REQUIRE(producer->send({input, partition, {}, text, {}}).has_value());
}

// Each key in `topic` exactly once, and nothing else.
void check_once(const mock_cluster& cluster, const std::string& topic, const std::set<std::string>& keys) {
  const auto records = read_topic(cluster.bootstrap(), topic, 3);
  std::multiset<std::string> found;
  for (const auto& r : records) found.insert(r.key.value_or(""));
  CHECK(found == std::multiset<std::string>(keys.begin(), keys.end()));
}

}  // namespace

TEST_CASE("kafka_worker commits every input once its result or dead letter is durable, and poison blocks nothing",
          "[kafka]") {
  mock_cluster cluster;
  for (const auto& topic : {input, output, dlq}) cluster.create_topic(topic, 3);
  fill_input(cluster);
  llmdlq::test::temp_dir dir;
  const auto log = (dir.path() / "worker.log").string();

  child_process worker(worker_args(cluster), log);
  const int status = worker.wait();
  INFO(llmdlq::test::slurp(log));
  REQUIRE(status == 0);

  CHECK(committed_offsets(cluster.bootstrap(), group, input, 3) == std::vector<std::int64_t>{2, 2, 2});
  check_once(cluster, output, accepted_keys);
  check_once(cluster, dlq, dead_keys);
  for (const auto& r : read_topic(cluster.bootstrap(), dlq, 3)) {
    if (r.key == input + "/0@0") CHECK(r.header("category") == "poison");
    CHECK(r.header("origin-topic") == input);
  }
}

TEST_CASE("kafka_worker: with the DLQ's and the output's broker down nothing is committed, and after recovery every "
          "input is done exactly once",
          "[kafka][fault]") {
  mock_cluster cluster(2);
  cluster.create_topic(input, 3, 1);   // the input on broker 1
  cluster.create_topic(output, 3, 2);  // results and dead letters on broker 2
  cluster.create_topic(dlq, 3, 2);
  REQUIRE(rd_kafka_mock_coordinator_set(cluster.get(), "group", group.c_str(), 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
  fill_input(cluster);
  llmdlq::test::temp_dir dir;
  const auto log = (dir.path() / "worker.log").string();

  REQUIRE(rd_kafka_mock_broker_set_down(cluster.get(), 2) == RD_KAFKA_RESP_ERR_NO_ERROR);
  child_process worker(worker_args(cluster), log);
  // The worker reads inputs and fails to make them durable...
  // ... and tries again a few times, without giving up on them.
  const auto retries = [&] {
    const std::string text = llmdlq::test::slurp(log);
    std::size_t n = 0;
    for (auto at = text.find(" retry: "); at != std::string::npos; at = text.find(" retry: ", at + 1)) ++n;
    return n;
  };
  const bool retrying = llmdlq::test::eventually([&] { return retries() >= 3; }, std::chrono::seconds(30));
  INFO(llmdlq::test::slurp(log));
  REQUIRE(retrying);
  CHECK(llmdlq::test::slurp(log).find("dead-lettered") == std::string::npos);
  CHECK(llmdlq::test::slurp(log).find("accepted") == std::string::npos);
  // ...and commits nothing meanwhile.
  CHECK(committed_offsets(cluster.bootstrap(), group, input, 3) == std::vector<std::int64_t>{-1, -1, -1});

  REQUIRE(rd_kafka_mock_broker_set_up(cluster.get(), 2) == RD_KAFKA_RESP_ERR_NO_ERROR);
  const int status = worker.wait();
  INFO(llmdlq::test::slurp(log));
  REQUIRE(status == 0);
  CHECK(committed_offsets(cluster.bootstrap(), group, input, 3) == std::vector<std::int64_t>{2, 2, 2});
  check_once(cluster, output, accepted_keys);
  check_once(cluster, dlq, dead_keys);
}

}  // namespace kafka_process_test
