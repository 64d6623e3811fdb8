// SPDX-License-Identifier: MIT
// kill -9 among replayers that share one DLQ: rounds of four `llmdlq
// replay --execute --concurrency 16` processes on the same store, each
// killed once the model server has seen a number of calls drawn for it,
// then replays run to the end. Whatever the moments, every letter must end
// recovered, exhausted or held (its two attempts spent), no payload may be
// asked more than twice, and none may be delivered twice or lost. Needs the
// tool (LLMDLQ_TOOL) and the scripted model server.
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>
#include <cstddef>
#include <functional>
#include <iterator>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "catch.hpp"
#include "llm/scripted_server.hpp"
#include "support/eventually.hpp"
#include "support/replay_letters.hpp"
#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

namespace llmdlq::test {

/// The DLQ under test, holding replay_letters' cut-off letters.
struct replayer_kill_subject {
  std::string store;  ///< as `llmdlq replay` takes it
  /// Each letter's status, by idempotency key.
  std::function<std::map<std::string, moderation_status>()> statuses;
  /// Automated attempts the store's replay state counts, by idempotency key.
  std::function<std::map<std::string, std::uint32_t>()> attempts;
};

struct replayer_kill_tally {
  std::size_t rounds = 0, killed = 0, letters = 0, recovered = 0, exhausted = 0, held = 0;
  std::size_t most_calls = 0;  ///< the most calls any payload got
  std::size_t over_cap = 0;    ///< payloads asked more than twice
  std::size_t delivered_twice = 0;
  std::size_t lost = 0;        ///< recovered, and not delivered
  std::size_t unfinished = 0;  ///< pending with an attempt left
};

namespace replayer_kill_detail {

// A model that fixes letter n at once, at its second call (every third), or
// never (every seventh), answering after `delay`; it counts each letter's calls.
class model {
 public:
  explicit model(std::chrono::milliseconds delay) {
    server_.answer_with([this, delay](const recorded_request& request) -> std::optional<scripted_reply> {
      const int n = letter_of(request.body);
      std::size_t call = 0;
      {
        const std::lock_guard lock(mutex_);
        call = ++calls_[n];
      }
      const bool fixes = n % 7 != 0 && (n % 3 != 0 || call >= 2);
      scripted_reply reply = chat_completion(fixes ? recovered_answer(n) : failing_answer(n));
      reply.delay = delay;
      return reply;
    });
  }
  [[nodiscard]] bool listening() const { return server_.listening(); }
  [[nodiscard]] std::string base_url() const { return server_.base_url(); }
  [[nodiscard]] std::size_t calls() const { return server_.calls(); }
  [[nodiscard]] std::map<int, std::size_t> calls_by_letter() const {
    const std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<int, std::size_t> calls_;
  scripted_server server_;
};

// Whether the child ended (it is left to be reaped).
inline bool ended(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

// How many times the target file holds each key.
inline std::map<std::string, std::size_t> delivered(const std::filesystem::path& path) {
  std::map<std::string, std::size_t> held;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    boost::system::error_code ec;
    const auto value = boost::json::parse(line, ec);
    REQUIRE_FALSE(ec);
    ++held[std::string(value.at("idempotency_key").as_string())];
  }
  return held;
}

}  // namespace replayer_kill_detail

/// `rounds` rounds of `replayers` processes with `concurrency` calls in
/// flight each over the subject's `n` letters, every process killed with
/// SIGKILL once the server has seen a number of calls drawn for it; then
/// replays run to the end (after the killed ones' claims expired).
inline replayer_kill_tally run_replayer_kill_rounds(const replayer_kill_subject& subject, std::size_t n,
                                                    std::size_t rounds, std::size_t replayers = 4,
                                                    std::size_t concurrency = 16) {
  using namespace std::chrono_literals;
  namespace detail = replayer_kill_detail;
  temp_dir dir;
  const auto schema = dir.write("schema.json", replay_schema);
  const auto out = dir.path() / "recovered.jsonl";
  const std::string target = "jsonl:" + out.string();
  const auto allowlist = dir.write("targets.allow", target + "\n");
  detail::model model(20ms);
  REQUIRE(model.listening());
  const std::vector<std::string> replay{"replay",
                                        subject.store,
                                        "--schema",
                                        schema,
                                        "--execute",
                                        "--rate",
                                        "0",
                                        "--concurrency",
                                        std::to_string(concurrency),
                                        "--claim-ttl",
                                        "3",
                                        "--model-url",
                                        model.base_url(),
                                        "--to",
                                        target,
                                        "--allowlist",
                                        allowlist,
                                        "--json"};
  const std::uint32_t seed = std::random_device{}();
  std::mt19937 draw(seed);
  std::cout << "replayer kill run on " << subject.store << ": seed " << seed << "\n";
  replayer_kill_tally tally;
  for (std::size_t round = 0; round < rounds; ++round) {
    std::vector<std::pair<std::size_t, pid_t>> running;
    const std::size_t before = model.calls();
    for (std::size_t r = 0; r < replayers; ++r) {
      running.emplace_back(before + std::uniform_int_distribution<std::size_t>(1, 4 * concurrency)(draw),
                           start_llmdlq(replay, "/dev/null", "/dev/null"));
    }
    std::sort(running.begin(), running.end());
    for (const auto& [calls, pid] : running) {
      (void)eventually([&, at = calls, child = pid] { return model.calls() >= at || detail::ended(child); }, 60s);
      ::kill(pid, SIGKILL);
    }
    for (const auto& [calls, pid] : running) tally.killed += exit_code_of(pid) == 128 + SIGKILL;
    ++tally.rounds;
  }
  // The rest is replayed to the end, by replayers together and then alone,
  // pass after pass until one finds nothing to ask and no letter another
  // replay holds: the killed replays' claims expire on their own (3 s).
  std::vector<pid_t> finishing;
  for (std::size_t r = 0; r < replayers; ++r) {
    finishing.push_back(start_llmdlq(replay, "/dev/null", "/dev/null", (dir.path() / std::to_string(r)).string()));
  }
  for (std::size_t r = 0; r < replayers; ++r) {
    const int code = exit_code_of(finishing[r]);
    std::ifstream err(dir.path() / std::to_string(r));
    INFO(std::string(std::istreambuf_iterator<char>(err), {}));
    CHECK(code == 0);
  }
  const auto summary = dir.path() / "pass.json";
  const bool settled = eventually(
      [&] {
        const std::size_t before = model.calls();
        if (exit_code_of(start_llmdlq(replay, "/dev/null", summary.string())) != 0) return false;
        std::ifstream in(summary);
        boost::system::error_code ec;
        const auto pass = boost::json::parse(std::string(std::istreambuf_iterator<char>(in), {}), ec);
        return !ec && model.calls() == before && pass.at("claimed_elsewhere") == 0;
      },
      60s);
  CHECK(settled);

  const auto statuses = subject.statuses();
  const auto attempts = subject.attempts();
  const auto held = detail::delivered(out);
  const auto calls = model.calls_by_letter();
  for (std::size_t i = 0; i < n; ++i) {
    const std::string key = "key-" + std::to_string(i);
    ++tally.letters;
    const auto status = statuses.find(key);
    REQUIRE(status != statuses.end());
    const auto made = attempts.find(key);
    const std::uint32_t spent = made == attempts.end() ? 0 : made->second;
    if (status->second == moderation_status::recovered) ++tally.recovered;
    if (status->second == moderation_status::exhausted) ++tally.exhausted;
    if (status->second == moderation_status::pending) ++(spent >= 2 ? tally.held : tally.unfinished);
    const auto asked = calls.find(static_cast<int>(i));
    const std::size_t count = asked == calls.end() ? 0 : asked->second;
    tally.most_calls = std::max(tally.most_calls, count);
    tally.over_cap += count > 2;
    const auto written = held.find(key);
    const std::size_t copies = written == held.end() ? 0 : written->second;
    tally.delivered_twice += copies > 1;
    tally.lost += status->second == moderation_status::recovered && copies == 0;
  }
  std::cout << "replayer kill run: " << tally.rounds << " rounds, " << tally.killed << " replayers killed, "
            << tally.letters << " letters: " << tally.recovered << " recovered, " << tally.exhausted << " exhausted, "
            << tally.held << " held, " << tally.unfinished << " unfinished; at most " << tally.most_calls
            << " calls per payload, " << tally.over_cap << " over the cap, " << tally.delivered_twice
            << " delivered twice, " << tally.lost << " lost\n";
  return tally;
}

/// What every such run must come to, whatever the moments of the kills.
inline void check_replayer_kill_tally(const replayer_kill_tally& tally, std::size_t n, std::size_t rounds) {
  CHECK(tally.rounds == rounds);
  CHECK(tally.killed > 0);
  CHECK(tally.letters == n);
  CHECK(tally.recovered + tally.exhausted + tally.held == n);
  CHECK(tally.unfinished == 0);
  CHECK(tally.recovered > 0);
  CHECK(tally.exhausted > 0);
  CHECK(tally.most_calls <= 2);
  CHECK(tally.over_cap == 0);
  CHECK(tally.delivered_twice == 0);
  CHECK(tally.lost == 0);
}

}  // namespace llmdlq::test
