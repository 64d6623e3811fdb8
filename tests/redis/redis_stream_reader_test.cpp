// SPDX-License-Identifier: MIT
// Replay from the Redis stream through a consumer group: read, ack, pending
// entries after a restart, entries of dead consumers claimed, entries that
// are not envelopes.
#include <llmdlq/redis/stream_reader.hpp>
#include <llmdlq/redis/stream_sink.hpp>

#include "catch.hpp"
#include "redis_test_support.hpp"

namespace redis_stream_reader_test {

using llmdlq::test::redis_client;
using llmdlq::test::sample;
using llmdlq::test::scoped_stream;

namespace {

std::vector<std::string> ids_of(const std::vector<llmdlq::redis_stream_entry>& entries) {
  std::vector<std::string> ids;
  for (const auto& entry : entries) ids.push_back(entry.id);
  return ids;
}

std::vector<llmdlq::envelope> publish(const llmdlq::redis_connection_options& server, const scoped_stream& stream,
                                      const std::string& prefix, int count) {
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(sink.has_value());
  std::vector<llmdlq::envelope> batch;
  for (int i = 0; i < count; ++i) batch.push_back(sample(prefix + std::to_string(i)));
  REQUIRE(sink->publish_batch(batch).has_value());
  return batch;
}

}  // namespace

TEST_CASE("redis_stream_reader: a server that is not there is a redis_error, and so are unusable options",
          "[redis]") {
  llmdlq::redis_stream_reader_options options;
  options.connection.port = 1;  // nothing listens on port 1
  options.connection.connect_timeout = std::chrono::milliseconds(500);
  auto reader = llmdlq::redis_stream_reader::open(options);
  REQUIRE_FALSE(reader.has_value());
  CHECK(reader.error().code == llmdlq::redis_errc::unavailable);
  CHECK_FALSE(llmdlq::is_permanent(reader.error().code));
  CHECK(reader.error().message.find("127.0.0.1:1") != std::string::npos);

  options.group.clear();
  reader = llmdlq::redis_stream_reader::open(options);
  REQUIRE_FALSE(reader.has_value());
  CHECK(reader.error().code == llmdlq::redis_errc::rejected);
  CHECK(llmdlq::is_permanent(reader.error().code));
  CHECK(llmdlq::to_string(reader.error().code) == "rejected");
}

TEST_CASE("redis_stream_reader: publish, read through the group, ack", "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "read-ack");
  const auto published = publish(server, stream, "replay:", 3);
  auto reader = llmdlq::redis_stream_reader::open(llmdlq::test::reader_options(server, stream));
  REQUIRE(reader.has_value());

  auto entries = reader->read(10);
  REQUIRE(entries.has_value());
  REQUIRE(entries->size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& entry = (*entries)[i];
    REQUIRE(entry.parsed.has_value());
    CHECK(*entry.parsed == published[i]);
    CHECK(entry.field("dlq_id") == published[i].dlq_id);
    CHECK(entry.field("category") == "syntax");
    CHECK(entry.field("triage") == "transient");
    CHECK(entry.field("failure_code") == "ocr_structural_broken_json");
    CHECK_FALSE(entry.field("nothing").has_value());
  }
  CHECK(reader->pending_count() == 3u);
  CHECK(reader->ack((*entries)[0].id) == 1u);
  CHECK(reader->ack((*entries)[0].id) == 0u);  // once only
  const std::vector<std::string> rest{(*entries)[1].id, (*entries)[2].id};
  CHECK(reader->ack(rest) == 2u);
  CHECK(reader->pending_count() == 0u);

  // Nothing new: an empty answer, after waiting `block` for one.
  const auto before = std::chrono::steady_clock::now();
  auto none = reader->read(10, std::chrono::milliseconds(200));
  REQUIRE(none.has_value());
  CHECK(none->empty());
  CHECK(std::chrono::steady_clock::now() - before >= std::chrono::milliseconds(150));

  // A new entry arrives while it waits.
  // No Catch2 assertion in the producer thread: Catch2 is not thread-safe.
  auto late_sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(late_sink.has_value());
  const auto late_envelope = sample("late:0");
  bool late_published = false;
  std::thread producer([&] { late_published = late_sink->publish(late_envelope).has_value(); });
  auto late = reader->read(10, std::chrono::seconds(5));
  producer.join();
  CHECK(late_published);
  REQUIRE(late.has_value());
  REQUIRE(late->size() == 1);
  CHECK(late->front().parsed->idempotency_key == "late:0");
  CHECK(reader->ack(late->front().id) == 1u);
}

TEST_CASE("redis_stream_reader: open creates the group once, at group_start", "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "group");
  publish(server, stream, "old:", 2);
  auto options = llmdlq::test::reader_options(server, stream);
  options.group_start = "$";  // only what comes next
  auto reader = llmdlq::redis_stream_reader::open(options);
  REQUIRE(reader.has_value());
  auto again = llmdlq::redis_stream_reader::open(options);  // BUSYGROUP is fine
  REQUIRE(again.has_value());
  CHECK(reader->read(10)->empty());
  publish(server, stream, "new:", 1);
  auto entries = reader->read(10);
  REQUIRE(entries->size() == 1);
  CHECK(entries->front().parsed->idempotency_key == "new:0");

  // The group also comes back if the stream was deleted meanwhile.
  redis_client(server).command({"DEL", stream.key()});
  CHECK(reader->read(10)->empty());
  publish(server, stream, "after:", 1);
  CHECK(reader->read(10)->size() == 1);
}

TEST_CASE("redis_stream_reader: a reader restarted before ack gets its pending entries again", "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "restart");
  publish(server, stream, "restart:", 5);
  std::vector<std::string> delivered;
  {
    auto reader = llmdlq::redis_stream_reader::open(llmdlq::test::reader_options(server, stream));
    REQUIRE(reader.has_value());
    auto entries = reader->read(2);
    REQUIRE(entries->size() == 2);
    delivered = ids_of(*entries);
    // ... and the process dies before acknowledging them.
  }
  auto reader = llmdlq::redis_stream_reader::open(llmdlq::test::reader_options(server, stream));
  REQUIRE(reader.has_value());
  auto pending = reader->read(1);
  REQUIRE(pending.has_value());
  CHECK(ids_of(*pending) == std::vector<std::string>{delivered[0]});
  auto more = reader->read(10);  // the rest of the pending ones; new entries only after them
  REQUIRE(more.has_value());
  CHECK(ids_of(*more) == std::vector<std::string>{delivered[1]});
  auto fresh = reader->read(10);
  REQUIRE(fresh.has_value());
  REQUIRE(fresh->size() == 3);
  CHECK(fresh->front().parsed->idempotency_key == "restart:2");
  std::vector<std::string> all = delivered;
  for (const auto& entry : *fresh) all.push_back(entry.id);
  CHECK(reader->ack(all) == 5u);
  CHECK(reader->read(10)->empty());

  // Acknowledged entries do not come back after another restart.
  auto restarted = llmdlq::redis_stream_reader::open(llmdlq::test::reader_options(server, stream));
  REQUIRE(restarted.has_value());
  CHECK(restarted->read(10)->empty());
  CHECK(restarted->pending_count() == 0u);
}

TEST_CASE("redis_stream_reader: idle entries of a dead consumer are claimed by another", "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "claim");
  publish(server, stream, "claim:", 3);
  std::vector<std::string> orphaned;
  {
    auto dead = llmdlq::redis_stream_reader::open(llmdlq::test::reader_options(server, stream, "replayer-dead"));
    REQUIRE(dead.has_value());
    orphaned = ids_of(*dead->read(2));
    REQUIRE(orphaned.size() == 2);
  }
  auto alive = llmdlq::redis_stream_reader::open(llmdlq::test::reader_options(server, stream, "replayer-alive"));
  REQUIRE(alive.has_value());
  CHECK(alive->claim_idle(std::chrono::hours(1), 10)->empty());  // not idle long enough
  // Once they have been idle 20 ms, they are the live reader's to take.
  llmdlq::expected<std::vector<llmdlq::redis_stream_entry>, llmdlq::redis_error> claimed;
  REQUIRE(llmdlq::test::eventually([&] {
    claimed = alive->claim_idle(std::chrono::milliseconds(20), 10);
    return claimed && !claimed->empty();
  }));
  CHECK(ids_of(*claimed) == orphaned);
  REQUIRE(claimed->front().parsed.has_value());
  CHECK(claimed->front().parsed->idempotency_key == "claim:0");
  CHECK(alive->ack(ids_of(*claimed)) == 2u);
  auto rest = alive->read(10);
  REQUIRE(rest->size() == 1);
  CHECK(alive->ack(rest->front().id) == 1u);
  CHECK(alive->pending_count() == 0u);
}

TEST_CASE("redis_stream_reader: an entry that is not an envelope keeps its raw fields", "[redis]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "foreign");
  redis_client redis(server);
  redis.command({"XADD", stream.key(), "*", "dlq_id", "x", "envelope", "{not json"});
  redis.command({"XADD", stream.key(), "*", "note", "no envelope here"});
  const auto published = publish(server, stream, "trimmed:", 1);
  auto reader = llmdlq::redis_stream_reader::open(llmdlq::test::reader_options(server, stream));
  REQUIRE(reader.has_value());
  auto entries = reader->read(10);
  REQUIRE(entries.has_value());
  REQUIRE(entries->size() == 3);
  CHECK_FALSE((*entries)[0].parsed.has_value());
  CHECK((*entries)[0].field("envelope") == "{not json");
  CHECK_FALSE((*entries)[1].parsed.has_value());
  CHECK((*entries)[1].parsed.error().message == "the entry has no envelope field");
  CHECK((*entries)[1].field("note") == "no envelope here");
  REQUIRE((*entries)[2].parsed.has_value());

  // An entry deleted (trimmed) after delivery comes back, without fields, to be acknowledged.
  redis.command({"XDEL", stream.key(), (*entries)[2].id});
  auto restarted = llmdlq::redis_stream_reader::open(llmdlq::test::reader_options(server, stream));
  REQUIRE(restarted.has_value());
  auto pending = restarted->read(10);
  REQUIRE(pending.has_value());
  REQUIRE(pending->size() == 3);
  CHECK((*pending)[2].id == (*entries)[2].id);
  CHECK((*pending)[2].fields.empty());
  CHECK_FALSE((*pending)[2].parsed.has_value());
  CHECK(restarted->ack(ids_of(*pending)) == 3u);
}

}  // namespace redis_stream_reader_test
