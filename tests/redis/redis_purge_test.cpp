// SPDX-License-Identifier: MIT
// redis_stream_sink::purge against a real server (LLMDLQ_TEST_REDIS; skipped
// without it): exactly the expired entries go, page by page, and one entry
// of `<stream>:audit` says so; a dry run changes nothing.
#include "catch.hpp"
#include "redis/redis_test_support.hpp"
#include "support/expiring_letters.hpp"

namespace redis_purge_test {

TEST_CASE("a Redis purge deletes exactly the expired entries and audits once", "[redis][purge]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  const llmdlq::test::scoped_stream stream(server, "purge");
  const llmdlq::test::expiring_letters letters;
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(sink.has_value());
  REQUIRE(sink->publish_batch(letters.all()).has_value());
  llmdlq::test::redis_client client(server);
  const std::string audit = stream.key() + ":audit";

  auto dry = sink->purge(letters.request(true), /*page_size=*/2);
  REQUIRE(dry.has_value());
  CHECK(*dry == letters.expected_report(true));
  CHECK(client.stream_field(stream.key(), "dlq_id").size() == 6);
  CHECK(client.command({"EXISTS", audit})->integer == 0);

  auto report = sink->purge(letters.request(), /*page_size=*/2);
  REQUIRE(report.has_value());
  CHECK(*report == letters.expected_report());
  std::vector<std::string> kept;
  for (const auto& e : letters.kept) kept.push_back(e.dlq_id);
  CHECK(client.stream_field(stream.key(), "dlq_id") == kept);
  CHECK(client.stream_field(audit, "count") == std::vector<std::string>{"3"});
  CHECK(client.stream_field(audit, "operator") == std::vector<std::string>{"alice"});
  CHECK(client.stream_field(audit, "oldest_expires_at") == std::vector<std::string>{"2026-05-30T00:00:00.000Z"});
  CHECK(client.stream_field(audit, "newest_expires_at") == std::vector<std::string>{"2026-06-01T00:00:00.000Z"});

  auto again = sink->purge(letters.request());
  REQUIRE(again.has_value());
  CHECK(again->count == 0);
  CHECK(client.stream_field(audit, "count") == std::vector<std::string>{"3", "0"});
  CHECK(client.stream_field(stream.key(), "dlq_id").size() == 3);
}

TEST_CASE("a Redis purge keeps and names the entries that are not envelopes, and purges the others",
          "[redis][purge]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  const llmdlq::test::scoped_stream stream(server, "purge-unreadable");
  const llmdlq::test::expiring_letters letters;
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(sink.has_value());
  llmdlq::test::redis_client client(server);
  // Another writer's entries between the letters: one without an envelope, one whose envelope is not JSON.
  const auto other = client.command({"XADD", stream.key(), "*", "note", "hello"});
  REQUIRE(other->type == REDIS_REPLY_STRING);
  REQUIRE(sink->publish_batch(letters.all()).has_value());
  const auto broken = client.command({"XADD", stream.key(), "*", "envelope", "{garbage"});
  REQUIRE(broken->type == REDIS_REPLY_STRING);
  const std::string other_id(other->str, other->len);
  const std::string broken_id(broken->str, broken->len);

  auto report = sink->purge(letters.request(), /*page_size=*/2);
  REQUIRE(report.has_value());
  CHECK(report->count == letters.expected_report().count);
  CHECK(report->unreadable == 2);
  REQUIRE(report->unreadable_records.size() == 2);
  CHECK(report->unreadable_records[0].dlq_id == "entry " + other_id);
  CHECK(report->unreadable_records[0].reason == "no envelope field");
  CHECK(report->unreadable_records[1].dlq_id == "entry " + broken_id);
  CHECK(report->unreadable_records[1].reason.rfind("envelope: ", 0) == 0);
  CHECK(client.stream_field(stream.key(), "dlq_id").size() == letters.kept.size());
  CHECK(client.stream_field(stream.key(), "note") == std::vector<std::string>{"hello"});
  CHECK(client.stream_field(stream.key(), "envelope").size() == letters.kept.size() + 1);
}

TEST_CASE("the Redis sink's dedupe keys expire", "[redis][purge]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  const llmdlq::test::scoped_stream stream(server, "dedupe-ttl");
  const llmdlq::test::expiring_letters letters;
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(sink.has_value());
  REQUIRE(sink->publish(letters.kept.front()).has_value());
  llmdlq::test::redis_client client(server);
  const auto ttl = client.command({"TTL", stream.key() + ":dedupe:id:" + letters.kept.front().dlq_id});
  CHECK(ttl->integer > 0);
  CHECK(ttl->integer <= 7 * 24 * 3600);
}

}  // namespace redis_purge_test
