// SPDX-License-Identifier: MIT
// `llmdlq stats` reads a DLQ and changes nothing in it.
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json/parse.hpp>

#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/skip.hpp"
#include "tools/run_tool.hpp"

namespace stats_command_test {

using llmdlq::test::run_llmdlq;
using llmdlq::test::run_llmdlq_reading;
using llmdlq::test::slurp;
using llmdlq::test::temp_dir;

namespace {

// A DLQ with two dead letters, written by `llmdlq process`.
std::string filled_dlq(const temp_dir& dir) {
  const auto schema = dir.write("schema.json", R"({"type": "object"})");
  const std::string db = (dir.path() / "dlq.db").string();
  const auto run = run_llmdlq("process --schema " + schema + " --sink sqlite:" + db,
                              R"({"id": 1, "response": "nope"})" "\n" R"({"id": 2, "response": "[1, 2"})" "\n");
  REQUIRE(run.exit_code == 0);
  return db;
}

}  // namespace

TEST_CASE("stats: reads the DLQ without writing to it", "[tools][stats]") {
  temp_dir dir;
  const auto db = filled_dlq(dir);
  const std::string before = slurp(db);
  const auto run = run_llmdlq("stats --json sqlite:" + db);
  CHECK(run.exit_code == 0);
  CHECK(boost::json::parse(run.out).at("total") == 2);
  CHECK(slurp(db) == before);
}

TEST_CASE("stats: works on a DLQ file it may not write", "[tools][stats]") {
  if (::geteuid() == 0 && ::access("/usr/bin/setpriv", X_OK) != 0) {
    LLMDLQ_SKIP("root may write any file, and setpriv is missing: cannot read the DLQ as another user");
  }
  temp_dir dir;
  const auto db = filled_dlq(dir);
  REQUIRE(::chmod(db.c_str(), 0444) == 0);
  // Root may write any file: read as nobody then, from a folder of nobody's
  // (0755, no one else may write it), where nobody may create the WAL index
  // but not change the DLQ.
  std::string launcher;
  if (::geteuid() == 0) {
    REQUIRE(::chown(dir.path().c_str(), 65534, 65534) == 0);
    launcher = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups";
  }
  const std::string before = slurp(db);
  const auto run = run_llmdlq_reading("stats --json sqlite:" + db, "/dev/null", launcher);
  INFO(run.err);
  CHECK(run.exit_code == 0);
  REQUIRE_FALSE(run.out.empty());
  CHECK(boost::json::parse(run.out).at("total") == 2);
  CHECK(slurp(db) == before);
}

TEST_CASE("stats: a missing file or one that is not a DLQ is an error, and stays as it was", "[tools][stats]") {
  temp_dir dir;
  const auto missing = dir.path() / "missing.db";
  auto run = run_llmdlq("stats sqlite:" + missing.string());
  CHECK(run.exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(missing));

  const auto empty = dir.write("empty.db", "");
  run = run_llmdlq("stats sqlite:" + empty);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("not a DLQ") != std::string::npos);
  CHECK(std::filesystem::file_size(empty) == 0);

  const auto text = dir.write("dlq.jsonl", "{\"dlq_id\": \"x\"}\n");
  run = run_llmdlq("stats sqlite:" + text);
  CHECK(run.exit_code == 2);
  CHECK(slurp(text) == "{\"dlq_id\": \"x\"}\n");
}

TEST_CASE("stats: counts the replayer's statuses", "[tools][stats]") {
  temp_dir dir;
  const auto db = filled_dlq(dir);
  {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    const auto pending = store->list(llmdlq::moderation_status::pending, 10);
    REQUIRE(pending.has_value());
    REQUIRE(pending->size() == 2);
    const auto& first = (*pending)[0];
    const auto& second = (*pending)[1];
    REQUIRE(store->act({.dlq_id = first.dlq_id, .action = llmdlq::moderation_action::recover,
                        .operator_name = "replayer", .note = "", .corrected = R"({"id": 1})",
                        .envelope_json = first.envelope_json})
                .has_value());
    REQUIRE(store->act({.dlq_id = second.dlq_id, .action = llmdlq::moderation_action::exhaust,
                        .operator_name = "replayer", .note = "", .corrected = std::nullopt,
                        .envelope_json = second.envelope_json})
                .has_value());
  }
  const auto run = run_llmdlq("stats --json sqlite:" + db);
  REQUIRE(run.exit_code == 0);
  const auto stats = boost::json::parse(run.out);
  CHECK(stats.at("total") == 2);
  CHECK(stats.at("status").at("recovered") == 1);
  CHECK(stats.at("status").at("exhausted") == 1);
}

TEST_CASE("stats, top and report count one dead letter as one, not as 1 dead letters", "[tools][stats]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", R"({"type": "object"})");
  const std::string db = (dir.path() / "dlq.db").string();
  REQUIRE(run_llmdlq("process --schema " + schema + " --sink sqlite:" + db, R"({"id": 1, "response": "nope"})" "\n")
              .exit_code == 0);
  CHECK(run_llmdlq("stats sqlite:" + db).out.find(": 1 dead letter\n") != std::string::npos);
  CHECK(run_llmdlq("top sqlite:" + db + " --once").out.find("1 dead letter, 1 pending") != std::string::npos);
  const auto page = (dir.path() / "report.html").string();
  const auto report = run_llmdlq("report sqlite:" + db + " --html " + page);
  CHECK(report.out == "wrote " + page + " (1 dead letter in all)\n");
  CHECK(slurp(page).find("<strong>1</strong> dead letter;") != std::string::npos);
}

}  // namespace stats_command_test
