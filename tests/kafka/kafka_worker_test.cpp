// SPDX-License-Identifier: MIT
// kafka_worker on librdkafka's mock cluster: results and dead letters written
// once, a handler that fails mid-batch writes nothing and reads the batch
// again, an abortable broker error aborts the transaction and the batch
// comes again, a late commit is finished rather than rewound, and a fenced
// producer stops the worker with a typed error.
//
// The mock cluster (librdkafka 2.0.2 and later alike) takes transactions
// without their effects: it writes no commit or abort markers (a
// read_committed consumer sees aborted records), stores no offsets sent to
// a transaction, and does not fence an older producer of a transactional
// id. So these tests check what the worker does, and what it writes only
// where nothing was aborted.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <llmdlq/kafka/worker.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"
#include "kafka_test_support.hpp"

namespace kafka_worker_test {

namespace {

using llmdlq::test::mock_cluster;
using llmdlq::test::read_topic;

const std::string input = "worker-in";
const std::string output = "worker-out";
const std::string dlq = "worker-dlq";

// Inputs "0".."n-1" over three partitions; the odd ones are not JSON objects
// the handler accepts.
void fill(const mock_cluster& cluster, int n) {
  for (const auto& topic : {input, output, dlq}) cluster.create_topic(topic, 3);
  auto producer = llmdlq::kafka_producer::open({cluster.properties(), std::chrono::seconds(5), {}});
  REQUIRE(producer.has_value());
  std::vector<llmdlq::kafka_record> records;
  for (int i = 0; i < n; ++i) records.push_back({input, i % 3, {}, std::to_string(i), {}});
  REQUIRE(producer->send_batch(records).has_value());
}

// Accepts even numbers; dead-letters odd ones, keyed by the input's place.
llmdlq::expected<llmdlq::kafka_outcome, std::string> judge(const llmdlq::kafka_input& in) {
  if (std::stoi(std::string(in.value)) % 2 == 0)
    return llmdlq::kafka_outcome::accept(R"({"n": )" + std::string(in.value) + "}");
  llmdlq::request_context context;
  context.idempotency_key = in.position();
  context.origin.topic = std::string(in.topic);
  context.origin.partition = in.partition;
  context.origin.offset = in.offset;
  return llmdlq::kafka_outcome::reject(
      llmdlq::make_envelope({.category = llmdlq::failure_category::schema, .message = "odd"}, in.value, context));
}

llmdlq::kafka_worker_options options(const mock_cluster& cluster, std::string transactional_id) {
  llmdlq::kafka_worker_options o;
  o.properties = cluster.properties();
  o.input_topic = input;
  o.output_topic = output;
  o.dlq_topic = dlq;
  o.group = "worker-test";
  o.transactional_id = std::move(transactional_id);
  o.max_batch = 10;
  o.delivery_timeout = std::chrono::seconds(5);
  return o;
}

// Polls until `n` inputs are committed or a poll fails; the errors seen.
std::vector<llmdlq::kafka_error> run_until(llmdlq::kafka_worker& worker, std::size_t n, std::size_t& committed) {
  std::vector<llmdlq::kafka_error> errors;
  for (int polls = 0; committed < n && polls < 200 && errors.size() < 20; ++polls) {
    auto done = worker.poll_once(std::chrono::milliseconds(500));
    if (done) committed += done->committed();
    else errors.push_back(done.error());
  }
  return errors;
}

// How often each key is in `topic`.
std::map<std::string, int> keys_in(const mock_cluster& cluster, const std::string& topic) {
  std::map<std::string, int> keys;
  for (const auto& r : read_topic(cluster.bootstrap(), topic, 3)) ++keys[r.key.value_or("")];
  return keys;
}

}  // namespace

TEST_CASE("kafka_worker writes each input's result or dead letter once, in transactions or not", "[kafka]") {
  const std::string id = GENERATE(std::string("worker-test-1"), std::string());
  INFO("transactional id: " << id);
  mock_cluster cluster;
  fill(cluster, 40);
  auto worker = llmdlq::kafka_worker::open(options(cluster, id), judge);
  REQUIRE(worker.has_value());
  CHECK(worker->exactly_once() == !id.empty());
  std::size_t committed = 0;
  const auto errors = run_until(*worker, 40, committed);
  CHECK(errors.empty());
  CHECK(committed == 40);

  const auto results = keys_in(cluster, output);
  const auto letters = keys_in(cluster, dlq);
  CHECK(results.size() == 20);
  CHECK(letters.size() == 20);
  for (const auto& [key, n] : results) CHECK(n == 1);
  for (const auto& [key, n] : letters) CHECK(n == 1);
  for (const auto& r : read_topic(cluster.bootstrap(), dlq, 3)) {
    CHECK(r.header("category") == "schema");
    CHECK(r.header("origin-topic") == input);
  }
  if (id.empty()) {  // the mock stores no offsets sent to a transaction
    CHECK(llmdlq::test::committed_offsets(cluster.bootstrap(), "worker-test", input, 3) ==
          std::vector<std::int64_t>{14, 13, 13});
  }
}

TEST_CASE("kafka_worker: a handler that fails mid-batch writes nothing and the batch is read again", "[kafka]") {
  const std::string id = GENERATE(std::string("worker-test-2"), std::string());
  INFO("transactional id: " << id);
  mock_cluster cluster;
  fill(cluster, 30);
  std::map<std::string, int> judged;   // position: how often the handler saw it
  std::vector<std::string> this_poll;  // what the handler saw in the current poll
  bool failed_once = false;
  auto worker = llmdlq::kafka_worker::open(
      options(cluster, id), [&](const llmdlq::kafka_input& in) -> llmdlq::expected<llmdlq::kafka_outcome, std::string> {
        ++judged[in.position()];
        this_poll.push_back(in.position());
        if (!failed_once && judged.size() == 5) {
          failed_once = true;
          return llmdlq::unexpected(std::string("the model did not answer"));
        }
        return judge(in);
      });
  REQUIRE(worker.has_value());

  // The batches until the failure (the fifth input judged), wherever the
  // batches' bounds fall.
  std::size_t committed = 0;
  std::optional<llmdlq::kafka_error> failure;
  std::vector<std::string> failed_batch;
  for (int polls = 0; !failure && committed < 30 && polls < 200; ++polls) {
    this_poll.clear();
    auto done = worker->poll_once(std::chrono::milliseconds(500));
    if (done) committed += done->committed();
    else failure = done.error();
  }
  failed_batch = this_poll;
  REQUIRE(failure.has_value());
  CHECK(failure->code == llmdlq::kafka_errc::aborted);
  CHECK(failure->message.find("the model did not answer") != std::string::npos);
  // Nothing of the failed batch is on the topics: only what was committed.
  std::size_t written = 0;
  for (const auto& topic : {output, dlq}) written += keys_in(cluster, topic).size();
  CHECK(written == committed);

  const auto errors = run_until(*worker, 30, committed);
  CHECK(errors.empty());
  CHECK(committed == 30);
  // The failed batch's inputs, up to the one that failed, were read again
  // and judged twice; every other input once.
  CHECK(judged.size() == 30);
  for (const auto& [position, n] : judged) {
    INFO(position);
    const bool in_failed_batch = std::find(failed_batch.begin(), failed_batch.end(), position) != failed_batch.end();
    CHECK(n == (in_failed_batch ? 2 : 1));
  }
  written = 0;
  for (const auto& topic : {output, dlq}) {
    for (const auto& [key, n] : keys_in(cluster, topic)) {
      CHECK(n == 1);
      ++written;
    }
  }
  CHECK(written == 30);
}

TEST_CASE("kafka_worker: a transaction the brokers refuse is aborted and its batch comes again", "[kafka]") {
  mock_cluster cluster;
  fill(cluster, 20);
  std::map<std::string, int> judged;
  auto worker = llmdlq::kafka_worker::open(options(cluster, "worker-test-3"), [&](const llmdlq::kafka_input& in) {
    ++judged[in.position()];
    return judge(in);
  });
  REQUIRE(worker.has_value());
  // The group coordinator refuses the first offsets sent to a transaction,
  // as it does for a member a rebalance left behind.
  constexpr std::int16_t txn_offset_commit = 28;
  rd_kafka_mock_push_request_errors(cluster.get(), txn_offset_commit, 1, RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION);
  std::size_t committed = 0;
  const auto errors = run_until(*worker, 20, committed);
  REQUIRE(errors.size() == 1);
  CHECK(errors.front().code == llmdlq::kafka_errc::aborted);
  CHECK(committed == 20);
  std::size_t twice = 0;
  for (const auto& [position, n] : judged) twice += n == 2 ? 1 : 0;
  CHECK(twice >= 1);
  CHECK(judged.size() == 20);
}

TEST_CASE("kafka_worker: a fenced producer stops the worker with kafka_errc::fenced", "[kafka]") {
  mock_cluster cluster;
  fill(cluster, 10);
  auto worker = llmdlq::kafka_worker::open(options(cluster, "worker-test-4"), judge);
  REQUIRE(worker.has_value());
  // The transaction coordinator answers the commit as it does once another
  // producer took the transactional id.
  constexpr std::int16_t end_txn = 26;
  rd_kafka_mock_push_request_errors(cluster.get(), end_txn, 1, RD_KAFKA_RESP_ERR_PRODUCER_FENCED);
  // Polls until the first batch, whose commit fails (the group join may
  // take a few empty polls).
  std::size_t committed = 0;
  std::optional<llmdlq::kafka_error> failure;
  for (int polls = 0; !failure && polls < 200; ++polls) {
    auto done = worker->poll_once(std::chrono::milliseconds(500));
    if (done) committed += done->committed();
    else failure = done.error();
  }
  REQUIRE(failure.has_value());
  CHECK(committed == 0);
  CHECK(failure->code == llmdlq::kafka_errc::fenced);
  CHECK(llmdlq::is_permanent(failure->code));
  auto again = worker->poll_once(std::chrono::milliseconds(10));
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == llmdlq::kafka_errc::fenced);
}

TEST_CASE("kafka_worker: a commit that outlasts the delivery timeout is finished by the next poll, not rewound",
          "[kafka]") {
  mock_cluster cluster;
  fill(cluster, 20);
  std::map<std::string, int> judged;
  auto o = options(cluster, "worker-test-5");
  o.delivery_timeout = std::chrono::seconds(1);
  auto worker = llmdlq::kafka_worker::open(o, [&](const llmdlq::kafka_input& in) {
    ++judged[in.position()];
    return judge(in);
  });
  REQUIRE(worker.has_value());
  // The transaction coordinator answers the first commit after 4 s: the
  // commit's outcome is open when the poll gives up waiting for it.
  constexpr std::int16_t end_txn = 26;
  REQUIRE(rd_kafka_mock_broker_push_request_error_rtts(cluster.get(), 1, end_txn, 1, RD_KAFKA_RESP_ERR_NO_ERROR,
                                                       4000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  std::size_t committed = 0;
  const auto errors = run_until(*worker, 20, committed);
  REQUIRE_FALSE(errors.empty());
  for (const auto& e : errors) {
    INFO(e.message);
    CHECK(e.code == llmdlq::kafka_errc::timeout);
  }
  CHECK(committed == 20);
  // The batch whose commit was late was committed once: never read again.
  CHECK(judged.size() == 20);
  for (const auto& [position, n] : judged) CHECK(n == 1);
  for (const auto& topic : {output, dlq}) {
    for (const auto& [key, n] : keys_in(cluster, topic)) CHECK(n == 1);
  }
}

TEST_CASE("kafka_worker::open refuses empty topic names and a missing handler", "[kafka]") {
  mock_cluster cluster;
  auto o = options(cluster, {});
  o.dlq_topic.clear();
  auto unnamed = llmdlq::kafka_worker::open(o, judge);
  REQUIRE_FALSE(unnamed.has_value());
  CHECK(unnamed.error().code == llmdlq::kafka_errc::invalid_configuration);
  auto handless = llmdlq::kafka_worker::open(options(cluster, {}), {});
  REQUIRE_FALSE(handless.has_value());
  CHECK(handless.error().code == llmdlq::kafka_errc::invalid_configuration);
}

}  // namespace kafka_worker_test
