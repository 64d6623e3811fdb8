// SPDX-License-Identifier: MIT
// Who may own a file of dead letters: the effective user or root, with every
// directory above it that user's or root's and not writable by others unless
// sticky (a SQLite database's own directory not even then). A file another
// user owns (or could replace) is refused as unsafe, whatever its mode: its
// owner could add or change records at will.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"
#include "support/file_mode.hpp"
#include "support/other_user.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

namespace file_owner_test {

namespace {

using llmdlq::sink_errc;
using llmdlq::test::give_to;
using llmdlq::test::mode_of;
using llmdlq::test::named;
using llmdlq::test::owner_of;
using llmdlq::test::slurp;
using llmdlq::test::temp_dir;

llmdlq::envelope sample(std::string key) {
  llmdlq::request_context context;
  context.idempotency_key = std::move(key);
  return llmdlq::test::check_envelope(llmdlq::make_envelope(
      {.category = llmdlq::failure_category::syntax, .message = "test failure"}, "raw text", context, {}));
}

// A directory its owner alone may write (0755), whatever the umask.
std::filesystem::path make_directory(const std::filesystem::path& path) {
  std::filesystem::create_directory(path);
  REQUIRE(::chmod(path.c_str(), 0755) == 0);
  return path;
}

// A private file (0600) holding `text`.
void write_private(const std::filesystem::path& path, std::string_view text = {}) {
  std::ofstream(path, std::ios::binary) << text;
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
}

// Opens `path` as each kind of DLQ file; the errors, or nothing for those that opened.
struct opened_kinds {
  std::optional<llmdlq::sink_error> sqlite, jsonl;
};
opened_kinds open_each(const std::filesystem::path& dir) {
  opened_kinds result;
  if (auto s = llmdlq::sqlite_store::open(dir / "dlq.db"); !s) result.sqlite = s.error();
  if (auto s = llmdlq::jsonl_file_sink::open(dir / "dlq.jsonl"); !s) result.jsonl = s.error();
  return result;
}

// A JSON Lines DLQ in `dir` that one letter was published to.
std::filesystem::path jsonl_holding_one_letter(const temp_dir& dir) {
  const auto path = dir.path() / "dlq.jsonl";
  auto sink = llmdlq::jsonl_file_sink::open(path);
  REQUIRE(sink.has_value());
  REQUIRE(sink->publish(sample("stored")).has_value());
  return path;
}

}  // namespace

TEST_CASE("sqlite_store refuses a 0600 database another user owns, and a -wal or -shm they own", "[sqlite][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  {
    auto store = llmdlq::sqlite_store::open(path);
    REQUIRE(store.has_value());
    REQUIRE(store->publish(sample("stored")).has_value());
  }
  const std::string beside = GENERATE(std::string(), std::string("-wal"), std::string("-shm"));
  CAPTURE(beside);
  const std::filesystem::path file = path.string() + beside;
  if (!beside.empty()) write_private(file);
  give_to(nobody, file);
  const std::string before = slurp(path);

  auto store = llmdlq::sqlite_store::open(path);
  REQUIRE_FALSE(store.has_value());
  CHECK(store.error().code == sink_errc::unsafe_file);
  INFO(store.error().message);
  CHECK(store.error().message.find(file.string() + " belongs to " + named(nobody) + ", mode 0600") !=
        std::string::npos);
  CHECK(slurp(path) == before);
  CHECK(owner_of(file) == static_cast<long>(nobody.uid));
  CHECK(mode_of(file) == 0600);
}

TEST_CASE("sqlite_replay_state refuses a 0600 database another user owns", "[sqlite][replay_state][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  temp_dir dir;
  const auto path = dir.path() / "replay.db";
  REQUIRE(llmdlq::sqlite_replay_state::open(path).has_value());
  give_to(nobody, path);
  const std::string before = slurp(path);

  auto state = llmdlq::sqlite_replay_state::open(path);
  REQUIRE_FALSE(state.has_value());
  CHECK(state.error().code == llmdlq::replay_state_errc::store_unavailable);
  INFO(state.error().message);
  CHECK(state.error().message.find(path.string() + " belongs to " + named(nobody)) != std::string::npos);
  CHECK(slurp(path) == before);
}

TEST_CASE("jsonl_file_sink and its purge refuse a 0600 file another user owns", "[jsonl][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  temp_dir dir;
  const auto path = jsonl_holding_one_letter(dir);
  give_to(nobody, path);
  const std::string before = slurp(path);

  auto sink = llmdlq::jsonl_file_sink::open(path);
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == sink_errc::unsafe_file);
  INFO(sink.error().message);
  CHECK(sink.error().message.find(path.string() + " belongs to " + named(nobody) + ", mode 0600") != std::string::npos);

  auto purged = llmdlq::purge_jsonl_file(path, {.now = llmdlq::system_now(), .operator_name = "ops"});
  REQUIRE_FALSE(purged.has_value());
  CHECK(purged.error().code == sink_errc::unsafe_file);
  CHECK(slurp(path) == before);
  CHECK_FALSE(std::filesystem::exists(llmdlq::jsonl_purge_audit_path(path)));
}

TEST_CASE("a JSONL purge refuses a 0600 audit file another user owns, deleting nothing", "[jsonl][purge][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  temp_dir dir;
  const auto path = jsonl_holding_one_letter(dir);
  const std::string before = slurp(path);
  // nobody, owning the audit, could rewrite who purged what.
  const auto audit = llmdlq::jsonl_purge_audit_path(path);
  dir.write(audit.filename().string(), "");
  ::chmod(audit.c_str(), 0600);
  give_to(nobody, audit);

  auto purged = llmdlq::purge_jsonl_file(path, {.now = llmdlq::system_now(), .operator_name = "ops"});
  REQUIRE_FALSE(purged.has_value());
  CHECK(purged.error().code == sink_errc::unsafe_file);
  INFO(purged.error().message);
  CHECK(purged.error().message.find(audit.string() + " belongs to " + named(nobody) + ", mode 0600") !=
        std::string::npos);
  CHECK(slurp(path) == before);
  CHECK(slurp(audit).empty());
}

TEST_CASE("a sqlite or jsonl DLQ file below a directory another user owns is refused, whoever owns the file",
          "[sqlite][jsonl][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  temp_dir dir;
  const auto theirs = dir.path() / "theirs";
  make_directory(theirs);
  // Root's files, in root's folder, below nobody's: nobody can rename the folder away and put another in its place.
  const auto mine = make_directory(theirs / "mine");
  REQUIRE(llmdlq::sqlite_store::open(mine / "dlq.db").has_value());
  REQUIRE(llmdlq::jsonl_file_sink::open(mine / "dlq.jsonl").has_value());
  give_to(nobody, theirs);

  const auto refused = open_each(mine);
  REQUIRE(refused.sqlite.has_value());
  REQUIRE(refused.jsonl.has_value());
  for (const auto& error : {*refused.sqlite, *refused.jsonl}) {
    INFO(error.message);
    CHECK(error.code == sink_errc::unsafe_file);
    CHECK(error.message.find("is in " + theirs.string() + ", which belongs to " + named(nobody)) != std::string::npos);
  }
  // A new file is not created there either.
  auto created = llmdlq::jsonl_file_sink::open(mine / "new.jsonl");
  REQUIRE_FALSE(created.has_value());
  CHECK(created.error().code == sink_errc::unsafe_file);
  CHECK_FALSE(std::filesystem::exists(mine / "new.jsonl"));

  give_to({0, 0, "root"}, theirs);
  const auto opened = open_each(mine);
  CHECK_FALSE(opened.sqlite.has_value());
  CHECK_FALSE(opened.jsonl.has_value());
}

TEST_CASE("a DLQ file in a directory others may write is refused: a jsonl one unless the directory is sticky, a "
          "sqlite one even then",
          "[sqlite][jsonl][owner]") {
  temp_dir dir;  // in the system's temporary folder, which is sticky: its files stay their owners'
  const auto shared = dir.path() / "shared";
  std::filesystem::create_directory(shared);
  const mode_t mode = GENERATE(mode_t{0777}, mode_t{0775}, mode_t{0757});
  CAPTURE(mode);
  REQUIRE(::chmod(shared.c_str(), mode) == 0);

  const auto refused = open_each(shared);
  REQUIRE(refused.sqlite.has_value());
  REQUIRE(refused.jsonl.has_value());
  for (const auto& error : {*refused.sqlite, *refused.jsonl}) {
    INFO(error.message);
    CHECK(error.code == sink_errc::unsafe_file);
    CHECK(error.message.find(fmt::format("is in {}, which has mode {:04o}", shared.string(), mode)) !=
          std::string::npos);
  }
  CHECK(std::filesystem::is_empty(shared));

  // With the sticky bit only a file's owner may rename or remove it: a
  // JSON Lines file is safe there. SQLite opens the -wal, -shm and journal
  // files by name beside the database, and whoever may write the directory
  // could create them first: a SQLite store, its read-only view and a replay
  // state are refused still.
  REQUIRE(::chmod(shared.c_str(), mode | S_ISVTX) == 0);
  const auto opened = open_each(shared);
  CHECK_FALSE(opened.jsonl.has_value());
  REQUIRE(opened.sqlite.has_value());
  const auto sticky_refusal = fmt::format("is in {}, which has mode {:04o}", shared.string(), mode | S_ISVTX);
  CHECK(opened.sqlite->code == sink_errc::unsafe_file);
  INFO(opened.sqlite->message);
  CHECK(opened.sqlite->message.find(sticky_refusal) != std::string::npos);
  CHECK(opened.sqlite->message.find("the sticky bit does not stop that") != std::string::npos);
  auto view = llmdlq::sqlite_store::open(shared / "dlq.db", {.read_only = true});
  REQUIRE_FALSE(view.has_value());
  CHECK(view.error().code == sink_errc::unsafe_file);
  auto state = llmdlq::sqlite_replay_state::open(shared / "replay.db");
  REQUIRE_FALSE(state.has_value());
  CHECK(state.error().message.find(sticky_refusal) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(shared / "dlq.db"));
  CHECK_FALSE(std::filesystem::exists(shared / "replay.db"));
}

TEST_CASE("a jsonl DLQ path through a symbolic link is judged as written and where the link leads", "[jsonl][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  temp_dir dir;
  const auto theirs = dir.path() / "theirs";
  const auto mine = dir.path() / "mine";
  make_directory(theirs);
  make_directory(mine);

  SECTION("a link to root's directory in a directory another user owns, who could point it elsewhere") {
    std::filesystem::create_directory_symlink(mine, theirs / "link");
    give_to(nobody, theirs);
    auto sink = llmdlq::jsonl_file_sink::open(theirs / "link" / "dlq.jsonl");
    REQUIRE_FALSE(sink.has_value());
    CHECK(sink.error().code == sink_errc::unsafe_file);
    CHECK(sink.error().message.find("is in " + theirs.string() + ", which belongs to") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(mine / "dlq.jsonl"));
  }
  SECTION("a link in root's directory, to a directory below one another user owns") {
    make_directory(theirs / "inner");
    std::filesystem::create_directory_symlink(theirs / "inner", mine / "link");
    give_to(nobody, theirs);
    auto sink = llmdlq::jsonl_file_sink::open(mine / "link" / "dlq.jsonl");
    REQUIRE_FALSE(sink.has_value());
    CHECK(sink.error().code == sink_errc::unsafe_file);
    CHECK(sink.error().message.find("is in " + theirs.string() + ", which belongs to") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(theirs / "inner" / "dlq.jsonl"));
  }
}

}  // namespace file_owner_test
