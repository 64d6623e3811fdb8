// SPDX-License-Identifier: MIT
// A SQLite DLQ in a directory that group or others may write, sticky or not,
// is refused by every command that opens it, writers and read-only views
// alike: SQLite opens the database's -wal, -shm and journal files by name in
// that directory, after any check, and reads a WAL it finds there as the
// database's newest pages. Issue 42's reproduction, run by root with nobody
// as the attacker planting a WAL of their own.
#include <grp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <new>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <llmdlq/envelope.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/eventually.hpp"
#include "support/other_user.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

namespace sqlite_directory_command_test {

using llmdlq::test::other_user;
using llmdlq::test::run_llmdlq;
using llmdlq::test::slurp;
using llmdlq::test::temp_dir;

namespace {

constexpr std::string_view schema_json = R"({"type": "object", "required": ["total"]})";
constexpr int runs = 300;

// A response that fails (not JSON), under its own idempotency key.
std::string failing_line(int n) {
  return fmt::format(R"({{"id": {0}, "idempotency_key": "victim-{0}", "response": "not json {0}"}})", n) + "\n";
}

llmdlq::envelope attacker_letter() {
  llmdlq::request_context context;
  context.idempotency_key = "planted-by-nobody";
  return llmdlq::make_envelope({.category = llmdlq::failure_category::syntax, .message = "planted"}, "planted",
                               context, {});
}

// A directory of `mode` (whatever the umask), owned by root.
std::filesystem::path make_directory(const std::filesystem::path& path, mode_t mode) {
  std::filesystem::create_directory(path);
  REQUIRE(::chmod(path.c_str(), mode) == 0);
  return path;
}

// nobody's DLQ of one letter, made in their own 0700 directory `theirs`,
// and its WAL kept as theirs/evil.wal while the store was open: nothing was
// checkpointed yet, so the WAL holds every page of the database, its tables
// and the letter (the issue's `PRAGMA wal_autocheckpoint=0` did the same).
std::filesystem::path attacker_wal(const other_user& nobody, const std::filesystem::path& theirs) {
  const auto evil = theirs / "evil.wal";
  REQUIRE(llmdlq::test::run_as(nobody, [&] {
    auto store = llmdlq::sqlite_store::open(theirs / "evil.db");
    if (!store || !store->publish(attacker_letter()).has_value()) return false;
    std::error_code error;
    return std::filesystem::copy_file(theirs / "evil.db-wal", evil, error) && !error;
  }));
  return evil;
}

// nobody, in a child process, linking `wal` to each of `targets` and
// unlinking it again, over and over until stopped: the issue's
// link(evil.wal, D/v.db-wal)/unlink loop.
class planting_attacker {
 public:
  planting_attacker(const other_user& user, const std::filesystem::path& wal,
                    const std::vector<std::filesystem::path>& targets) {
    void* memory = ::mmap(nullptr, sizeof(counters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(memory != MAP_FAILED);
    shared_ = new (memory) counters{};
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) ::_exit(2);
      while (!shared_->stop.load()) {
        for (const auto& target : targets) {
          if (::link(wal.c_str(), target.c_str()) != 0) continue;
          shared_->planted.fetch_add(1);
          ::usleep(100);
          ::unlink(target.c_str());
        }
        ::usleep(100);
      }
      ::_exit(0);
    }
  }
  planting_attacker(const planting_attacker&) = delete;
  planting_attacker& operator=(const planting_attacker&) = delete;
  ~planting_attacker() {
    stop();
    ::munmap(shared_, sizeof(counters));
  }

  // How often a WAL was in place so far.
  long planted() const { return shared_->planted.load(); }

  // Stops the child and waits for it; how often it planted the WAL.
  long stop() {
    if (pid_ > 0) {
      shared_->stop.store(true);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    return planted();
  }

 private:
  struct counters {
    std::atomic<bool> stop{false};
    std::atomic<long> planted{0};
  };
  counters* shared_ = nullptr;
  pid_t pid_ = -1;
};

// Waits until the attacker planted a WAL at least once.
void wait_until_active(const planting_attacker& attacker) {
  REQUIRE(llmdlq::test::eventually([&] { return attacker.planted() > 0; }, std::chrono::seconds(20)));
}

// What each race starts from, run by root: a schema, and nobody's WAL of
// nobody's own letter, made in nobody's directory.
struct race_setup {
  race_setup() {
    llmdlq::test::give_to(nobody, theirs);
    evil = attacker_wal(nobody, theirs);
  }
  other_user nobody = llmdlq::test::nobody();
  temp_dir dir;
  std::string schema = dir.write("schema.json", schema_json);
  std::filesystem::path theirs = make_directory(dir.path() / "theirs", 0700);
  std::filesystem::path evil;
};

// The directory's refusal as a SQLite open words it.
std::string refusal(const std::filesystem::path& db, const std::filesystem::path& directory, mode_t mode) {
  return fmt::format("{} is in {}, which has mode {:04o}", db.string(), directory.string(), mode);
}

}  // namespace

TEST_CASE("process as root refuses a sqlite DLQ in a sticky directory where nobody plants a WAL, every run",
          "[tools][process][sqlite][owner][race]") {
  LLMDLQ_REQUIRE_ROOT();
  const race_setup race;
  const auto& [nobody, dir, schema, theirs, evil] = race;

  // The planted WAL is a working attack: beside root's DLQ of three letters
  // it makes the DLQ read as nobody's one letter.
  {
    const auto probe = make_directory(dir.path() / "probe", 0700);
    std::vector<std::string> ids;
    {
      auto store = llmdlq::sqlite_store::open(probe / "v.db");
      REQUIRE(store.has_value());
      for (int i = 0; i < 3; ++i) {
        llmdlq::request_context context;
        context.idempotency_key = "root-" + std::to_string(i);
        const auto stored = store->publish(
            llmdlq::make_envelope({.category = llmdlq::failure_category::syntax, .message = "root's"}, "x", context, {}));
        REQUIRE(stored.has_value());
        ids.push_back(stored->dlq_id);
      }
    }
    std::filesystem::copy_file(evil, probe / "v.db-wal");
    auto opened = llmdlq::sqlite_store::open(probe / "v.db", {.read_only = true});
    REQUIRE(opened.has_value());
    CHECK(opened->statistics()->total == 1);
    CHECK(opened->find(attacker_letter().dlq_id)->has_value());
    CHECK_FALSE(opened->find(ids[0])->has_value());
  }

  // D, like /tmp: root's, world-writable and sticky.
  const auto shared = make_directory(dir.path() / "D", 01777);
  const auto db = shared / "v.db";
  planting_attacker attacker(nobody, evil, {shared / "v.db-wal"});
  wait_until_active(attacker);

  int refused = 0;
  std::string first_other;
  for (int i = 0; i < runs; ++i) {
    const auto run = run_llmdlq("process --schema " + schema + " --sink sqlite:" + db.string(), failing_line(i));
    const bool as_expected = run.exit_code == 3 && run.out.empty() &&
                             run.err.find("cannot open the DLQ: sqlite: " + refusal(db, shared, 01777)) !=
                                 std::string::npos &&
                             !std::filesystem::exists(db);
    if (as_expected) {
      ++refused;
    } else if (first_other.empty()) {
      first_other = fmt::format("run {}: exit {}, stdout {}, stderr {}", i, run.exit_code, run.out, run.err);
    }
    if (i == 0) {
      INFO(run.err);
      // Why, and what to do.
      CHECK(run.err.find("SQLite opens the database's -wal, -shm and -journal files by name") != std::string::npos);
      CHECK(run.err.find("the sticky bit") != std::string::npos);
      CHECK(run.err.find("mkdir -m 700") != std::string::npos);
    }
  }
  const long planted = attacker.stop();
  INFO(first_other);
  CHECK(planted > 0);
  CHECK(refused == runs);
  // Nothing was created there: no database, no WAL index, no journal.
  CHECK(std::filesystem::is_empty(shared));
}

TEST_CASE("a sqlite DLQ in a private directory below the sticky one keeps every letter it acknowledged while "
          "nobody plants WALs beside it",
          "[tools][process][sqlite][owner][race]") {
  LLMDLQ_REQUIRE_ROOT();
  const race_setup race;
  const auto& [nobody, dir, schema, theirs, evil] = race;
  const auto shared = make_directory(dir.path() / "D", 01777);
  // The layout docs/security.md asks for: a 0700 directory of the worker's user.
  const auto mine = make_directory(shared / "private", 0700);
  const auto db = mine / "v.db";
  planting_attacker attacker(nobody, evil, {shared / "v.db-wal", mine / "v.db-wal"});
  wait_until_active(attacker);

  std::set<std::string> acknowledged;
  std::string first_other;
  for (int i = 0; i < runs; ++i) {
    const auto run = run_llmdlq("process --schema " + schema + " --sink sqlite:" + db.string(), failing_line(i));
    boost::system::error_code error;
    const auto verdict = boost::json::parse(run.out, error);
    if (run.exit_code == 0 && !error && verdict.is_object() && verdict.as_object().if_contains("stored") &&
        verdict.at("stored") == true) {
      acknowledged.insert(std::string(verdict.at("dlq_id").as_string()));
    } else if (first_other.empty()) {
      first_other = fmt::format("run {}: exit {}, stdout {}, stderr {}", i, run.exit_code, run.out, run.err);
    }
  }
  CHECK(attacker.stop() > 0);
  INFO(first_other);
  CHECK(acknowledged.size() == static_cast<std::size_t>(runs));

  auto store = llmdlq::sqlite_store::open(db, {.read_only = true});
  REQUIRE(store.has_value());
  CHECK(store->statistics()->total == static_cast<std::uint64_t>(runs));
  std::size_t kept = 0;
  for (const auto& id : acknowledged) kept += store->find(id)->has_value() ? 1 : 0;
  CHECK(kept == acknowledged.size());
  CHECK_FALSE(store->find(attacker_letter().dlq_id)->has_value());
}

TEST_CASE("read-only views refuse a sqlite DLQ in a directory group or others may write, sticky or not",
          "[tools][sqlite][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto theirs = make_directory(dir.path() / "theirs", 0700);
  llmdlq::test::give_to(nobody, theirs);
  const auto evil = attacker_wal(nobody, theirs);

  const mode_t mode = GENERATE(mode_t{01777}, mode_t{0770}, mode_t{0757});
  CAPTURE(mode);
  const auto shared = make_directory(dir.path() / "D", 0755);
  const auto db = shared / "v.db";
  std::string id;
  {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    const auto stored = store->publish(attacker_letter());  // any letter: root's own, here
    REQUIRE(stored.has_value());
    id = stored->dlq_id;
  }
  REQUIRE(::chmod(shared.c_str(), mode) == 0);
  if (mode & S_IWOTH) {
    // nobody's WAL beside it would make every view show nobody's letters instead.
    REQUIRE(llmdlq::test::run_as(nobody, [&] { return ::link(evil.c_str(), (shared / "v.db-wal").c_str()) == 0; }));
  }
  const std::string before = slurp(db);
  const auto entries = [&] {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(shared)) names.insert(entry.path().filename());
    return names;
  };
  const auto present = entries();

  const std::string store = "sqlite:" + db.string();
  for (const std::string command :
       {"list " + store, "show " + store + " " + id, "stats " + store, "top " + store + " --once",
        "purge --dry-run " + store + " --operator ann", "replay " + store + " --schema " + schema}) {
    CAPTURE(command);
    const auto run = run_llmdlq(command);
    INFO(run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());
    CHECK(run.err.find(refusal(db, shared, mode)) != std::string::npos);
  }
  // A link from a private directory is judged where it leads: SQLite names
  // the files beside the database there.
  const auto link = dir.path() / "link.db";
  std::filesystem::create_symlink(db, link);
  const auto linked = run_llmdlq("list sqlite:" + link.string());
  INFO(linked.err);
  CHECK(linked.exit_code == 2);
  CHECK(linked.err.find(refusal(link, shared, mode)) != std::string::npos);
  CHECK(slurp(db) == before);
  CHECK(entries() == present);  // no WAL index or journal made
}

}  // namespace sqlite_directory_command_test
