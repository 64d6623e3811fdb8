// SPDX-License-Identifier: MIT
// The store specs every command and host reads: each form, the table after
// a `#`, what is refused and with which code, and how a spec is shown.
#include <string>
#include <system_error>

#include <llmdlq/store_spec.hpp>

#include "catch.hpp"

namespace store_spec_test {

using llmdlq::store_kind;
using llmdlq::store_spec_errc;

TEST_CASE("each form reads into its spec", "[store_spec]") {
  auto sqlite = llmdlq::parse_store_spec("sqlite:/var/dlq.db#letters");
  REQUIRE(sqlite.has_value());
  CHECK(sqlite->kind == store_kind::sqlite);
  CHECK(sqlite->location == "/var/dlq.db");
  CHECK(sqlite->table == "letters");
  CHECK(llmdlq::display_name(*sqlite) == "/var/dlq.db#letters");

  auto postgres = llmdlq::parse_store_spec("postgres:host=db password=a#b#ops.letters");
  REQUIRE(postgres.has_value());
  CHECK(postgres->kind == llmdlq::store_spec::store_kind::postgres);
  CHECK(postgres->location == "host=db password=a#b");  // a `#` in the password stays
  CHECK(postgres->schema == "ops");
  CHECK(postgres->table == "letters");
  CHECK(llmdlq::display_name(*postgres) == "postgres#ops.letters");  // never the connection string

  // A schema is PostgreSQL's: in a SQLite path the `#a.b` is part of the file's name.
  auto dotted = llmdlq::parse_store_spec("sqlite:dlq.db#a.b");
  REQUIRE(dotted.has_value());
  CHECK(dotted->location == "dlq.db#a.b");
  CHECK(dotted->table.empty());

  auto kafka = llmdlq::parse_store_spec("kafka:b1:9092,b2:9092/receipts-dlq");
  REQUIRE(kafka.has_value());
  CHECK(kafka->kind == store_kind::kafka);
  CHECK(kafka->location == "b1:9092,b2:9092");
  CHECK(kafka->topic == "receipts-dlq");
  CHECK(llmdlq::display_name(*kafka) == "kafka:b1:9092,b2:9092/receipts-dlq");

  auto redis = llmdlq::parse_store_spec("redis:127.0.0.1:6379/dlq");
  REQUIRE(redis.has_value());
  CHECK(redis->kind == store_kind::redis);
  CHECK(redis->location == "127.0.0.1");
  CHECK(redis->port == 6379);
  CHECK(redis->topic == "dlq");
  CHECK(llmdlq::display_name(*redis) == "redis:127.0.0.1:6379/dlq");

  auto jsonl = llmdlq::parse_store_spec("jsonl:out/payloads.jsonl");
  REQUIRE(jsonl.has_value());
  CHECK(jsonl->kind == store_kind::jsonl);
  CHECK(jsonl->location == "out/payloads.jsonl");
  CHECK(llmdlq::display_name(*jsonl) == "out/payloads.jsonl");
}

TEST_CASE("a text that is no spec of the kinds asked for says why, with a code", "[store_spec]") {
  const auto refused = [](std::string_view text, llmdlq::store_kinds kinds = llmdlq::every_store_kind) {
    auto spec = llmdlq::parse_store_spec(text, kinds);
    REQUIRE_FALSE(spec.has_value());
    return spec.error();
  };
  CHECK(refused("mysql:db").code == store_spec_errc::unknown_kind);
  CHECK(refused("sqlite").code == store_spec_errc::unknown_kind);
  CHECK(refused("mysql:db").message ==
        "no store 'mysql:db': give sqlite:PATH[#TABLE] | postgres:CONNINFO[#[SCHEMA.]TABLE] | "
        "kafka:BROKERS/TOPIC (read only) | jsonl:PATH | redis:HOST:PORT/STREAM");
  const auto not_here = refused("redis:h:1/s", llmdlq::moderation_store_kinds);
  CHECK(not_here.code == store_spec_errc::kind_not_accepted);
  CHECK(not_here.message == "no store 'redis:h:1/s': give sqlite:PATH[#TABLE] | postgres:CONNINFO[#[SCHEMA.]TABLE] | "
                            "kafka:BROKERS/TOPIC (read only)");
  CHECK(refused("kafka:brokers").code == store_spec_errc::malformed);
  CHECK(refused("kafka:brokers").message == "'kafka:brokers' is not kafka:BROKERS/TOPIC");
  CHECK(refused("kafka:/topic").code == store_spec_errc::malformed);
  CHECK(refused("redis:host/stream").code == store_spec_errc::malformed);
  CHECK(refused("redis:host:0/stream").code == store_spec_errc::malformed);
  CHECK(refused("redis:host:x/stream").code == store_spec_errc::malformed);
  CHECK(refused("sqlite:").code == store_spec_errc::no_location);
  CHECK(refused("jsonl:", llmdlq::replay_target_kinds).message ==
        "'jsonl:' names no store: give postgres:CONNINFO[#[SCHEMA.]TABLE] | kafka:BROKERS/TOPIC | jsonl:PATH | "
        "redis:HOST:PORT/STREAM");
  CHECK(refused("sqlite:#letters").code == store_spec_errc::no_location);

  const std::error_code ec = store_spec_errc::malformed;
  CHECK(std::string_view(ec.category().name()) == "llmdlq.store_spec");
  CHECK(ec.message() == "malformed");
}

TEST_CASE("a set of kinds holds what it was made of, and the forms follow it", "[store_spec]") {
  constexpr llmdlq::store_kinds sinks = {store_kind::jsonl, store_kind::sqlite};
  static_assert(sinks.contains(store_kind::jsonl) && !sinks.contains(store_kind::kafka));
  static_assert(llmdlq::store_kinds{}.empty());
  static_assert(llmdlq::moderation_store_kinds ==
                llmdlq::store_kinds{store_kind::kafka, store_kind::postgres, store_kind::sqlite});
  CHECK(llmdlq::store_forms(sinks) == "sqlite:PATH[#TABLE] | jsonl:PATH");  // in the forms' order
  CHECK(llmdlq::store_forms(llmdlq::store_kinds{}).empty());
  CHECK(llmdlq::to_string(store_kind::postgres) == "postgres");
  CHECK(llmdlq::store_form(store_kind::redis) == "redis:HOST:PORT/STREAM");
}

}  // namespace store_spec_test
