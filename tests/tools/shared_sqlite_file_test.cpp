// SPDX-License-Identifier: MIT
// One SQLite DLQ file used by several processes at once, as operators run it:
// a replay delivering recovered payloads, an operator claiming a letter and a
// worker writing new dead letters, all on the same file. Nothing acknowledged
// may be lost or stored twice, and the file must stay intact.
#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("one SQLite file shared by a replay, an operator and a writer", "[tools][replay][sqlite]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <sqlite3.h>

#include <llmdlq/sqlite/store.hpp>

#include "llm/scripted_server.hpp"
#include "support/eventually.hpp"
#include "support/replay_letters.hpp"
#include "tools/run_tool.hpp"

namespace shared_sqlite_file_test {

using namespace std::chrono_literals;
using llmdlq::moderation_status;
using llmdlq::test::chat_completion;
using llmdlq::test::exit_code_of;
using llmdlq::test::start_llmdlq;
using llmdlq::test::run_llmdlq;
using llmdlq::test::scripted_server;
using llmdlq::test::slurp;
using llmdlq::test::temp_dir;

namespace {

// `PRAGMA integrity_check` of the file, through a connection of its own.
std::string integrity_of(const std::string& file) {
  sqlite3* db = nullptr;
  std::string verdict = "cannot open";
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* check = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &check, nullptr) == SQLITE_OK) {
      verdict.clear();
      while (sqlite3_step(check) == SQLITE_ROW) {
        verdict += reinterpret_cast<const char*>(sqlite3_column_text(check, 0));
      }
    }
    sqlite3_finalize(check);
  } else {
    verdict = sqlite3_errmsg(db);
  }
  sqlite3_close(db);
  return verdict;
}

// `n` lines for `llmdlq process` whose responses are cut off: each a new dead letter.
std::string cut_off_lines(int round, int n) {
  std::string lines;
  for (int i = 0; i < n; ++i) {
    const std::string response = R"({"name": "new-)" + std::to_string(round) + "-" + std::to_string(i) +
                                 R"(", "total": )";
    lines += boost::json::serialize(boost::json::object{{"id", i}, {"response", response}}) + "\n";
  }
  return lines;
}

}  // namespace

// Closing any descriptor of a file drops the process's POSIX locks on it; a
// replay that did so let the next writer's exit delete the WAL under it, and
// lost what it wrote after.
TEST_CASE("one SQLite file: a replay beside an operator and a writer loses nothing, stores nothing twice",
          "[tools][replay][sqlite]") {
  constexpr int rounds = 20;
  constexpr int replayed = 20;
  constexpr int written = 200;
  for (int round = 0; round < rounds; ++round) {
    INFO("round " << round);
    temp_dir dir;
    const std::string schema = dir.write("schema.json", llmdlq::test::replay_schema);
    const std::string db = (std::filesystem::canonical(dir.path()) / "dlq.db").string();
    const std::string out = (std::filesystem::canonical(dir.path()) / "out.jsonl").string();
    const std::string allowlist = dir.write("targets.allow", "jsonl:" + out + "\n");
    const auto letters = llmdlq::test::cut_off_letters(replayed);
    {
      auto store = llmdlq::sqlite_store::open(db);
      REQUIRE(store.has_value());
      for (const auto& letter : letters) REQUIRE(store->publish(letter).has_value());
    }
    scripted_server server;
    for (int i = 0; i < replayed; ++i) {
      server.add(llmdlq::test::delayed(chat_completion(llmdlq::test::recovered_answer(i)), 40ms));
    }
    REQUIRE(server.listening());

    const pid_t replay = start_llmdlq({"replay", "sqlite:" + db, "--schema", schema, "--execute", "--rate", "0",
                                       "--model-url", server.base_url(), "--to", "jsonl:" + out, "--allowlist",
                                       allowlist});
    REQUIRE(llmdlq::test::eventually([&] { return server.calls() >= 3; }));
    // The operator takes the last letter while the replay runs; the worker writes beside both.
    const std::string claimed = letters.back().dlq_id;
    const auto claim = run_llmdlq("claim sqlite:" + db + " " + claimed + " --operator ops");
    INFO(claim.err);
    CHECK(claim.exit_code == 0);
    const auto process = run_llmdlq("process --schema " + schema + " --sink sqlite:" + db, cut_off_lines(round, written));
    INFO(process.err);
    CHECK(process.exit_code == 0);
    CHECK(server.calls() < static_cast<std::size_t>(replayed));  // the writer ran while the replay did
    CHECK(exit_code_of(replay) == 0);

    CHECK(integrity_of(db) == "ok");
    auto store = llmdlq::sqlite_store::open(db, {.read_only = true});
    REQUIRE(store.has_value());
    const auto statistics = store->statistics();
    REQUIRE(statistics.has_value());
    CHECK(statistics->total == static_cast<std::uint64_t>(replayed + written));
    const auto statuses = llmdlq::test::statuses_by_key(*store);
    std::size_t recovered = 0;
    for (const auto& letter : letters) {
      const auto status = statuses.at(letter.idempotency_key);
      if (letter.dlq_id == claimed) {
        // Claimed before the replay reached it, or recovered before the claim: never both.
        CHECK((status == moderation_status::claimed || status == moderation_status::recovered));
      } else {
        CHECK(status == moderation_status::recovered);
      }
      recovered += status == moderation_status::recovered;
    }
    // Every recovered payload went downstream once, on a line of its own.
    std::multiset<std::string> keys;
    std::istringstream lines(slurp(out));
    for (std::string line; std::getline(lines, line);) {
      keys.insert(std::string(boost::json::parse(line).at("idempotency_key").as_string()));
    }
    CHECK(keys.size() == recovered);
    CHECK(std::set<std::string>(keys.begin(), keys.end()).size() == keys.size());
  }
}

}  // namespace shared_sqlite_file_test

#endif
