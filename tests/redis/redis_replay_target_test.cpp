// SPDX-License-Identifier: MIT
// redis_stream_target against the test's redis-server: what a delivery adds
// to the stream, once per key across target instances, a server that does
// not persist refused, and `llmdlq deliver --to redis:` killed at random
// moments.
#include <map>
#include <string>

#include <llmdlq/redis/stream_target.hpp>

#include "redis_test_support.hpp"
#include "support/target_kill_run.hpp"

namespace redis_replay_target_test {

using llmdlq::test::redis_client;
using llmdlq::test::sample_delivery;
using llmdlq::test::scoped_stream;

namespace {

llmdlq::redis_stream_target_options options_for(const llmdlq::redis_connection_options& server,
                                                const scoped_stream& stream) {
  llmdlq::redis_stream_target_options options;
  options.connection = server;
  options.stream = stream.key();
  return options;
}

std::map<std::string, std::size_t> keys_in(redis_client& client, const std::string& stream) {
  std::map<std::string, std::size_t> keys;
  for (const auto& key : client.stream_field(stream, "idempotency_key")) ++keys[key];
  return keys;
}

}  // namespace

TEST_CASE("redis target: a delivery is one stream entry, and a key delivered is never added again", "[redis][target]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "target");
  redis_client client(server);
  {
    auto target = llmdlq::redis_stream_target::open(options_for(server, stream));
    REQUIRE(target.has_value());
    REQUIRE(target->deliver(sample_delivery("k0", "replay")).has_value());
    REQUIRE(target->deliver(sample_delivery("k1", "replay")).has_value());
  }
  // Another process, after a crash before the ledger's confirmation, delivers k1 again.
  auto again = llmdlq::redis_stream_target::open(options_for(server, stream));
  REQUIRE(again.has_value());
  REQUIRE(again->deliver(sample_delivery("k1", "replay")).has_value());
  CHECK(keys_in(client, stream.key()) == std::map<std::string, std::size_t>{{"k0", 1}, {"k1", 1}});
  CHECK(client.stream_field(stream.key(), "output") ==
        std::vector<std::string>{R"({"total": 2920.00})", R"({"total": 2920.00})"});
  CHECK(client.stream_field(stream.key(), "source") == std::vector<std::string>{"replay", "replay"});
  CHECK(client.stream_field(stream.key(), "dlq_id") == std::vector<std::string>{"dlq-k0", "dlq-k1"});
  CHECK(client.stream_field(stream.key(), "resolved_by").empty());  // only a correction has them
  CHECK(client.integer({"HLEN", stream.key() + ":delivered"}) == 2);

  auto not_json = sample_delivery("k2", "replay");
  not_json.output = "[1";
  auto refused = again->deliver(not_json);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == llmdlq::replay_errc::target_refused);
}

TEST_CASE("redis target: a server that would lose what it acknowledged is refused", "[redis][target]") {
  if (!llmdlq::test::redis_server_installed()) LLMDLQ_SKIP("redis-server is not installed");
  llmdlq::test::scoped_redis_server volatile_server({"--appendonly", "no", "--save", ""});
  INFO(volatile_server.log());
  REQUIRE(volatile_server.started());
  llmdlq::redis_stream_target_options options;
  options.connection = volatile_server.options();
  auto refused = llmdlq::redis_stream_target::open(options);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == llmdlq::replay_errc::target_refused);
  CHECK(refused.error().message.find("would lose deliveries it acknowledged") != std::string::npos);
  options.require_persistence = false;
  CHECK(llmdlq::redis_stream_target::open(options).has_value());
}

TEST_CASE("redis target: llmdlq deliver killed at random moments delivers every correction once",
          "[redis][target][tools][kill]") {
  LLMDLQ_REDIS_OR_SKIP(server);
  scoped_stream stream(server, "corrections");
  redis_client client(server);
  const std::string spec = "redis:" + server.host + ":" + std::to_string(server.port) + "/" + stream.key();
  const auto tally = llmdlq::test::run_target_kill_rounds({spec, [&] { return keys_in(client, stream.key()); }}, 10,
                                                          40);
  CHECK(tally.killed > 0);  // the kills landed midway, not only before or after the runs
  CHECK(tally.lost == 0);
  CHECK(tally.duplicated == 0);
  CHECK(tally.delivered_once == tally.corrections);
}

}  // namespace redis_replay_target_test
