// SPDX-License-Identifier: MIT
// A SQLite file that is not a DLQ (another application's database, or one
// whose dead_letters table has another layout) is refused by every command
// that would write a DLQ, before anything is written: no table is added, the
// journal mode stays, the file's bytes stay. llmdlq knows its own files by
// their application id, or, in a file an earlier version made, by holding
// llmdlq's tables alone.
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "catch.hpp"
#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

namespace foreign_database_test {

using llmdlq::test::run_llmdlq;
using llmdlq::test::run_llmdlq_reading;
using llmdlq::test::slurp;
using llmdlq::test::temp_dir;

namespace {

constexpr std::string_view schema_json = R"({"type": "object", "required": ["total"]})";

// A database another program made, as SQLite makes one by default (a rollback journal).
struct foreign_file {
  std::string name;
  std::string sql;
  std::string holds;  // what the refusal says the file holds
};

const foreign_file another_application{
    "app.db",
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, total REAL);"
    "INSERT INTO orders VALUES (1, 'ann', 9.5), (2, 'bob', 12);",
    "it holds the table orders (id INTEGER, customer TEXT, total REAL)"};

const foreign_file other_dead_letters{
    "other.db",
    "CREATE TABLE dead_letters (id INTEGER PRIMARY KEY, body TEXT NOT NULL, received_at TEXT);"
    "INSERT INTO dead_letters VALUES (1, 'a message the broker gave up on', '2026-01-01');",
    "it holds the table dead_letters (id INTEGER, body TEXT, received_at TEXT)"};

std::string make(const temp_dir& dir, const foreign_file& file) {
  const auto path = (dir.path() / file.name).string();
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, file.sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  return path;
}

// The names of the tables and indexes `path` holds, read without writing.
std::set<std::string> objects_of(const std::string& path) {
  sqlite3* db = nullptr;
  std::set<std::string> names;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* query = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master", -1, &query, nullptr) == SQLITE_OK);
  while (sqlite3_step(query) == SQLITE_ROW) names.insert(reinterpret_cast<const char*>(sqlite3_column_text(query, 0)));
  sqlite3_finalize(query);
  sqlite3_close(db);
  return names;
}

// What each command that writes a DLQ is given, and the exit code it refuses with.
struct writing_command {
  std::string name;
  std::string arguments;  // {0}: the store
  std::string input;
};

}  // namespace

TEST_CASE("commands that write a DLQ refuse a SQLite file that is not one, and leave it as it was",
          "[tools][sqlite]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto root = std::filesystem::canonical(dir.path());
  const auto out = (root / "corrections.jsonl").string();
  const auto allowlist = dir.write("targets.allow", "jsonl:" + out + "\n");

  std::vector<writing_command> commands{
      {"process", "process --schema " + schema + " --sink {0}", R"({"id": 1, "response": "not json"})" "\n"},
      {"purge", "purge {0} --operator alice", ""},
      {"replay", "replay {0} --schema " + schema + " --execute --rate 0 --model-url http://127.0.0.1:9", ""},
      {"deliver", "deliver {0} --to jsonl:" + out + " --allowlist " + allowlist, ""},
      {"claim", "claim {0} some-letter --operator ann", ""},
  };
  // rekey, when this llmdlq seals originals.
  const auto keys = (root / "keys").string();
  if (run_llmdlq("keys generate k1 --keys " + keys).exit_code == 0) {
    commands.push_back({"rekey", "rekey {0} --keys " + keys + " --to k1", ""});
  }

  const auto& file = GENERATE(as<foreign_file>{}, another_application, other_dead_letters);
  CAPTURE(file.name);
  for (const auto& command : commands) {
    CAPTURE(command.name);
    const auto path = make(dir, file);
    const std::string before = slurp(path);
    const auto objects = objects_of(path);

    const auto run = run_llmdlq(fmt::format(fmt::runtime(command.arguments), "sqlite:" + path), command.input);
    INFO(run.err);
    CHECK(run.exit_code == 3);
    CHECK(run.err.find(fmt::format("{} is not a DLQ: {}, which llmdlq did not make; nothing was written to it",
                                   path, file.holds)) != std::string::npos);
    CHECK(slurp(path) == before);
    for (const char* beside : {"-wal", "-shm", "-journal"}) CHECK_FALSE(std::filesystem::exists(path + beside));
    CHECK(objects_of(path) == objects);
    std::filesystem::remove(path);
  }
}

TEST_CASE("read-only views refuse a SQLite file that is not a DLQ, and leave it as it was", "[tools][sqlite]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto& file = GENERATE(as<foreign_file>{}, another_application, other_dead_letters);
  CAPTURE(file.name);
  const auto path = make(dir, file);
  const std::string before = slurp(path);
  for (const std::string command : {"list sqlite:" + path, "stats sqlite:" + path, "purge --dry-run sqlite:" + path,
                                    "replay sqlite:" + path + " --schema " + schema}) {
    CAPTURE(command);
    const auto run = run_llmdlq(command);
    INFO(run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(path + " is not a DLQ: " + file.holds) != std::string::npos);
  }
  CHECK(slurp(path) == before);
  for (const char* beside : {"-wal", "-shm", "-journal"}) CHECK_FALSE(std::filesystem::exists(path + beside));
}

TEST_CASE("a SQLite file another application marked as its own is refused even with a DLQ's tables",
          "[tools][sqlite]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto path = (dir.path() / "dlq.db").string();
  const std::string line = R"({"id": 1, "response": "not json"})" "\n";
  REQUIRE(run_llmdlq("process --schema " + schema + " --sink sqlite:" + path, line).exit_code == 0);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "PRAGMA application_id = 0x12345678", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  const std::string before = slurp(path);

  auto run = run_llmdlq("process --schema " + schema + " --sink sqlite:" + path, line);
  INFO(run.err);
  CHECK(run.exit_code == 3);
  CHECK(run.err.find(path + " is not a DLQ: its application id is 0x12345678, another application's") !=
        std::string::npos);
  run = run_llmdlq("list sqlite:" + path);
  CHECK(run.exit_code == 2);
  CHECK(slurp(path) == before);
}

}  // namespace foreign_database_test
