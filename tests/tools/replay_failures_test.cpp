// SPDX-License-Identifier: MIT
// A letter whose model call gets no completion (a 500, a 429, a body that is
// no completion, one over the size limit, a cut connection, a timeout) waits
// in the replay state, across runs and processes, and never blocks the rest:
// each kind over five runs of `llmdlq replay`.
#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("replay: calls that get no completion", "[tools][replay]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <chrono>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>

#include <llmdlq/llm/backoff.hpp>
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

}  // namespace

TEST_CASE("replay: a letter whose calls get no completion waits across runs, the others are recovered",
          "[tools][replay]") {
  constexpr int letters = 10;
  constexpr int runs = 5;
  const llmdlq::backoff_options backoff;  // the replay's defaults
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

      // The failing letter was asked again only after its wait: the server's, or the backoff's for its failures.
      REQUIRE_FALSE(first_letter_calls.empty());
      for (std::size_t i = 1; i < first_letter_calls.size(); ++i) {
        const auto waited = first_letter_calls[i] - first_letter_calls[i - 1];
        const auto wait =
            std::max(kind.retry_after, llmdlq::backoff_ceiling(static_cast<std::uint32_t>(i - 1), backoff));
        CHECK(waited >= wait);
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
