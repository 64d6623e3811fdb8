// SPDX-License-Identifier: MIT
// `llmdlq purge`: removes the expired dead letters of a SQLite or JSON Lines
// DLQ at the time given, prints the report, audits; a dry run changes nothing.
#include <boost/json/parse.hpp>

#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/sqlite/store.hpp>

#include <sstream>
#include <vector>

#include "catch.hpp"
#include "support/expiring_letters.hpp"
#include "tools/run_tool.hpp"

namespace purge_command_test {

using llmdlq::test::run_llmdlq;
using llmdlq::test::slurp;
using llmdlq::test::temp_dir;

namespace {

const std::string at_purge_time = " --now 2026-06-01T00:00:00Z --operator alice";

}  // namespace

TEST_CASE("purge: a SQLite DLQ loses its expired letters, a dry run nothing", "[tools][purge]") {
  temp_dir dir;
  const llmdlq::test::expiring_letters letters;
  const auto db = dir.path() / "dlq.db";
  {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    REQUIRE(store->publish_batch(letters.all()).has_value());
  }
  const auto dry = run_llmdlq("purge --dry-run --json sqlite:" + db.string() + at_purge_time);
  INFO(dry.err);
  REQUIRE(dry.exit_code == 0);
  CHECK(boost::json::parse(dry.out) == boost::json::parse(
      R"({"count":3,"oldest_expires_at":"2026-05-30T00:00:00.000Z","newest_expires_at":"2026-06-01T00:00:00.000Z",)"
      R"("operator":"alice","at":"2026-06-01T00:00:00.000Z","dry_run":true,"store":"sqlite:)" + db.string() +
      R"(","unreadable":0,"unreadable_records":[]})"));

  const auto purged = run_llmdlq("purge sqlite:" + db.string() + at_purge_time);
  INFO(purged.err);
  REQUIRE(purged.exit_code == 0);
  CHECK(purged.out == "purged 3 dead letters from sqlite:" + db.string() +
                          ", expired 2026-05-30T00:00:00.000Z .. 2026-06-01T00:00:00.000Z "
                          "(operator alice, at 2026-06-01T00:00:00.000Z)\n");
  const auto again = run_llmdlq("purge sqlite:" + db.string() + at_purge_time);
  CHECK(again.exit_code == 0);
  CHECK(again.out.starts_with("purged 0 dead letters from sqlite:"));
  auto store = llmdlq::sqlite_store::open(db, {.read_only = true});
  REQUIRE(store.has_value());
  CHECK(store->statistics()->total == 3);
}

TEST_CASE("purge: a JSON Lines DLQ is compacted and audited beside it", "[tools][purge]") {
  temp_dir dir;
  const llmdlq::test::expiring_letters letters;
  const auto file = dir.path() / "dlq.jsonl";
  {
    auto sink = llmdlq::jsonl_file_sink::open(file);
    REQUIRE(sink.has_value());
    REQUIRE(sink->publish_batch(letters.all()).has_value());
    const auto locked = run_llmdlq("purge jsonl:" + file.string() + at_purge_time);
    CHECK(locked.exit_code == 3);
    CHECK(locked.err.find("locked") != std::string::npos);
  }
  const auto purged = run_llmdlq("purge --json jsonl:" + file.string() + at_purge_time);
  INFO(purged.err);
  REQUIRE(purged.exit_code == 0);
  CHECK(boost::json::parse(purged.out).at("count") == 3);
  CHECK(llmdlq::read_jsonl_envelopes(file)->envelopes.size() == 3);
  // The intent, then the purge done.
  std::istringstream audit(slurp(llmdlq::jsonl_purge_audit_path(file)));
  std::vector<std::string> phases;
  for (std::string line; std::getline(audit, line);) {
    const auto entry = boost::json::parse(line);
    CHECK(entry.at("operator") == "alice");
    CHECK(entry.at("count") == 3);
    phases.emplace_back(entry.at("phase").as_string());
  }
  CHECK(phases == std::vector<std::string>{"intent", "done"});
}

TEST_CASE("purge: usage errors and a missing store exit 2", "[tools][purge]") {
  temp_dir dir;
  CHECK(run_llmdlq("purge").exit_code == 2);
  CHECK(run_llmdlq("purge sqlite:" + (dir.path() / "none.db").string()).exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "none.db"));
  CHECK(run_llmdlq("purge --now yesterday sqlite:x.db").exit_code == 2);
  CHECK(run_llmdlq("purge kafka:topic").exit_code == 2);
  CHECK(run_llmdlq("purge --help").exit_code == 0);
}

}  // namespace purge_command_test
