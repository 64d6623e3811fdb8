// SPDX-License-Identifier: MIT
// The fault run, for any store the tool writes: rounds of four writers
// (`llmdlq process`), a replay, a purge and an operator on one DLQ, with
// kill -9 landing on some of them at a moment drawn for each round. What
// must hold whatever the kills: every dead letter a writer acknowledged is
// stored or was purged with an audit row, nothing is stored or delivered
// twice, and the store stays intact. Needs cpp-httplib (the model server).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "catch.hpp"
#include "llm/scripted_server.hpp"
#include "support/eventually.hpp"
#include "support/replay_letters.hpp"
#include "tools/run_tool.hpp"

namespace llmdlq::test {

/// What the fault run asks of the store under test.
struct fault_run_store {
  std::string kind;   ///< for the summary: sqlite, postgres
  std::string spec;   ///< as the tool takes it: sqlite:PATH, postgres:CONNINFO
  std::function<std::set<std::string>()> stored_ids;           ///< the dlq_ids of the letters stored
  std::function<std::uint64_t()> stored;                        ///< letters stored
  std::function<std::uint64_t()> purged;                        ///< letters the purge audit counts
  std::function<std::uint64_t()> keys_stored_twice;             ///< idempotency keys with two rows
  std::function<std::string()> integrity;                       ///< "ok", or what is wrong
  std::function<void(const std::string& owner)> release_lease;  ///< of a replay killed while holding it
};

namespace fault_run_detail {

// The dlq_ids a writer's verdicts acknowledge: stored, or a duplicate of a stored one.
// How a writer's lines that were not stored ended: told to retry after waiting on the
// lock past its busy timeout (a loaded machine can cause it; the host retries them), or otherwise.
struct retried_lines {
  std::size_t after_lock_wait = 0, otherwise = 0;
};
inline retried_lines retried(const std::string& verdicts) {
  retried_lines count;
  std::istringstream lines(verdicts);
  for (std::string line; std::getline(lines, line);) {
    boost::system::error_code ec;
    const auto verdict = boost::json::parse(line, ec);
    if (ec || !verdict.is_object()) continue;
    const auto& o = verdict.as_object();
    if (!o.contains("status") || o.at("status") != "retry") continue;
    ++(o.contains("sink_error") && o.at("sink_error") == "timeout" ? count.after_lock_wait : count.otherwise);
  }
  return count;
}

inline std::vector<std::string> acknowledged(const std::string& verdicts) {
  std::vector<std::string> ids;
  std::istringstream lines(verdicts);
  for (std::string line; std::getline(lines, line);) {
    boost::system::error_code ec;
    const auto verdict = boost::json::parse(line, ec);
    if (ec || !verdict.is_object()) continue;  // a line the kill cut short acknowledges nothing
    const auto& o = verdict.as_object();
    if (o.contains("stored") && o.at("stored") == true) ids.emplace_back(o.at("dlq_id").as_string());
  }
  return ids;
}

// `n` lines of cut-off responses, each with its own key.
inline std::string writer_input(int round, int writer, int n) {
  std::string lines;
  for (int i = 0; i < n; ++i) {
    const std::string key = "r" + std::to_string(round) + "-w" + std::to_string(writer) + "-" + std::to_string(i);
    lines += boost::json::serialize(boost::json::object{{"id", key},
                                                        {"idempotency_key", key},
                                                        {"finish_reason", "length"},
                                                        {"response", R"({"name": ")" + key}}) +
             "\n";
  }
  return lines;
}


}  // namespace fault_run_detail

/// Runs `rounds` rounds against `store`, each writer judging `lines_per_writer`
/// lines a round, checking as it goes, and prints the figures.
inline void run_fault_rounds(const fault_run_store& store, int rounds, int lines_per_writer) {
  using namespace std::chrono_literals;
  using namespace fault_run_detail;
  constexpr int writers = 4;
  temp_dir dir;
  const auto root = std::filesystem::canonical(dir.path());
  const std::string schema = dir.write("schema.json", replay_schema);
  const std::string& spec = store.spec;
  const std::string out = (root / "recovered.jsonl").string();
  const std::string allowlist = dir.write("targets.allow", "jsonl:" + out + "\n");
  scripted_server server;
  server.answer_with([](const recorded_request&) -> std::optional<scripted_reply> {
    return delayed(chat_completion(recovered_answer(1)), 15ms);
  });
  REQUIRE(server.listening());
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);

  std::mt19937 random(20261202);
  std::set<std::string> fresh, old;  // acknowledged dlq_ids: never purged, and purgeable
  std::size_t kills = 0, rounds_with_kills = 0, told_to_retry = 0;
  for (int round = 0; round < rounds; ++round) {
    INFO("round " << round);
    const std::uint64_t baseline = store.stored();
    std::vector<pid_t> pids;
    std::vector<std::string> verdict_files, error_files;
    for (int w = 0; w < writers; ++w) {
      const auto in = dir.write("in-" + std::to_string(w), writer_input(round, w, lines_per_writer));
      verdict_files.push_back((root / ("verdicts-" + std::to_string(w))).string());
      error_files.push_back((root / ("errors-" + std::to_string(w))).string());
      std::vector<std::string> arguments{"process", "--schema", schema, "--sink", spec, "--model", "m"};
      // Half the writers write letters that expired long ago, for the purge.
      if (w % 2 == 1) arguments.insert(arguments.end(), {"--now", "2020-01-01T00:00:00.000Z"});
      pids.push_back(start_llmdlq(arguments, in, verdict_files.back(), error_files.back()));
    }
    const pid_t replay = start_llmdlq({"replay", spec, "--schema", schema, "--execute", "--rate", "0", "--limit",
                                       "25", "--model-url", server.base_url(), "--to", "jsonl:" + out,
                                       "--allowlist", allowlist},
                                      "/dev/null", (root / "replay.out").string());
    const pid_t purge = start_llmdlq({"purge", spec, "--operator", "ops"}, "/dev/null", (root / "purge.out").string());
    pids.push_back(replay);
    pids.push_back(purge);
    // The operator acts on what is pending now, beside the writers and
    // whatever the kill below does to them (on a thread of its own: its
    // commands take longer than the writers may).
    std::thread operator_thread([&spec] {
      const auto listed = run_llmdlq("list '" + spec + "' --status pending --limit 2 --json");
      std::istringstream rows(listed.out);
      for (std::string row; std::getline(rows, row);) {
        boost::system::error_code ec;
        const auto record = boost::json::parse(row, ec);
        if (ec || !record.is_object() || !record.as_object().contains("dlq_id")) continue;
        const std::string id(record.at("dlq_id").as_string());
        if (run_llmdlq("claim '" + spec + "' " + id + " --operator ann").exit_code == 0) {
          (void)run_llmdlq("discard '" + spec + "' " + id + " --operator ann");
        }
      }
    });
    // kill -9 on some of them, at a moment drawn for the round.
    // The kill lands once the writers have stored a number of letters drawn for the round (or after a
    // deadline): one of the processes still running then is killed, each of the others with a chance of 1 in 4.
    const std::uint64_t target =
        baseline + std::uniform_int_distribution<std::uint64_t>(1, lines_per_writer / 2)(random);
    (void)eventually([&] { return store.stored() >= target; }, 3s);
    std::vector<int> statuses(pids.size(), 0);
    std::vector<bool> ended(pids.size(), false);
    std::vector<std::size_t> running;
    for (std::size_t i = 0; i < pids.size(); ++i) {
      ended[i] = ::waitpid(pids[i], &statuses[i], WNOHANG) == pids[i];
      if (!ended[i]) running.push_back(i);
    }
    if (!running.empty()) {
      const std::size_t victim = running[std::uniform_int_distribution<std::size_t>(0, running.size() - 1)(random)];
      for (const std::size_t i : running) {
        if (i == victim || std::uniform_int_distribution<int>(0, 3)(random) == 0) (void)::kill(pids[i], SIGKILL);
      }
    }
    operator_thread.join();
    const std::size_t kills_before = kills;
    for (std::size_t i = 0; i < pids.size(); ++i) {
      int& status = statuses[i];
      if (!ended[i]) REQUIRE(::waitpid(pids[i], &status, 0) == pids[i]);
      const bool died = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
      kills += died;
      // A replay killed while it held the lease would keep the next ones out until it expires.
      if (pids[i] == replay && died) {
        store.release_lease("llmdlq-replay:" + std::string(host) + ":" + std::to_string(replay));
      }
      if (!died && i < static_cast<std::size_t>(writers)) {
        // Exit 0, or 3 with each line it could not store (or the DLQ's opening) told to retry after its lock wait.
        const std::string verdicts = slurp(verdict_files[i]), errors = slurp(error_files[i]);
        const auto retries = retried(verdicts);
        const bool open_waited = verdicts.empty() && errors.find("cannot open the DLQ") != std::string::npos &&
                                 errors.find("locked") != std::string::npos;
        INFO("writer " << i << ": " << errors << retries.after_lock_wait << " lines told to retry after a lock wait, "
                       << retries.otherwise << " otherwise");
        CHECK(WIFEXITED(status));
        CHECK(retries.otherwise == 0);
        CHECK(WEXITSTATUS(status) == (retries.after_lock_wait > 0 || open_waited ? 3 : 0));
        told_to_retry += retries.after_lock_wait > 0 || open_waited;
      }
    }
    rounds_with_kills += kills > kills_before;
    for (int w = 0; w < writers; ++w) {
      for (auto& id : acknowledged(slurp(verdict_files[static_cast<std::size_t>(w)]))) {
        (w % 2 == 1 ? old : fresh).insert(std::move(id));
      }
    }
    CHECK(store.integrity() == "ok");
  }
  // A last replay, killed by nobody, cuts a torn line off the target and goes on.
  const auto last = run_llmdlq_reading("replay '" + spec + "' --schema " + schema +
                                                         " --execute --rate 0 --limit 5 --model-url " +
                                                         server.base_url() + " --to jsonl:" + out +
                                                         " --allowlist " + allowlist,
                                                     "/dev/null");
  INFO(last.err);
  CHECK(last.exit_code == 0);

  // One read of what is stored: a query per letter would cost more than the rounds.
  const std::set<std::string> stored_ids = store.stored_ids();
  std::size_t fresh_missing = 0, old_missing = 0;
  for (const auto& id : fresh) fresh_missing += !stored_ids.contains(id);
  for (const auto& id : old) old_missing += !stored_ids.contains(id);
  const std::uint64_t purged = store.purged();
  const std::uint64_t twice = store.keys_stored_twice();
  std::multiset<std::string> delivered;
  std::istringstream lines(slurp(out));
  for (std::string line; std::getline(lines, line);) {
    delivered.insert(std::string(boost::json::parse(line).at("idempotency_key").as_string()));
  }
  std::cerr << "fault run (" << store.kind << "): " << rounds << " rounds, " << rounds_with_kills << " with a kill -9, " << kills
            << " processes killed, " << told_to_retry << " writers told to retry after a lock wait, "
            << fresh.size() + old.size() << " dead letters acknowledged (" << old.size()
            << " purgeable), " << store.stored() << " stored, " << purged << " purged with an audit row, "
            << old_missing << " acknowledged and purged, " << fresh_missing << " acknowledged and lost, " << twice
            << " keys stored twice, " << delivered.size() << " payloads delivered\n";
  CHECK(rounds_with_kills >= rounds / 2);
  CHECK(fresh_missing == 0);
  CHECK(old_missing <= purged);
  CHECK(twice == 0);
  CHECK(std::set<std::string>(delivered.begin(), delivered.end()).size() == delivered.size());
  CHECK(store.integrity() == "ok");
}

}  // namespace llmdlq::test
