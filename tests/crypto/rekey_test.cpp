// SPDX-License-Identifier: MIT
// Sealed originals at rest (a SQLite DLQ read raw) and `llmdlq rekey` over
// SQLite and JSON Lines DLQs, crashes included.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "llmdlq/jsonl_file_sink.hpp"
#include "llmdlq/sqlite/store.hpp"
#include "sealed_letters.hpp"
#include "tools/run_tool.hpp"

extern char** environ;

namespace rekey_test {


using namespace llmdlq::test;
namespace fs = std::filesystem;

TEST_CASE("a DLQ row of a response processed with a cipher holds no plaintext of its original", "[crypto]") {
  sealing_setup setup;
  const auto schema = llmdlq::schema::compile(R"({"type": "object"})");
  REQUIRE(schema);
  llmdlq::request_context context;
  context.idempotency_key = "invoice-1";
  context.original_input = input_of(1);
  auto result = llmdlq::process_llm_response(raw_of(1), *schema, context, setup.options());
  REQUIRE_FALSE(result);
  const llmdlq::envelope& e = result.error();
  CHECK(e.failure.category == llmdlq::failure_category::truncated);
  REQUIRE(e.raw_response.sealed);
  REQUIRE(e.original_input->sealed);

  const fs::path db = setup.scratch.path() / "dlq.db";
  {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store);
    REQUIRE(store->publish(e));
  }
  // The row as SQLite holds it, through its C API: neither the stored view
  // nor any other column carries the originals' personal data.
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* row = nullptr;
  REQUIRE(sqlite3_prepare_v2(handle, "SELECT * FROM dead_letters", -1, &row, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(row) == SQLITE_ROW);
  std::string columns;
  for (int c = 0; c < sqlite3_column_count(row); ++c) {
    if (const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(row, c))) columns += text;
  }
  sqlite3_finalize(row);
  sqlite3_close(handle);
  CHECK_THAT(columns, Catch::Contains("xchacha20poly1305-ietf"));
  for (const std::string secret : {"alice1@example.com", "DE44500105175407324931", "bob1@example.org"}) {
    CHECK_THAT(columns, !Catch::Contains(secret));
    CHECK_THAT(database_bytes(db), !Catch::Contains(secret));  // nor any page of the file or its WAL
  }

  auto store = llmdlq::sqlite_store::open(db, {.read_only = true});
  REQUIRE(store);
  const auto found = store->find(e.dlq_id);
  REQUIRE(found);
  REQUIRE(*found);
  check_all_open(**found, *setup.cipher, 1, "k1");
}

TEST_CASE("llmdlq rekey moves every sealed text of a SQLite DLQ to the new key", "[crypto]") {
  sealing_setup setup;
  const fs::path db = setup.scratch.path() / "dlq.db";
  const std::string keys = setup.keys.string();
  constexpr int letters = 30;
  {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store);
    // One letter sealed with a key shredded since: it is reported and left.
    REQUIRE(llmdlq::file_key_provider::generate(setup.keys, "k0"));
    REQUIRE(store->publish(letter(0, setup.options())));
    REQUIRE(llmdlq::file_key_provider::make_current(setup.keys, "k1"));
    REQUIRE(llmdlq::file_key_provider::shred(setup.keys, "k0"));
    for (int i = 1; i <= letters; ++i) REQUIRE(store->publish(letter(i, setup.options())));
  }
  REQUIRE(llmdlq::file_key_provider::generate(setup.keys, "k2"));

  const auto dry = llmdlq::test::run_llmdlq("rekey 'sqlite:" + db.string() + "' --keys '" + keys + "' --to k2 --dry-run");
  CHECK(dry.exit_code == 0);
  CHECK(dry.out == "would re-seal 60 sealed texts in 30 records to key k2; left 2 (key shredded: 2, other: 0)\n");

  const auto run = llmdlq::test::run_llmdlq("rekey 'sqlite:" + db.string() + "' --keys '" + keys +
                                            "' --to k2 --batch 7");
  CHECK(run.exit_code == 0);
  CHECK(run.out == "re-sealed 60 sealed texts in 30 records to key k2; left 2 (key shredded: 2, other: 0)\n");
  CHECK_THAT(run.err, Catch::Contains("sealed with key k0: key shredded"));

  // The old key can go: every record still opens.
  REQUIRE(llmdlq::file_key_provider::shred(setup.keys, "k1"));
  auto store = llmdlq::sqlite_store::open(db, {.read_only = true});
  REQUIRE(store);
  for (int i = 1; i <= letters; ++i) {
    const auto e = store->find(letter(i, setup.options()).dlq_id);
    REQUIRE(e);
    REQUIRE(*e);
    check_all_open(**e, *setup.cipher, i, "k2");
  }
  const auto again = llmdlq::test::run_llmdlq("rekey 'sqlite:" + db.string() + "' --keys '" + keys + "' --to k2");
  CHECK(again.out == "re-sealed 0 sealed texts in 0 records to key k2; left 2 (key shredded: 2, other: 0)\n");

  const auto unknown = llmdlq::test::run_llmdlq("rekey 'sqlite:" + db.string() + "' --keys '" + keys + "' --to k9");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("sealed with key k9: key unknown"));
}

TEST_CASE("llmdlq rekey of a JSON Lines DLQ: killed at any moment, it leaves the old file or the new one", "[crypto]") {
  sealing_setup setup;
  const fs::path file = setup.scratch.path() / "dlq.jsonl";
  const std::string keys = setup.keys.string();
  constexpr int letters = 400;
  {
    auto sink = llmdlq::jsonl_file_sink::open(file);
    REQUIRE(sink);
    std::vector<llmdlq::envelope> batch;
    for (int i = 1; i <= letters; ++i) batch.push_back(letter(i, setup.options()));
    REQUIRE(sink->publish_batch(batch));

    const auto locked = llmdlq::test::run_llmdlq("rekey 'jsonl:" + file.string() + "' --keys '" + keys + "' --to k1");
    CHECK(locked.exit_code == 3);  // the sink holds the file
    CHECK_THAT(locked.err, Catch::Contains("locked by a writer"));
  }
  REQUIRE(llmdlq::file_key_provider::generate(setup.keys, "k2"));
  const std::string old_content = llmdlq::test::slurp(file);
  const std::string arguments_text = "jsonl:" + file.string();
  const std::string tool = LLMDLQ_TOOL;
  std::vector<std::string> arguments = {tool, "rekey", arguments_text, "--keys", keys, "--to", "k2"};
  const auto run_killed_after = [&](std::chrono::microseconds delay) {
    std::vector<char*> argv;
    for (auto& a : arguments) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, tool.c_str(), &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    std::this_thread::sleep_for(delay);
    ::kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return WIFSIGNALED(status);
  };
  // How long a whole run takes, then kills spread over it.
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(llmdlq::test::run_llmdlq("rekey '" + arguments_text + "' --keys '" + keys + "' --to k2").exit_code == 0);
  const auto whole = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
  const std::string new_content = llmdlq::test::slurp(file);
  REQUIRE(new_content != old_content);
  int killed = 0;
  for (int step = 0; step <= 20; ++step) {
    { std::ofstream(file, std::ios::binary | std::ios::trunc) << old_content; }
    killed += run_killed_after(whole * step / 20) ? 1 : 0;
    const std::string content = llmdlq::test::slurp(file);
    INFO("killed after " << (whole * step / 20).count() << " us");
    if (content == old_content) continue;
    // Else the new file, whole: every letter re-sealed with k2, none lost.
    std::size_t lines = 0;
    std::string_view rest = content;
    while (!rest.empty()) {
      const auto end = rest.find('\n');
      REQUIRE(end != std::string_view::npos);
      const auto e = llmdlq::parse_envelope(rest.substr(0, end));
      REQUIRE(e);
      CHECK(e->raw_response.sealed->key_id == "k2");
      CHECK(e->original_input->sealed->key_id == "k2");
      ++lines;
      rest.remove_prefix(end + 1);
    }
    CHECK(lines == letters);
  }
  CHECK(killed > 0);

  // Rerun to the end; after the old key is shredded, every letter still opens.
  const auto run = llmdlq::test::run_llmdlq("rekey 'jsonl:" + file.string() + "' --keys '" + keys + "' --to k2");
  CHECK(run.exit_code == 0);
  REQUIRE(llmdlq::file_key_provider::shred(setup.keys, "k1"));
  const std::string all = llmdlq::test::slurp(file);
  std::string_view rest = all;
  for (int i = 1; i <= letters; ++i) {
    const auto end = rest.find('\n');
    const auto e = llmdlq::parse_envelope(rest.substr(0, end));
    REQUIRE(e);
    check_all_open(*e, *setup.cipher, i, "k2");
    rest.remove_prefix(end + 1);
  }
}

}  // namespace rekey_test
