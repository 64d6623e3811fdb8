// SPDX-License-Identifier: MIT
// postgres_replay_state against a real server (scripts/test starts one and
// sets LLMDLQ_TEST_POSTGRES; without it every test skips itself): leases,
// cursors, attempt counts and the ledger hold between connections, between
// processes racing, and across a process killed with SIGKILL.
#include <libpq-fe.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <llmdlq/postgres/replay_state.hpp>

#include "catch.hpp"
#include "support/skip.hpp"
#include "support/children.hpp"

namespace postgres_replay_state_test {

using namespace std::chrono_literals;
using llmdlq::postgres_replay_state;
using llmdlq::replay_state_errc;

namespace {

const char* conninfo() { return std::getenv("LLMDLQ_TEST_POSTGRES"); }

#define REQUIRE_POSTGRES()                                                                   \
  do {                                                                                     \
    if (!conninfo()) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)"); \
  } while (false)

void drop_notice(void*, const char*) {}

// Tables of this test's own (a random prefix), dropped at the end.
struct scratch_prefix {
  std::string name = [] {
    std::random_device device;
    return fmt::format("llmdlq_replay_test_{:08x}", device());
  }();

  ~scratch_prefix() {
    PGconn* conn = PQconnectdb(conninfo());
    PQsetNoticeProcessor(conn, drop_notice, nullptr);
    const std::string sql = fmt::format(R"(DROP TABLE IF EXISTS "{0}_leases", "{0}_cursors", "{0}_attempts", "{0}_ledger")", name);
    PQclear(PQexec(conn, sql.c_str()));
    PQfinish(conn);
  }
};

struct manual_clock {
  llmdlq::timestamp now = llmdlq::parse_rfc3339("2026-12-01T10:00:00.000Z").value();
  llmdlq::clock_function function() {
    return [this] { return now; };
  }
};

postgres_replay_state open_state(const scratch_prefix& prefix, llmdlq::clock_function clock = llmdlq::system_now) {
  auto state = postgres_replay_state::open(conninfo(), {.table_prefix = prefix.name, .clock = std::move(clock)});
  INFO((state ? "" : state.error().message));
  REQUIRE(state.has_value());
  return std::move(*state);
}

}  // namespace

TEST_CASE("postgres_replay_state: a lease is exclusive, renewed by its holder, released, expired by the clock",
          "[postgres][replay_state]") {
  REQUIRE_POSTGRES();
  scratch_prefix prefix;
  manual_clock clock;
  auto alice = open_state(prefix, clock.function());
  auto bob = open_state(prefix, clock.function());

  REQUIRE(alice.acquire_lease("receipts", "alice", 60s).has_value());
  auto held = bob.acquire_lease("receipts", "bob", 60s);
  REQUIRE_FALSE(held.has_value());
  CHECK(held.error().code == replay_state_errc::lease_held);
  CHECK(held.error().holder == "alice");
  CHECK(held.error().expires_at == clock.now + 60s);

  clock.now += 50s;
  REQUIRE(alice.acquire_lease("receipts", "alice", 60s).has_value());  // renewed
  clock.now += 30s;
  CHECK(bob.acquire_lease("receipts", "bob", 60s).error().expires_at == clock.now + 30s);
  REQUIRE(bob.release_lease("receipts", "bob").has_value());  // not bob's: nothing happens
  CHECK(bob.acquire_lease("receipts", "bob", 60s).error().code == replay_state_errc::lease_held);

  // The cursor moves only for the holder of an unexpired lease.
  CHECK(alice.load_cursor("receipts").value() == std::nullopt);
  REQUIRE(alice.store_cursor("receipts", "alice", "receipts", "dlq-0001").has_value());
  CHECK(bob.load_cursor("receipts").value() == "dlq-0001");
  CHECK(bob.store_cursor("receipts", "bob", "receipts", "dlq-0009").error().code == replay_state_errc::lease_lost);
  clock.now += 30s;  // alice's lease expired
  CHECK(alice.store_cursor("receipts", "alice", "receipts", "dlq-0002").error().code == replay_state_errc::lease_lost);
  REQUIRE(bob.acquire_lease("receipts", "bob", 60s).has_value());
  CHECK(alice.acquire_lease("receipts", "alice", 60s).error().holder == "bob");
  REQUIRE(bob.store_cursor("receipts", "bob", "receipts", "dlq-0003").has_value());
  CHECK(alice.load_cursor("receipts").value() == "dlq-0003");
  REQUIRE(bob.release_lease("receipts", "bob").has_value());
  CHECK(alice.acquire_lease("receipts", "alice", 60s).has_value());
}

TEST_CASE("postgres_replay_state: processes racing take one lease, at most the maximum of attempts, one output",
          "[postgres][replay_state]") {
  REQUIRE_POSTGRES();
  scratch_prefix prefix;
  auto parent = open_state(prefix);
  const std::string name = prefix.name;
  const auto child_state = [&]() { return postgres_replay_state::open(conninfo(), {.table_prefix = name}); };

  auto codes = llmdlq::test::in_children(4, [&](int i) {
    auto child = child_state();
    if (!child) return 100;
    auto taken = child->acquire_lease("receipts", "child-" + std::to_string(i), 60s);
    if (taken) return 0;
    return taken.error().code == replay_state_errc::lease_held ? 1 : 101;
  });
  std::sort(codes.begin(), codes.end());
  CHECK(codes == std::vector{0, 1, 1, 1});

  constexpr std::uint32_t max = 3;
  codes = llmdlq::test::in_children(6, [&](int) {
    auto child = child_state();
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
  REQUIRE(parent.release_attempt("receipt-7").has_value());
  CHECK(parent.attempts("receipt-7").value() == max - 1);
  CHECK(parent.reserve_attempt("receipt-7", max).value() == max);
  CHECK(parent.reserve_attempt("receipt-8", 0).error().code == replay_state_errc::attempts_exhausted);
  CHECK(parent.attempts("receipt-8").value() == 0);

  codes = llmdlq::test::in_children(5, [&](int i) {
    auto child = child_state();
    if (!child) return 100;
    const std::string mine = "{\"child\": " + std::to_string(i) + "}";
    auto entry = child->record_output("receipt-race", "worker-" + std::to_string(i), "", mine);
    if (!entry) return 101;
    if (entry->first) return entry->output == mine ? 0 : 102;
    return entry->output != mine && entry->source.starts_with("worker-") ? 1 : 103;
  });
  CHECK(std::count(codes.begin(), codes.end(), 0) == 1);
  CHECK(std::count(codes.begin(), codes.end(), 1) == 4);
  const auto winner = parent.find_output("receipt-race").value();
  REQUIRE(winner.has_value());
  CHECK(winner->output == "{\"child\": " + winner->source.substr(7) + "}");
}

TEST_CASE("postgres_replay_state: the ledger keeps the first output, undelivered ones are listed oldest first",
          "[postgres][replay_state]") {
  REQUIRE_POSTGRES();
  scratch_prefix prefix;
  manual_clock clock;
  auto replayer = open_state(prefix, clock.function());
  auto worker = open_state(prefix, clock.function());

  auto first = replayer.record_output("receipt-1", "replay", "dlq-1", R"({"total": 3})");
  REQUIRE(first.has_value());
  CHECK(first->first);
  clock.now += 5s;
  auto second = worker.record_output("receipt-1", "original", "", R"({"total": 4})");
  REQUIRE(second.has_value());
  CHECK_FALSE(second->first);
  CHECK(second->source == "replay");
  CHECK(second->dlq_id == "dlq-1");
  CHECK(second->output == R"({"total": 3})");
  CHECK(second->written_at == clock.now - 5s);
  CHECK(worker.find_output("receipt-2").value() == std::nullopt);

  for (const auto* key : {"c", "a"}) {
    REQUIRE(replayer.record_output(key, "replay", std::string("dlq-") + key, "{}").has_value());
    clock.now += 1s;
  }
  REQUIRE(worker.record_output("w", "original", "", "{}").has_value());  // the worker's own: never listed for a replay
  auto pending = worker.undelivered("replay", 10).value();
  REQUIRE(pending.size() == 3);
  CHECK(pending[0].idempotency_key == "receipt-1");
  CHECK(pending[1].idempotency_key == "c");
  CHECK(pending[2].idempotency_key == "a");
  CHECK(worker.undelivered("replay", 1).value().size() == 1);
  CHECK(worker.undelivered("original", 10).value().size() == 1);
  REQUIRE(worker.mark_delivered("c").has_value());
  CHECK(replayer.find_output("c").value()->delivered);
  pending = worker.undelivered("replay", 10).value();
  REQUIRE(pending.size() == 2);
  CHECK(pending[1].idempotency_key == "a");
}

TEST_CASE("postgres_replay_state: what a process committed before SIGKILL is there for the next one",
          "[postgres][replay_state]") {
  REQUIRE_POSTGRES();
  scratch_prefix prefix;
  const std::string name = prefix.name;
  REQUIRE(postgres_replay_state::open(conninfo(), {.table_prefix = name}).has_value());
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto state = postgres_replay_state::open(conninfo(), {.table_prefix = name});
    const bool done = state && state->reserve_attempt("receipt-42", 2) &&
                      state->record_output("receipt-42", "replay", "dlq-0042", R"({"total": 42})");
    if (!done) ::_exit(1);
    ::raise(SIGKILL);
    ::_exit(2);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  auto state = open_state(prefix);
  CHECK(state.attempts("receipt-42").value() == 1);
  const auto entry = state.find_output("receipt-42").value();
  REQUIRE(entry.has_value());
  CHECK(entry->output == R"({"total": 42})");
  CHECK_FALSE(entry->delivered);
}

TEST_CASE("postgres_replay_state: a bad prefix or an unreachable server is store_unavailable", "[postgres][replay_state]") {
  // Needs no server.
  for (const char* bad : {"", "1replay", "replay-state", "a\"b"}) {
    auto refused = postgres_replay_state::open("host=/nonexistent", {.table_prefix = bad});
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == replay_state_errc::store_unavailable);
  }
  auto unreachable = postgres_replay_state::open("host=/nonexistent connect_timeout=1");
  REQUIRE_FALSE(unreachable.has_value());
  CHECK(unreachable.error().code == replay_state_errc::store_unavailable);
  CHECK(unreachable.error().message.starts_with("postgres: "));
}

TEST_CASE("postgres_replay_state: after a server restart the state is there and calls carry on",
          "[postgres][replay_state]") {
  REQUIRE_POSTGRES();
  const char* restart = std::getenv("LLMDLQ_TEST_POSTGRES_RESTART");
  if (!restart) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES_RESTART is not set");
  scratch_prefix prefix;
  auto state = open_state(prefix);
  REQUIRE(state.acquire_lease("receipts", "alice", 600s).has_value());
  REQUIRE(state.store_cursor("receipts", "alice", "receipts", "dlq-0001").has_value());
  REQUIRE(state.reserve_attempt("receipt-1", 2).value() == 1);
  REQUIRE(std::system(restart) == 0);

  // Reads and lease calls are tried again on a new connection.
  CHECK(state.load_cursor("receipts").value() == "dlq-0001");
  CHECK(state.acquire_lease("receipts", "alice", 600s).has_value());
  REQUIRE(std::system(restart) == 0);
  // A reservation is not: its first try may have committed. It fails, or
  // it succeeds; either way the next call works and the count is right.
  auto reserved = state.reserve_attempt("receipt-1", 2);
  if (!reserved) {
    CHECK(reserved.error().code == replay_state_errc::store_unavailable);
    CHECK(state.attempts("receipt-1").value() == 1);
    reserved = state.reserve_attempt("receipt-1", 2);
  }
  CHECK(reserved.value() == 2);
  CHECK(state.attempts("receipt-1").value() == 2);
}

}  // namespace postgres_replay_state_test
