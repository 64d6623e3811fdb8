// SPDX-License-Identifier: MIT
// llmdlq::stores: the moderation store and the replay target a spec names,
// opened through the transports built, and every refusal typed, with
// whether the fault is in what was asked or in the store.
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <system_error>

#include <llmdlq/stores/open.hpp>

#include "catch.hpp"
#include "support/file_mode.hpp"
#include "support/temp_dir.hpp"

namespace open_test {

namespace {

using llmdlq::open_errc;

llmdlq::store_spec spec_of(std::string_view text) {
  auto spec = llmdlq::parse_store_spec(text);
  REQUIRE(spec.has_value());
  return *spec;
}

llmdlq::ledger_entry payload(std::string key) {
  llmdlq::ledger_entry e;
  e.idempotency_key = std::move(key);
  e.source = "replay";
  e.output = R"({"total": 1})";
  return e;
}

}  // namespace

TEST_CASE("open_store opens a SQLite DLQ, read-only only where it is", "[stores]") {
  llmdlq::test::temp_dir dir;
  const std::string db = (dir.path() / "dlq.db").string();

  auto missing = llmdlq::open_store("sqlite:" + db, {.read_only = true});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == open_errc::not_found);
  CHECK(missing.error().message == "no DLQ at " + db);
  CHECK(llmdlq::is_usage_error(missing.error().code));
  CHECK_FALSE(std::filesystem::exists(db));

  auto made = llmdlq::open_store("sqlite:" + db + "#letters");
  REQUIRE(made.has_value());
  CHECK((*made)->kind() == "sqlite");
  made->reset();
  auto read = llmdlq::open_store(spec_of("sqlite:" + db + "#letters"), {.read_only = true});
  REQUIRE(read.has_value());
  auto stats = (*read)->statistics();
  REQUIRE(stats.has_value());
  CHECK(stats->total == 0);
}

TEST_CASE("open_store refuses what is no DLQ as the store's fault, and what is no store as the caller's", "[stores]") {
  llmdlq::test::temp_dir dir;
  const auto text = dir.write("notes.db", "these are notes, not a database\n");
  auto foreign = llmdlq::open_store("sqlite:" + text);
  REQUIRE_FALSE(foreign.has_value());
  CHECK(foreign.error().code == open_errc::refused);
  CHECK(llmdlq::is_permanent(foreign.error().code));
  CHECK_FALSE(llmdlq::is_usage_error(foreign.error().code));

  for (const std::string spec : {"jsonl:" + text, std::string("redis:127.0.0.1:1/dlq")}) {
    CAPTURE(spec);
    auto opened = llmdlq::open_store(spec_of(spec));
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().code == open_errc::not_a_store);
    CHECK(opened.error().message.ends_with(" is not a moderation store"));
  }
  auto bad = llmdlq::open_store("jsonl:" + text);  // the text form takes the moderation stores only
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == open_errc::bad_spec);
  CHECK(bad.error().message.starts_with("no store 'jsonl:"));
  CHECK(llmdlq::open_store("sqlite:").error().code == open_errc::bad_spec);
}

TEST_CASE("open_store opens a Kafka topic read only, and a kind not built is not_built", "[stores]") {
  auto writable = llmdlq::open_store("kafka:127.0.0.1:1/dlq");
  REQUIRE_FALSE(writable.has_value());
#ifdef LLMDLQ_TEST_WITH_KAFKA
  CHECK(writable.error().code == open_errc::read_only);
  CHECK(writable.error().message.find("read only") != std::string::npos);
#else
  CHECK(writable.error().code == open_errc::not_built);
#endif
  CHECK(llmdlq::is_usage_error(writable.error().code));

  auto postgres = llmdlq::open_store("postgres:host=127.0.0.1 port=1 connect_timeout=2#ops.letters");
  REQUIRE_FALSE(postgres.has_value());
#ifdef LLMDLQ_TEST_WITH_POSTGRES
  CHECK(postgres.error().code == open_errc::unavailable);  // nobody listens: try again later
  CHECK_FALSE(llmdlq::is_permanent(postgres.error().code));
#else
  CHECK(postgres.error().code == open_errc::not_built);
  CHECK(postgres.error().message == "postgres#ops.letters names a postgres store, and this llmdlq was built without "
                                    "llmdlq::postgres");
#endif
}

TEST_CASE("open_target opens every kind of target but a SQLite file", "[stores][target]") {
  llmdlq::test::temp_dir dir;
  const auto out = dir.path() / "out.jsonl";
  auto target = llmdlq::open_target(spec_of("jsonl:" + out.string()));
  REQUIRE(target.has_value());
  REQUIRE((*target)->deliver(payload("k0")).has_value());
  CHECK(llmdlq::test::mode_of(out) == 0600);

  auto sqlite = llmdlq::open_target(spec_of("sqlite:dlq.db"));
  REQUIRE_FALSE(sqlite.has_value());
  CHECK(sqlite.error().code == open_errc::not_a_target);
  CHECK(sqlite.error().message ==
        "dlq.db is not a replay target: give postgres:CONNINFO[#[SCHEMA.]TABLE] | kafka:BROKERS/TOPIC | jsonl:PATH | "
        "redis:HOST:PORT/STREAM");
  // A server that is not there is a target to try again, not a usage error.
  auto nobody = llmdlq::open_target(spec_of("redis:127.0.0.1:1/out"));
  REQUIRE_FALSE(nobody.has_value());
#ifdef LLMDLQ_TEST_WITH_REDIS
  CHECK(nobody.error().code == open_errc::unavailable);
#else
  CHECK(nobody.error().code == open_errc::not_built);
#endif

  const auto exposed = dir.write("exposed.jsonl", "");
  std::filesystem::permissions(exposed, std::filesystem::perms(0646), std::filesystem::perm_options::replace);
  auto refused = llmdlq::open_target(spec_of("jsonl:" + exposed));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == open_errc::refused);
  auto nowhere = llmdlq::open_target(spec_of("jsonl:" + (dir.path() / "none" / "out.jsonl").string()));
  REQUIRE_FALSE(nowhere.has_value());
  CHECK(nowhere.error().code == open_errc::unavailable);
}

TEST_CASE("open_target with an allowlist opens only what it allows, as resolved", "[stores][target][allowlist]") {
  llmdlq::test::temp_dir dir;
  std::filesystem::create_directory(dir.path() / "replays");
  std::filesystem::create_directory(dir.path() / "private");
  const auto root = std::filesystem::canonical(dir.path());
  const auto list = dir.write("targets.allow",
                              "# where payloads may go\njsonl:" + (root / "replays").string() + "/*\n");
  const llmdlq::target_open_options allowed{list};

  // `..` leads out of the allowed folder: refused, and nothing is created.
  const auto escaping = (dir.path() / "replays" / ".." / "private" / "out.jsonl").string();
  auto out = llmdlq::open_target(spec_of("jsonl:" + escaping), allowed);
  REQUIRE_FALSE(out.has_value());
  CHECK(out.error().code == open_errc::not_allowed);
  CHECK(out.error().message ==
        "jsonl:" + (root / "private" / "out.jsonl").string() + " is not on the allowlist " + list);
  CHECK(llmdlq::is_usage_error(out.error().code));
  CHECK_FALSE(std::filesystem::exists(root / "private" / "out.jsonl"));

  // A spelling that stays inside is matched, and the spec names the resolved file.
  const auto inside = (dir.path() / "private" / ".." / "replays" / "out.jsonl").string();
  auto matched = llmdlq::allowed_target(spec_of("jsonl:" + inside), list);
  REQUIRE(matched.has_value());
  CHECK(matched->location == (root / "replays" / "out.jsonl").string());
  auto opened = llmdlq::open_target(spec_of("jsonl:" + inside), allowed);
  REQUIRE(opened.has_value());
  CHECK(std::filesystem::exists(root / "replays" / "out.jsonl"));

  // An allowlist others can write is trusted by nobody.
  std::filesystem::permissions(list, std::filesystem::perms(0666), std::filesystem::perm_options::replace);
  auto untrusted = llmdlq::allowed_target(spec_of("jsonl:" + inside), list);
  REQUIRE_FALSE(untrusted.has_value());
  CHECK(untrusted.error().code == open_errc::allowlist_refused);
  CHECK(untrusted.error().message.starts_with("the allowlist is refused: " + list + " has mode 0666"));
  auto missing = llmdlq::allowed_target(spec_of("jsonl:" + inside), dir.path() / "none.allow");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == open_errc::allowlist_refused);
  CHECK(llmdlq::allowed_target(spec_of("sqlite:dlq.db"), list).error().code == open_errc::not_a_target);
}

TEST_CASE("allowed_target matches a topic, a stream and a table as their specs read", "[stores][target][allowlist]") {
  llmdlq::test::temp_dir dir;
  const auto list = dir.write("targets.allow", "kafka:broker-1:9092,broker-2:9092/receipts   # the output topic\n"
                                               "redis:10.0.0.5:6379/recovered:*\n"
                                               "postgres:host=db.internal dbname=pipeline#ops.deliveries\n");
  for (const char* allowed : {"kafka:broker-1:9092,broker-2:9092/receipts", "redis:10.0.0.5:6379/recovered:eu",
                              "postgres:host=db.internal dbname=pipeline#ops.deliveries"}) {
    CAPTURE(allowed);
    auto matched = llmdlq::allowed_target(spec_of(allowed), list);
    REQUIRE(matched.has_value());
    CHECK(matched->location == spec_of(allowed).location);
  }
  for (const char* refused :
       {"kafka:broker-1:9092,broker-2:9092/receipts-dlq", "redis:10.0.0.5:6379/other",
        "postgres:host=db.internal dbname=pipeline#ops.letters", "postgres:host=db.internal dbname=pipeline"}) {
    CAPTURE(refused);
    auto matched = llmdlq::allowed_target(spec_of(refused), list);
    REQUIRE_FALSE(matched.has_value());
    CHECK(matched.error().code == open_errc::not_allowed);
  }
}

TEST_CASE("allowed_target: no spelling of a spec reaches a cluster or a database the allowlist does not name",
          "[stores][target][allowlist]") {
  llmdlq::test::temp_dir dir;
  const auto list = dir.write("targets.allow", "kafka:good:9092/*\n"
                                               "redis:good:6379/recovered:*\n"
                                               "postgres:host=db dbname=app#*\n"
                                               "postgres:host=db dbname=app*\n"
                                               "postgres:host=db dbname=app password=s3cret#deliveries\n");
  CHECK(llmdlq::allowed_target(spec_of("kafka:good:9092/receipts"), list).has_value());
  CHECK(llmdlq::allowed_target(spec_of("redis:good:6379/recovered:eu"), list).has_value());
  CHECK(llmdlq::allowed_target(spec_of("postgres:host=db dbname=app password=s3cret#deliveries"), list).has_value());
  // Another broker slipped in before the topic; another host after a prefix, or through the table's `#`.
  for (const char* escaping : {"kafka:good:9092/x,evil:9092/receipts", "kafka:evil:9092,good:9092/receipts",
                               "redis:good:6379/x:1/recovered:eu", "postgres:host=db dbname=app#x host=evil#t",
                               "postgres:host=db dbname=app host=evil", "postgres:host=db dbname=app#deliveries"}) {
    CAPTURE(escaping);
    auto matched = llmdlq::allowed_target(spec_of(escaping), list);
    REQUIRE_FALSE(matched.has_value());
    CHECK(matched.error().code == open_errc::not_allowed);
  }
  // A PostgreSQL target is named without its connection string, which may hold a password.
  auto other_table = llmdlq::allowed_target(spec_of("postgres:host=db dbname=app password=s3cret#other"), list);
  REQUIRE_FALSE(other_table.has_value());
  CHECK(other_table.error().message == "postgres#other is not on the allowlist " + list);
}

TEST_CASE("open_errc: a category, permanence, and whose fault each code is", "[stores]") {
  const std::error_code ec = open_errc::not_built;
  CHECK(std::string_view(ec.category().name()) == "llmdlq.open");
  CHECK(ec.message() == "not_built");
  CHECK(ec == llmdlq::failure_condition::permanent);
  CHECK(std::error_code(open_errc::unavailable) == llmdlq::failure_condition::transient);
  for (int v = 0; v <= static_cast<int>(open_errc::unavailable); ++v) {
    const auto code = static_cast<open_errc>(v);
    CAPTURE(llmdlq::to_string(code));
    CHECK(llmdlq::to_string(code) != "unknown");
    const bool stores_fault = code == open_errc::refused || code == open_errc::unavailable;
    CHECK(llmdlq::is_usage_error(code) == !stores_fault);
    CHECK(llmdlq::is_permanent(code) == (code != open_errc::unavailable));
  }
}

}  // namespace open_test
