// SPDX-License-Identifier: MIT
// What the Redis stream sink writes holds no detected value: every field of
// every entry, read back raw with XRANGE.
#include <string>

#include <llmdlq/redis/stream_sink.hpp>

#include "catch.hpp"
#include "redis_test_support.hpp"
#include "support/pii_sample.hpp"

namespace redis_redaction_test {

namespace {

void flatten(const redisReply* r, std::string& out) {
  if (r->str) out.append(r->str, r->len);
  for (std::size_t i = 0; i < r->elements; ++i) flatten(r->element[i], out);
}

}  // namespace

TEST_CASE("redis_stream_sink: no field of any entry holds a detected value", "[redis][redaction]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  llmdlq::test::scoped_stream stream(server, "redaction");
  auto sink = llmdlq::redis_stream_sink::open(llmdlq::test::sink_options(server, stream));
  REQUIRE(sink.has_value());
  REQUIRE(sink->publish(llmdlq::test::pii_envelope()).has_value());

  llmdlq::test::redis_client redis(server);
  const auto entries = redis.command({"XRANGE", stream.key(), "-", "+"});
  REQUIRE(entries);
  REQUIRE(entries->elements == 1);
  std::string stored;
  flatten(entries.get(), stored);
  llmdlq::test::check_no_pii(stored);
}

}  // namespace redis_redaction_test
