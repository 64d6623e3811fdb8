// SPDX-License-Identifier: MIT
// Fault test: the Redis server stops while a worker dead-letters through it.
// Publishing fails with a sink_error and the pipeline says `retry` (the input
// is not committed); once the server is back, the same inputs go through;
// nothing is lost and nothing is stored twice, and the replay reader picks up
// where it was, its unacknowledged entry included.
#include <llmdlq/pipeline.hpp>
#include <llmdlq/redis/stream_reader.hpp>
#include <llmdlq/redis/stream_sink.hpp>

#include <cstdlib>
#include <map>
#include <set>

#include "catch.hpp"
#include "redis_test_support.hpp"

namespace redis_fault_test {

using llmdlq::test::redis_client;
using llmdlq::test::scoped_stream;

namespace {

// Stops the server now; starts it again when asked, or at the latest when
// the test ends, so that a failing test does not take the server with it.
class stopped_server {
 public:
  stopped_server(std::string stop, std::string start) : start_(std::move(start)) {
    REQUIRE(std::system(stop.c_str()) == 0);
    stopped_ = true;
  }
  ~stopped_server() {
    if (stopped_) (void)std::system(start_.c_str());
  }
  stopped_server(const stopped_server&) = delete;
  stopped_server& operator=(const stopped_server&) = delete;

  void start() {
    REQUIRE(std::system(start_.c_str()) == 0);
    stopped_ = false;
  }

 private:
  std::string start_;
  bool stopped_ = false;
};

// The idempotency keys of the envelopes in the stream, with their counts.
std::map<std::string, int> stored_keys(redis_client& redis, const std::string& stream) {
  std::map<std::string, int> keys;
  for (const auto& json : redis.stream_field(stream, "envelope")) {
    auto e = llmdlq::parse_envelope(json);
    REQUIRE(e.has_value());
    ++keys[e->idempotency_key];
  }
  return keys;
}

}  // namespace

TEST_CASE("Redis stopped: publish fails, the pipeline says retry, and after a restart nothing is lost or doubled",
          "[redis][fault]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  const char* stop = std::getenv("LLMDLQ_TEST_REDIS_STOP");
  const char* start = std::getenv("LLMDLQ_TEST_REDIS_START");
  if (!stop || !*stop || !start || !*start) {
    LLMDLQ_SKIP("LLMDLQ_TEST_REDIS is set without LLMDLQ_TEST_REDIS_STOP and _START, the commands to stop and start it");
  }
  scoped_stream stream(server, "fault");
  const bool persistent = [&] {
    redis_client admin(server);
    auto reply = admin.command({"CONFIG", "GET", "appendonly"});
    return reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
           std::string_view(reply->element[1]->str, reply->element[1]->len) == "yes";
  }();

  auto options = llmdlq::test::sink_options(server, stream);
  options.connection.connect_timeout = std::chrono::milliseconds(1000);
  auto sink = llmdlq::redis_stream_sink::open(options);
  REQUIRE(sink.has_value());
  auto reader = llmdlq::redis_stream_reader::open(llmdlq::test::reader_options(server, stream));
  REQUIRE(reader.has_value());
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "required": ["total"]})");
  REQUIRE(schema.has_value());
  const llmdlq::pipeline pipeline{*schema, *sink};

  // A worker's inputs: every response fails its schema and is dead-lettered.
  const auto context_for = [](int input) {
    llmdlq::request_context context;
    context.idempotency_key = "fault:" + std::to_string(input);
    return context;
  };
  const std::string response = R"({"merchant": "Jumbo"})";
  std::set<int> committed;
  for (int input : {0, 1}) {
    const auto d = pipeline.handle(response, context_for(input));
    REQUIRE(d == llmdlq::disposition::commit);
    committed.insert(input);
  }
  // The replayer reads both and acknowledges only the first before the outage.
  auto before = reader->read(10);
  REQUIRE(before.has_value());
  REQUIRE(before->size() == 2);
  REQUIRE(reader->ack(before->front().id) == 1u);
  const std::string unacknowledged = before->back().id;

  // Large enough that writing it to the dead connection hits a closed socket
  // (SIGPIPE, which must not end the process).
  std::vector<llmdlq::envelope> big_batch;
  for (int i = 0; i < 64; ++i) {
    big_batch.push_back(llmdlq::test::sample("fault-batch:" + std::to_string(i), 1, llmdlq::failure_category::syntax,
                                             std::string(64 * 1024, 'x')));
  }

  stopped_server outage(stop, start);
  {
    auto failed = sink->publish_batch(big_batch);
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code == llmdlq::sink_errc::unavailable);
  }
  {
    const auto d = pipeline.handle(response, context_for(2));
    CHECK(d == llmdlq::disposition::retry);  // the worker keeps input 2 and does not commit it
    REQUIRE(d.error.has_value());
    CHECK(d.error->code == llmdlq::sink_errc::unavailable);
    CHECK_FALSE(d.stored.has_value());
    REQUIRE(d.dead_letter.has_value());
    auto direct = sink->publish(*d.dead_letter);
    REQUIRE_FALSE(direct.has_value());
    CHECK(direct.error().code == llmdlq::sink_errc::unavailable);
    CHECK(direct.error().message.find("redis:") == 0);
  }
  {
    auto read = reader->read(10);
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().code == llmdlq::redis_errc::unavailable);
  }

  outage.start();
  // The worker retries input 2 until the sink takes it, then goes on.
  for (int input = 2; input < 6; ++input) {
    const bool stored =
        llmdlq::test::eventually([&] { return pipeline.handle(response, context_for(input)).should_commit(); });
    REQUIRE(stored);
    committed.insert(input);
  }
  auto batch_again = sink->publish_batch(big_batch);
  REQUIRE(batch_again.has_value());
  for (const auto& r : *batch_again) CHECK_FALSE(r.duplicate);  // nothing of it was stored during the outage

  redis_client redis(server);
  const auto keys = stored_keys(redis, stream.key());
  for (const auto& [key, count] : keys) {
    INFO(key);
    CHECK(count == 1);  // nothing doubled
  }
  for (int input = persistent ? 0 : 2; input < 6; ++input) {
    INFO("input " << input);
    CHECK(keys.count("fault:" + std::to_string(input)) == 1);  // nothing lost
  }
  if (persistent) {
    CHECK(redis.integer({"XLEN", stream.key()}) == 6 + 64);
  } else {
    WARN("the test server runs without appendonly: entries from before the restart are gone");
  }

  // The reader reconnects and first gets back the entry it had not acknowledged.
  std::vector<llmdlq::redis_stream_entry> replayed;
  REQUIRE(llmdlq::test::eventually([&] {
    auto entries = reader->read(100);
    if (!entries) return false;
    replayed.insert(replayed.end(), entries->begin(), entries->end());
    return entries->empty();
  }));
  if (persistent) {
    REQUIRE(replayed.size() == 1 + 4 + 64);
    CHECK(replayed.front().id == unacknowledged);
    std::set<std::string> ids;
    for (const auto& entry : replayed) ids.insert(entry.id);
    CHECK(ids.size() == replayed.size());
  }
  std::vector<std::string> ids;
  for (const auto& entry : replayed) ids.push_back(entry.id);
  CHECK(reader->ack(ids) == ids.size());
  CHECK(reader->pending_count() == 0u);
}

}  // namespace redis_fault_test
