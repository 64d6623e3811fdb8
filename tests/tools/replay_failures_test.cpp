// SPDX-License-Identifier: MIT
// A letter whose model call gets no completion (a 500, a 429, a body that is
// no completion, one over the size limit, a cut connection, a timeout) waits
// in the replay state, across runs and processes, and never blocks the rest:
// each kind over five runs of `llmdlq replay`, the first three spaced so
// that the letter is asked again, the last two at once.
#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("replay: calls that get no completion", "[tools][replay]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/parse.hpp>

#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "llm/scripted_server.hpp"
#include "support/replay_letters.hpp"
#include "tools/run_tool.hpp"

namespace replay_failures_test {

using namespace std::chrono_literals;
using llmdlq::moderation_status;
using llmdlq::test::chat_completion;
using llmdlq::test::scripted_reply;
using llmdlq::test::scripted_server;
using llmdlq::test::temp_dir;

namespace {

struct failure_kind {
  std::string name;
  scripted_reply reply;
  std::chrono::milliseconds retry_after{0};  // what the server asked for, if anything
};

std::vector<failure_kind> failure_kinds() {
  scripted_reply garbage{200, "<html><body>502 Bad Gateway</body></html>"};
  garbage.content_type = "text/html";
  scripted_reply huge = chat_completion(std::string(std::size_t{9} << 20, 'x'));
  scripted_reply cut = chat_completion(llmdlq::test::recovered_answer(0));
  cut.cut = true;
  return {
      {"server error", llmdlq::test::server_error(), 0ms},
      {"rate limit with Retry-After", llmdlq::test::rate_limited("2"), 2000ms},
      {"a body that is no completion", garbage, 0ms},
      {"a 9 MB body", huge, 0ms},
      {"a cut connection", cut, 0ms},
      {"a timeout", llmdlq::test::delayed(chat_completion(llmdlq::test::recovered_answer(0)), 3s), 0ms},
  };
}

// How long the letter is held after its n-th failed call in a row (n from
// 1), written out by hand, not asked of llmdlq::backoff_ceiling. `llmdlq
// replay` has no backoff option, so it runs backoff_options' defaults: base
// 500 ms, cap 60 s. backoff.hpp documents min(cap, base * 2^n) as the
// longest wait before retry n, and the wait itself as full jitter, drawn
// from 0 up to that: a jittered wait has no lower bound to test, so the
// test holds the letter's own hold to what is promised of it. The pages
// (command-line.md, recovery-and-replay.md) say a letter waits "until its
// Retry-After or its backoff is over": at most max(Retry-After, ceiling).
// That it waits no less than the ceiling for its failures so far, whatever
// the jitter drew, is said only in the ladder's source (call_failed in
// src/llm/recovery_ladder.cpp: "so a next run does not ask again at
// once"); this test holds it to that too. After failure n, then, the hold
// is max(Retry-After, base * 2^(n-1)), capped.
constexpr std::array<std::chrono::milliseconds, 5> hold_after_failure = {500ms, 1000ms, 2000ms, 4000ms, 8000ms};

std::chrono::milliseconds expected_hold(std::size_t failures, std::chrono::milliseconds retry_after) {
  return std::max(retry_after, hold_after_failure.at(failures - 1));
}

}  // namespace

TEST_CASE("replay: a letter whose calls get no completion waits across runs, the others are recovered",
          "[tools][replay]") {
  constexpr int letters = 10;
  constexpr int runs = 5;
  constexpr int spaced_runs = 2;  // runs after which the test waits out the letter's hold
  for (const auto& kind : failure_kinds()) {
    DYNAMIC_SECTION(kind.name) {
      temp_dir dir;
      const std::string schema = dir.write("schema.json", llmdlq::test::replay_schema);
      const std::string db = (dir.path() / "dlq.db").string();
      const auto stored = llmdlq::test::cut_off_letters(letters);
      {
        auto store = llmdlq::sqlite_store::open(db);
        REQUIRE(store.has_value());
        for (const auto& letter : stored) REQUIRE(store->publish(letter).has_value());
      }
      scripted_server server;
      server.answer_with([&](const llmdlq::test::recorded_request& request) -> std::optional<scripted_reply> {
        if (request.body.find("letter-0") != std::string::npos) return kind.reply;
        return chat_completion(llmdlq::test::recovered_answer(1));
      });
      REQUIRE(server.listening());
      for (int run = 0; run < runs; ++run) {
        const auto replay = llmdlq::test::run_llmdlq_reading(
            "replay sqlite:" + db + " --schema " + schema + " --execute --json --rate 0 --timeout 1 --model-url " +
                server.base_url(),
            "/dev/null");
        INFO("run " << run << ": " << replay.err);
        REQUIRE(replay.exit_code == 0);
        CHECK(boost::json::parse(replay.out).at("finished") == true);
        if (run >= spaced_runs) continue;
        // The letter failed once more in this run: its hold is no longer than
        // promised, and the next run starts once it is over.
        const auto returned = std::chrono::system_clock::now();
        auto state = llmdlq::sqlite_replay_state::open(db);
        REQUIRE(state.has_value());
        const auto hold = state->hold(llmdlq::payload_hold_key("key-0"));
        REQUIRE(hold.has_value());
        REQUIRE(hold->failures == static_cast<std::uint32_t>(run + 1));
        REQUIRE(hold->not_before.has_value());
        const auto longest = expected_hold(hold->failures, kind.retry_after);
        INFO("held " << std::chrono::duration_cast<std::chrono::milliseconds>(*hold->not_before - returned).count()
                     << " ms past the run's end, " << longest.count() << " ms at most after the failure");
        REQUIRE(*hold->not_before <= returned + longest + 10ms);
        std::this_thread::sleep_until(*hold->not_before + 50ms);
      }

      // The others were recovered in the first run, each asked once.
      std::vector<std::chrono::steady_clock::time_point> first_letter_calls;
      std::size_t other_calls = 0;
      for (const auto& request : server.requests()) {
        if (request.body.find("letter-0") != std::string::npos) {
          first_letter_calls.push_back(request.at);
        } else {
          ++other_calls;
        }
      }
      CHECK(other_calls == static_cast<std::size_t>(letters - 1));
      auto store = llmdlq::sqlite_store::open(db, {.read_only = true});
      REQUIRE(store.has_value());
      const auto statuses = llmdlq::test::statuses_by_key(*store);
      for (int i = 1; i < letters; ++i) CHECK(statuses.at("key-" + std::to_string(i)) == moderation_status::recovered);
      CHECK(statuses.at("key-0") == moderation_status::pending);

      // The failing letter was asked again, after each of the spaced runs at
      // least, and each time only after its hold: the server's Retry-After,
      // or the backoff's for its failures so far.
      REQUIRE(first_letter_calls.size() >= spaced_runs + 1);
      for (std::size_t i = 1; i < first_letter_calls.size(); ++i) {
        const auto waited = first_letter_calls[i] - first_letter_calls[i - 1];
        const auto held = expected_hold(i, kind.retry_after);
        INFO("call " << i + 1 << " came "
                     << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms after call " << i
                     << ", which was held " << held.count() << " ms");
        CHECK(waited >= held);
      }
      // Every call is in the state and in the letter's history; none spent an automated attempt.
      auto state = llmdlq::sqlite_replay_state::open(db);
      REQUIRE(state.has_value());
      const auto hold = state->hold(llmdlq::payload_hold_key("key-0"));
      REQUIRE(hold.has_value());
      CHECK(hold->failures == first_letter_calls.size());
      CHECK(state->attempts("key-0").value() == 0);
      auto record = store->get(stored.front().dlq_id);
      REQUIRE(record.has_value());
      REQUIRE(record->has_value());
      const auto history = boost::json::parse((*record)->envelope_json).at("attempts").at("history").as_array();
      CHECK(history.size() == first_letter_calls.size());
      for (const auto& attempt : history) CHECK(attempt.at("outcome") == "call_failed");
    }
  }
}

}  // namespace replay_failures_test

#endif
