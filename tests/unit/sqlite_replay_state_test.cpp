// SPDX-License-Identifier: MIT
// sqlite_replay_state: leases, cursors, attempt counts and the replay ledger
// hold between connections, between processes racing on one file, and
// across a process killed with SIGKILL.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "support/children.hpp"
#include "support/temp_dir.hpp"

namespace sqlite_replay_state_test {

namespace {

using llmdlq::replay_state_errc;
using llmdlq::sqlite_replay_state;
using namespace std::chrono_literals;

// A clock a test moves by hand, shared by every instance given to it.
struct manual_clock {
  llmdlq::timestamp now = llmdlq::parse_rfc3339("2026-12-01T10:00:00.000Z").value();
  llmdlq::clock_function function() {
    return [this] { return now; };
  }
};

sqlite_replay_state open_state(const std::filesystem::path& file, llmdlq::clock_function clock = llmdlq::system_now) {
  auto state = sqlite_replay_state::open(file, {.clock = std::move(clock)});
  REQUIRE(state.has_value());
  return std::move(*state);
}

// The POSIX locks /proc/locks shows this process holding on `file`.
std::size_t locks_held_on(const std::filesystem::path& file) {
  struct stat info {};
  REQUIRE(::stat(file.c_str(), &info) == 0);
  const std::string pid = std::to_string(::getpid());
  const std::string inode = ":" + std::to_string(info.st_ino);
  std::ifstream locks("/proc/locks");
  REQUIRE(locks);
  std::size_t held = 0;
  // "1: POSIX  ADVISORY  READ 1234 fe:01:56789 1073741826 1073742335"
  for (std::string line; std::getline(locks, line);) {
    std::istringstream fields(line);
    std::string number, kind, mode, access, owner, device;
    fields >> number >> kind >> mode >> access >> owner >> device;
    if (kind == "POSIX" && owner == pid && device.ends_with(inode)) ++held;
  }
  return held;
}

}  // namespace

TEST_CASE("sqlite_replay_state: a lease is exclusive between connections, renewed by its holder, released",
          "[sqlite][replay_state]") {
  llmdlq::test::temp_dir dir;
  manual_clock clock;
  auto alice = open_state(dir.path() / "replay.db", clock.function());
  auto bob = open_state(dir.path() / "replay.db", clock.function());

  REQUIRE(alice.acquire_lease("receipts", "alice", 60s).has_value());
  auto held = bob.acquire_lease("receipts", "bob", 60s);
  REQUIRE_FALSE(held.has_value());
  CHECK(held.error().code == replay_state_errc::lease_held);
  CHECK(held.error().holder == "alice");
  CHECK(held.error().expires_at == clock.now + 60s);
  // Another name is another lease.
  CHECK(bob.acquire_lease("invoices", "bob", 60s).has_value());

  // The holder renews it: the expiry moves.
  clock.now += 50s;
  REQUIRE(alice.acquire_lease("receipts", "alice", 60s).has_value());
  clock.now += 30s;  // past the first expiry, within the renewed one
  held = bob.acquire_lease("receipts", "bob", 60s);
  REQUIRE_FALSE(held.has_value());
  CHECK(held.error().expires_at == clock.now + 30s);

  // Only the holder releases it.
  REQUIRE(bob.release_lease("receipts", "bob").has_value());
  CHECK_FALSE(bob.acquire_lease("receipts", "bob", 60s).has_value());
  REQUIRE(alice.release_lease("receipts", "alice").has_value());
  CHECK(bob.acquire_lease("receipts", "bob", 60s).has_value());
}

TEST_CASE("sqlite_replay_state: a lease expires by the injected clock, the cursor moves only for its holder",
          "[sqlite][replay_state]") {
  llmdlq::test::temp_dir dir;
  manual_clock clock;
  auto alice = open_state(dir.path() / "replay.db", clock.function());
  auto bob = open_state(dir.path() / "replay.db", clock.function());

  CHECK(alice.load_cursor("receipts").value() == std::nullopt);
  REQUIRE(alice.acquire_lease("receipts", "alice", 30s).has_value());
  REQUIRE(alice.store_cursor("receipts", "alice", "receipts", "dlq-0001").has_value());
  CHECK(bob.load_cursor("receipts").value() == "dlq-0001");
  auto refused = bob.store_cursor("receipts", "bob", "receipts", "dlq-0009");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == replay_state_errc::lease_lost);

  clock.now += 30s;  // expired: nobody holds it, not even alice
  CHECK(alice.store_cursor("receipts", "alice", "receipts", "dlq-0002").error().code == replay_state_errc::lease_lost);
  REQUIRE(bob.acquire_lease("receipts", "bob", 30s).has_value());
  CHECK(alice.store_cursor("receipts", "alice", "receipts", "dlq-0002").error().code == replay_state_errc::lease_lost);
  CHECK(alice.acquire_lease("receipts", "alice", 30s).error().code == replay_state_errc::lease_held);
  REQUIRE(bob.store_cursor("receipts", "bob", "receipts", "dlq-0003").has_value());
  CHECK(alice.load_cursor("receipts").value() == "dlq-0003");
}

TEST_CASE("sqlite_replay_state: a lease is exclusive between processes", "[sqlite][replay_state]") {
  llmdlq::test::temp_dir dir;
  const auto file = dir.path() / "replay.db";
  auto parent = open_state(file);
  REQUIRE(parent.acquire_lease("receipts", "parent", 60s).has_value());
  const auto try_lease = [&](int) {
    auto child = sqlite_replay_state::open(file);
    if (!child) return 2;
    auto taken = child->acquire_lease("receipts", "child-" + std::to_string(::getpid()), 60s);
    if (taken) return 0;
    if (taken.error().code != replay_state_errc::lease_held) return 4;
    return taken.error().holder == "parent" ? 1 : taken.error().holder.starts_with("child-") ? 3 : 5;
  };
  CHECK(llmdlq::test::in_children(3, try_lease) == std::vector{1, 1, 1});
  REQUIRE(parent.release_lease("receipts", "parent").has_value());
  // Now racing children: exactly one takes it.
  auto codes = llmdlq::test::in_children(4, try_lease);
  std::sort(codes.begin(), codes.end());
  CHECK(codes == std::vector{0, 3, 3, 3});  // the losers see another child hold it
  CHECK(parent.acquire_lease("receipts", "parent", 60s).error().code == replay_state_errc::lease_held);
}

TEST_CASE("sqlite_replay_state: processes racing for attempts never reserve more than the maximum",
          "[sqlite][replay_state]") {
  llmdlq::test::temp_dir dir;
  const auto file = dir.path() / "replay.db";
  auto parent = open_state(file);
  constexpr std::uint32_t max = 3;
  // Each child tries five times; its exit code is how many it got.
  const auto codes = llmdlq::test::in_children(6, [&](int) {
    auto child = sqlite_replay_state::open(file);
    if (!child) return 100;
    int reserved = 0;
    for (int i = 0; i < 5; ++i) {
      auto r = child->reserve_attempt("receipt-7", max);
      if (r) {
        ++reserved;
      } else if (r.error().code != replay_state_errc::attempts_exhausted) {
        return 101;
      }
    }
    return reserved;
  });
  int total = 0;
  for (const int code : codes) {
    REQUIRE(code <= static_cast<int>(max));
    total += code;
  }
  CHECK(total == static_cast<int>(max));
  CHECK(parent.attempts("receipt-7").value() == max);
  CHECK(parent.reserve_attempt("receipt-7", max).error().code == replay_state_errc::attempts_exhausted);

  // A reservation that made no call is given back, and reserved again.
  REQUIRE(parent.release_attempt("receipt-7").has_value());
  CHECK(parent.attempts("receipt-7").value() == max - 1);
  CHECK(parent.reserve_attempt("receipt-7", max).value() == max);
  // Numbers count from 1; an unknown key has none; a maximum of 0 allows none.
  CHECK(parent.attempts("receipt-8").value() == 0);
  CHECK(parent.reserve_attempt("receipt-8", 0).error().code == replay_state_errc::attempts_exhausted);
  CHECK(parent.reserve_attempt("receipt-8", 2).value() == 1);
  CHECK(parent.reserve_attempt("receipt-8", 2).value() == 2);
  REQUIRE(parent.release_attempt("receipt-9").has_value());  // nothing to give back
  CHECK(parent.attempts("receipt-9").value() == 0);
}

TEST_CASE("sqlite_replay_state: the ledger keeps the first output and later callers get it back",
          "[sqlite][replay_state]") {
  llmdlq::test::temp_dir dir;
  const auto file = dir.path() / "replay.db";
  manual_clock clock;
  auto replayer = open_state(file, clock.function());
  auto worker = open_state(file, clock.function());

  auto first = replayer.record_output("receipt-1", "replay", "dlq-1", R"({"total": 3})");
  REQUIRE(first.has_value());
  CHECK(first->first);
  CHECK(first->written_at == clock.now);
  CHECK_FALSE(first->delivered);
  clock.now += 5s;
  auto second = worker.record_output("receipt-1", "original", "", R"({"total": 4})");
  REQUIRE(second.has_value());
  CHECK_FALSE(second->first);
  CHECK(second->source == "replay");
  CHECK(second->dlq_id == "dlq-1");
  CHECK(second->output == R"({"total": 3})");
  CHECK(second->written_at == clock.now - 5s);
  CHECK(worker.find_output("receipt-1").value()->output == R"({"total": 3})");
  CHECK(worker.find_output("receipt-2").value() == std::nullopt);

  // Racing processes: one writes, every other one gets that one's output.
  const auto codes = llmdlq::test::in_children(5, [&](int i) {
    auto child = sqlite_replay_state::open(file);
    if (!child) return 100;
    const std::string mine = "{\"child\": " + std::to_string(i) + "}";
    auto entry = child->record_output("receipt-race", "worker-" + std::to_string(i), "", mine);
    if (!entry) return 101;
    if (entry->first) return entry->output == mine ? 0 : 102;
    return entry->output != mine && entry->source.starts_with("worker-") ? 1 : 103;
  });
  CHECK(std::count(codes.begin(), codes.end(), 0) == 1);
  CHECK(std::count(codes.begin(), codes.end(), 1) == 4);
  const auto winner = replayer.find_output("receipt-race").value();
  REQUIRE(winner.has_value());
  CHECK(winner->output == "{\"child\": " + winner->source.substr(7) + "}");
}

TEST_CASE("sqlite_replay_state: undelivered outputs are listed oldest first until marked delivered",
          "[sqlite][replay_state]") {
  llmdlq::test::temp_dir dir;
  manual_clock clock;
  auto state = open_state(dir.path() / "replay.db", clock.function());
  for (const auto* key : {"c", "a", "b"}) {  // written in this order
    REQUIRE(state.record_output(key, "replay", std::string("dlq-") + key, "{}").has_value());
    clock.now += 1s;
  }
  // A worker's own write is the worker's to deliver: a replay never lists it.
  REQUIRE(state.record_output("w", "worker", "", "{}").has_value());
  auto pending = state.undelivered("replay", 10).value();
  REQUIRE(pending.size() == 3);
  CHECK(state.undelivered("worker", 10).value().size() == 1);
  CHECK(pending[0].idempotency_key == "c");
  CHECK(pending[1].idempotency_key == "a");
  CHECK(pending[2].idempotency_key == "b");
  CHECK(pending[2].dlq_id == "dlq-b");
  CHECK(state.undelivered("replay", 2).value().size() == 2);

  REQUIRE(state.mark_delivered("a").has_value());
  CHECK(state.find_output("a").value()->delivered);
  pending = state.undelivered("replay", 10).value();
  REQUIRE(pending.size() == 2);
  CHECK(pending[0].idempotency_key == "c");
  CHECK(pending[1].idempotency_key == "b");
  // A delivered entry still answers record_output as the first one.
  auto again = state.record_output("a", "replay", "dlq-a", R"({"other": 1})");
  REQUIRE(again.has_value());
  CHECK_FALSE(again->first);
  CHECK(again->delivered);
}

TEST_CASE("sqlite_replay_state: what a process did before SIGKILL is there when the file is reopened",
          "[sqlite][replay_state]") {
  llmdlq::test::temp_dir dir;
  const auto file = dir.path() / "replay.db";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto state = sqlite_replay_state::open(file);
    const bool done = state && state->acquire_lease("receipts", "doomed", 60s) &&
                      state->store_cursor("receipts", "doomed", "receipts", "dlq-0042") &&
                      state->reserve_attempt("receipt-42", 2) &&
                      state->record_output("receipt-42", "replay", "dlq-0042", R"({"total": 42})");
    if (!done) ::_exit(1);
    ::raise(SIGKILL);
    ::_exit(2);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);

  auto state = open_state(file);
  CHECK(state.attempts("receipt-42").value() == 1);
  const auto entry = state.find_output("receipt-42").value();
  REQUIRE(entry.has_value());
  CHECK(entry->output == R"({"total": 42})");
  CHECK(entry->dlq_id == "dlq-0042");
  CHECK_FALSE(entry->delivered);
  CHECK(state.undelivered("replay", 10).value().size() == 1);
  CHECK(state.load_cursor("receipts").value() == "dlq-0042");
  CHECK(state.acquire_lease("receipts", "next", 60s).error().holder == "doomed");
}

TEST_CASE("sqlite_replay_state: a private file, shareable with the dead-letter store", "[sqlite][replay_state]") {
  llmdlq::test::temp_dir dir;
  const auto file = dir.path() / "dlq.db";
  auto store = llmdlq::sqlite_store::open(file);
  REQUIRE(store.has_value());
  auto state = sqlite_replay_state::open(file, {.table_prefix = "replays"});
  REQUIRE(state.has_value());
  REQUIRE(state->reserve_attempt("k", 2).has_value());
  CHECK(store->statistics()->total == 0);

  const auto own = dir.path() / "replay.db";
  REQUIRE(sqlite_replay_state::open(own).has_value());
  struct stat info {};
  REQUIRE(::stat(own.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
  REQUIRE(::chmod(own.c_str(), 0660) == 0);
  auto exposed = sqlite_replay_state::open(own);
  REQUIRE_FALSE(exposed.has_value());
  CHECK(exposed.error().code == replay_state_errc::store_unavailable);
  CHECK(exposed.error().message.find(own.string() + " has mode 0660") != std::string::npos);
  REQUIRE(::chmod(own.c_str(), 0600) == 0);

  for (const char* bad : {"", "1replays", "replay-state", "a;DROP"}) {
    auto refused = sqlite_replay_state::open(own, {.table_prefix = bad});
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == replay_state_errc::store_unavailable);
  }
  auto unopenable = sqlite_replay_state::open(dir.path() / "missing" / "replay.db");
  REQUIRE_FALSE(unopenable.has_value());
  CHECK(unopenable.error().code == replay_state_errc::store_unavailable);
  CHECK(unopenable.error().message.starts_with("sqlite: "));
}

// Closing any descriptor of a file drops every POSIX lock the process holds
// on it: opening the state beside a store must leave the store's locks in
// place, or another process's last connection deletes the WAL under it.
TEST_CASE("sqlite_replay_state: opened beside a store on one file, the process keeps its locks on the file",
          "[sqlite][replay_state]") {
  llmdlq::test::temp_dir dir;
  const auto file = dir.path() / "dlq.db";
  auto store = llmdlq::sqlite_store::open(file);
  REQUIRE(store.has_value());
  REQUIRE(store->statistics().has_value());  // a WAL connection holds its shared lock from its first read on
  REQUIRE(locks_held_on(file) > 0);

  auto state = sqlite_replay_state::open(file);
  REQUIRE(state.has_value());
  CHECK(locks_held_on(file) > 0);
  REQUIRE(state->reserve_attempt("k", 2).has_value());
  CHECK(locks_held_on(file) > 0);
  auto again = llmdlq::sqlite_store::open(file);
  REQUIRE(again.has_value());
  CHECK(locks_held_on(file) > 0);
}

}  // namespace sqlite_replay_state_test
