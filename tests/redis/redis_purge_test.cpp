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
