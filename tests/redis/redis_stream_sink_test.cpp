// SPDX-License-Identifier: MIT
// The Redis Streams sink against a real redis-server: one entry per envelope
// with its filter fields, idempotent on dlq_id and on idempotency key +
// attempt, pipelined batches, approximate MAXLEN, WAIT, threads.
#include <llmdlq/pipeline.hpp>
#include <llmdlq/redis/stream_sink.hpp>

#include <atomic>
#include <set>
#include <thread>

#include "catch.hpp"
#include "redis_test_support.hpp"
#include "support/envelope_check.hpp"
#include "support/skip.hpp"

namespace redis_stream_sink_test {

using llmdlq::test::redis_client;
using llmdlq::test::sample;
using llmdlq::test::scoped_stream;

TEST_CASE("redis_stream_sink: a server that is not there is a sink_error, not an exception", "[redis]") {
  llmdlq::redis_stream_sink_options options;
  options.connection.port = 1;  // nothing listens on port 1
  options.connection.connect_timeout = std::chrono::milliseconds(500);
  auto sink = llmdlq::redis_stream_sink::open(options);
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == llmdlq::sink_errc::unavailable);
  CHECK(sink.error().message.find("127.0.0.1:1") != std::string::npos);

  options.stream.clear();
  CHECK(llmdlq::redis_stream_sink::open(options).error().code == llmdlq::sink_errc::rejected);
}

TEST_CASE("redis_stream_sink writes one entry per envelope with its filter fields", "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "fields");
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(sink.has_value());
  const auto e = llmdlq::test::check_envelope(sample("receipts:0:1", 1, llmdlq::failure_category::schema));
  auto r = sink->publish(e);
  REQUIRE(r.has_value());
  CHECK(r->dlq_id == e.dlq_id);
  CHECK_FALSE(r->duplicate);

  redis_client redis(server);
  CHECK(redis.integer({"XLEN", stream.key()}) == 1);
  CHECK(redis.stream_field(stream.key(), "dlq_id") == std::vector<std::string>{e.dlq_id});
  CHECK(redis.stream_field(stream.key(), "category") == std::vector<std::string>{"schema"});
  CHECK(redis.stream_field(stream.key(), "triage") == std::vector<std::string>{"deterministic"});
  CHECK(redis.stream_field(stream.key(), "failure_code") == std::vector<std::string>{"ocr_schema_violation"});
  const auto json = redis.stream_field(stream.key(), "envelope");
  REQUIRE(json.size() == 1);
  CHECK(json[0] == llmdlq::serialize(e));
  auto back = llmdlq::parse_envelope(json[0]);
  REQUIRE(back.has_value());
  CHECK(*back == e);

  // The receipt names the entry: redis:<host>:<port>/<db>#<stream>@<id>.
  auto last = redis.command({"XREVRANGE", stream.key(), "+", "-", "COUNT", "1"});
  REQUIRE(last->elements == 1);
  const std::string id(last->element[0]->element[0]->str, last->element[0]->element[0]->len);
  CHECK(r->location == "redis:" + server.host + ":" + std::to_string(server.port) + "/0#" + stream.key() + "@" + id);
  // The dedupe key holds the entry id and the dlq_id, and expires.
  CHECK(redis.string({"GET", stream.key() + ":dedupe:id:" + e.dlq_id}) == id + " " + e.dlq_id);
  const auto ttl = redis.integer({"TTL", stream.key() + ":dedupe:id:" + e.dlq_id});
  CHECK(ttl > 7 * 24 * 3600 - 60);
  CHECK(ttl <= 7 * 24 * 3600);
}

TEST_CASE("redis_stream_sink: publishing again is a duplicate naming the first entry, not a second entry",
          "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "dedupe");
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(sink.has_value());
  const auto e = sample("receipts:0:7");
  auto first = sink->publish(e);
  REQUIRE(first.has_value());
  CHECK_FALSE(first->duplicate);
  auto again = sink->publish(e);
  REQUIRE(again.has_value());
  CHECK(again->duplicate);
  CHECK(again->location == first->location);

  // A new envelope for the same input and attempt (a worker that crashed
  // before committing made it again): the same entry.
  auto remade = sink->publish(sample("receipts:0:7", 1));
  REQUIRE(remade.has_value());
  CHECK(remade->duplicate);
  CHECK(remade->location == first->location);
  // Under another dlq_id (an older version's): the receipt names the stored one.
  auto older = sample("receipts:0:7", 1);
  older.dlq_id = "0190b6f2-0000-7000-8000-00000000abcd";
  auto named = sink->publish(older);
  REQUIRE(named.has_value());
  CHECK(named->duplicate);
  CHECK(named->dlq_id == e.dlq_id);
  // The next attempt is a new entry.
  auto second = sink->publish(sample("receipts:0:7", 2));
  REQUIRE(second.has_value());
  CHECK_FALSE(second->duplicate);
  CHECK(second->location != first->location);

  redis_client redis(server);
  CHECK(redis.integer({"XLEN", stream.key()}) == 2);

  SECTION("by dlq_id alone when asked") {
    auto options = llmdlq::test::sink_options(server, stream);
    options.dedupe_idempotency_key = false;
    auto by_id = llmdlq::redis_stream_sink::open(options);
    REQUIRE(by_id.has_value());
    CHECK(by_id->publish(e)->duplicate);
    auto older = sample("receipts:0:7", 1);  // the same input under another id, as an older version made them
    older.dlq_id = "0190b6f2-0000-7000-8000-00000000abcd";
    CHECK_FALSE(by_id->publish(older)->duplicate);
    CHECK(redis.integer({"XLEN", stream.key()}) == 3);
  }
}

TEST_CASE("redis_stream_sink rejects an envelope without a dlq_id", "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "no-id");
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(sink.has_value());
  auto e = sample("receipts:0:8");
  e.dlq_id.clear();
  auto r = sink->publish(e);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == llmdlq::sink_errc::rejected);
  const std::vector<llmdlq::envelope> batch{sample("a"), e};
  CHECK(sink->publish_batch(batch).error().code == llmdlq::sink_errc::rejected);
  CHECK(redis_client(server).integer({"XLEN", stream.key()}) == 0);
}

TEST_CASE("redis_stream_sink pipelines a batch: receipts in order, duplicates flagged, one entry each", "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "batch");
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(sink.has_value());
  const auto earlier = sample("receipts:1:0");
  REQUIRE(sink->publish(earlier).has_value());

  std::vector<llmdlq::envelope> batch;
  for (int i = 1; i <= 50; ++i) batch.push_back(sample("receipts:1:" + std::to_string(i)));
  batch.push_back(earlier);   // stored before
  batch.push_back(batch[3]);  // twice in this batch
  auto receipts = sink->publish_batch(batch);
  REQUIRE(receipts.has_value());
  REQUIRE(receipts->size() == batch.size());
  for (std::size_t i = 0; i < 50; ++i) {
    CHECK((*receipts)[i].dlq_id == batch[i].dlq_id);
    CHECK_FALSE((*receipts)[i].duplicate);
  }
  CHECK((*receipts)[50].duplicate);
  CHECK((*receipts)[51].duplicate);
  CHECK((*receipts)[51].location == (*receipts)[3].location);

  redis_client redis(server);
  CHECK(redis.integer({"XLEN", stream.key()}) == 51);
  std::vector<std::string> expected{earlier.dlq_id};
  for (std::size_t i = 0; i < 50; ++i) expected.push_back(batch[i].dlq_id);
  CHECK(redis.stream_field(stream.key(), "dlq_id") == expected);

  // The whole batch again: every one a duplicate, nothing added.
  auto retried = sink->publish_batch(batch);
  REQUIRE(retried.has_value());
  for (const auto& r : *retried) CHECK(r.duplicate);
  CHECK(redis.integer({"XLEN", stream.key()}) == 51);
  CHECK(sink->publish_batch({})->empty());
}

TEST_CASE("redis_stream_sink trims the stream to about max_length", "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "maxlen");
  auto options = llmdlq::test::sink_options(server, stream);
  options.max_length = 100;
  auto sink = llmdlq::redis_stream_sink::open(options);
  REQUIRE(sink.has_value());
  std::vector<std::string> last_ids;
  for (int round = 0; round < 10; ++round) {
    std::vector<llmdlq::envelope> batch;
    for (int i = 0; i < 100; ++i) batch.push_back(sample("trim:" + std::to_string(round) + ":" + std::to_string(i)));
    REQUIRE(sink->publish_batch(batch).has_value());
    if (round == 9) {
      for (const auto& e : batch) last_ids.push_back(e.dlq_id);
    }
  }
  redis_client redis(server);
  // `MAXLEN ~` removes whole nodes (stream-node-max-entries, 100 by default):
  // at least max_length entries remain, and less than a node more.
  const auto length = redis.integer({"XLEN", stream.key()});
  CHECK(length >= 100);
  CHECK(length < 100 + 100);
  const auto kept = redis.stream_field(stream.key(), "dlq_id");
  REQUIRE(kept.size() >= 100);
  CHECK(std::vector<std::string>(kept.end() - 100, kept.end()) == last_ids);  // the newest are kept

  SECTION("0 does not trim") {
    auto untrimmed = llmdlq::test::sink_options(server, stream);
    untrimmed.max_length = 0;
    auto all = llmdlq::redis_stream_sink::open(untrimmed);
    REQUIRE(all.has_value());
    std::vector<llmdlq::envelope> batch;
    for (int i = 0; i < 300; ++i) batch.push_back(sample("keep:" + std::to_string(i)));
    REQUIRE(all->publish_batch(batch).has_value());
    CHECK(redis.integer({"XLEN", stream.key()}) == length + 300);
  }
}

TEST_CASE("redis_stream_sink: WAIT without enough replicas is a timeout, and a retry stores nothing twice",
          "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "wait");
  auto options = llmdlq::test::sink_options(server, stream);
  options.replicas = 1;  // the test server has none
  options.replica_timeout = std::chrono::milliseconds(50);
  auto sink = llmdlq::redis_stream_sink::open(options);
  REQUIRE(sink.has_value());
  const auto e = sample("receipts:2:1");
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto r = sink->publish(e);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == llmdlq::sink_errc::timeout);
    CHECK(r.error().message.find("0 of 1 replicas") != std::string::npos);
  }
  const std::vector<llmdlq::envelope> batch{e, sample("receipts:2:2")};
  CHECK(sink->publish_batch(batch).error().code == llmdlq::sink_errc::timeout);
  CHECK(redis_client(server).integer({"XLEN", stream.key()}) == 2);
}

TEST_CASE("redis_stream_sink: a server that stops answering is a timeout, and publishing again stores it once",
          "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "timeout");
  auto options = llmdlq::test::sink_options(server, stream);
  options.connection.command_timeout = std::chrono::milliseconds(150);
  auto sink = llmdlq::redis_stream_sink::open(options);
  REQUIRE(sink.has_value());
  const auto e = sample("receipts:3:1");
  {
    redis_client redis(server);
    CHECK(redis.string({"CLIENT", "PAUSE", "600", "ALL"}) == "OK");
  }
  auto r = sink->publish(e);
  REQUIRE_FALSE(r.has_value());  // had it waited out the pause, it would have succeeded
  CHECK(r.error().code == llmdlq::sink_errc::timeout);
  // Retried as a host would, until the pause ends: whether the server ran
  // the timed-out script or not, there is one entry.
  REQUIRE(llmdlq::test::eventually([&] { return sink->publish(e).has_value(); }, std::chrono::seconds(10)));
  CHECK(redis_client(server).integer({"XLEN", stream.key()}) == 1);
}

TEST_CASE("redis_stream_sink is safe to share between threads", "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "threads");
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(sink.has_value());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const auto e = sample("threads:" + std::to_string(t) + ":" + std::to_string(i));
        if (i % 10 == 0) {
          const std::vector<llmdlq::envelope> batch{e, sample("threads-batch:" + std::to_string(t) + ":" +
                                                              std::to_string(i))};
          if (!sink->publish_batch(batch)) ++failures;
        } else if (!sink->publish(e)) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
  CHECK(redis_client(server).integer({"XLEN", stream.key()}) == 4 * (20 + 2));
}

TEST_CASE("a pipeline over redis_stream_sink commits a dead-lettered response once it is in the stream",
          "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "pipeline");
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(sink.has_value());
  const auto schema = llmdlq::schema::compile(R"({"type": "object", "required": ["total"]})");
  REQUIRE(schema.has_value());
  const llmdlq::pipeline pipeline{*schema, *sink};
  llmdlq::request_context context;
  context.idempotency_key = "receipts:4:1";
  const auto d = pipeline.handle(R"({"merchant": "Jumbo"})", context);
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.stored.has_value());
  REQUIRE(d.dead_letter.has_value());
  CHECK(d.stored->location.find(stream.key() + "@") != std::string::npos);
  redis_client redis(server);
  CHECK(redis.stream_field(stream.key(), "dlq_id") == std::vector<std::string>{d.dead_letter->dlq_id});
  // The same input handled again (no commit happened): the same entry.
  const auto again = pipeline.handle(R"({"merchant": "Jumbo"})", context);
  CHECK(again == llmdlq::disposition::commit);
  CHECK(again.stored->duplicate);
  CHECK(redis.integer({"XLEN", stream.key()}) == 1);
  // Accepted responses do not touch the sink.
  CHECK(pipeline.handle(R"({"total": 1})", context) == llmdlq::disposition::commit);
  CHECK(redis.integer({"XLEN", stream.key()}) == 1);
}

TEST_CASE("redis_stream_sink accepts the test server, which syncs its append-only file on every write", "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "persistent");
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  INFO((sink ? std::string() : sink.error().message));
  REQUIRE(sink.has_value());
  CHECK(sink->persistence() == llmdlq::redis_persistence{true, "always"});
}

TEST_CASE("redis_stream_sink refuses a server that would lose what it acknowledged, unless told to accept it",
          "[redis]") {
  if (!llmdlq::test::redis_server_installed()) LLMDLQ_SKIP("redis-server is not installed");
  struct server_case {
    std::vector<std::string> settings;
    std::string missing;                   // in the refusal; empty: accepted
    llmdlq::redis_persistence persistence;  // as reported
  };
  const auto [settings, missing, persistence] = GENERATE(
      server_case{{"--save", "", "--appendonly", "no"}, "it keeps no append-only file (appendonly no)", {false, "everysec"}},
      server_case{{"--save", "", "--appendonly", "yes", "--appendfsync", "no"},
                  "it does not sync its append-only file (appendfsync no)",
                  {true, "no"}},
      server_case{{"--save", "", "--appendonly", "yes", "--rename-command", "CONFIG", ""}, "", {true, ""}});
  CAPTURE(settings);
  llmdlq::test::scoped_redis_server redis(settings);
  INFO("redis-server's log: " << redis.log());
  REQUIRE(redis.started());
  llmdlq::redis_stream_sink_options options;
  options.connection = redis.options();
  options.stream = "llmdlq-test:persistence";

  auto refused = llmdlq::redis_stream_sink::open(options);
  if (missing.empty()) {
    // CONFIG renamed away: appendfsync is unknown, the append-only file is enough.
    INFO((refused ? std::string() : refused.error().message));
    REQUIRE(refused.has_value());
    CHECK(refused->persistence() == persistence);
    return;
  }
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == llmdlq::sink_errc::rejected);
  CHECK(refused.error().message.find(missing) != std::string::npos);
  CHECK(refused.error().message.find(std::to_string(redis.options().port)) != std::string::npos);
  CHECK(refused.error().message.find("require_persistence = false") != std::string::npos);
  CHECK(llmdlq::test::redis_client(redis.options()).integer({"EXISTS", options.stream}) == 0);

  options.require_persistence = false;
  auto accepted = llmdlq::redis_stream_sink::open(options);
  REQUIRE(accepted.has_value());
  CHECK(accepted->persistence() == persistence);
  const auto e = sample("volatile:1");
  auto r = accepted->publish(e);
  REQUIRE(r.has_value());
  CHECK(r->dlq_id == e.dlq_id);
}

}  // namespace redis_stream_sink_test
