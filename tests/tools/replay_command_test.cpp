// SPDX-License-Identifier: MIT
// `llmdlq replay` over a SQLite DLQ, against a model server on loopback that
// plays a script of answers: a dry run changes nothing and calls nothing, a
// real run moves letters along under a lease at a set rate, resumes where a
// failing endpoint stopped it, and writes each payload to an allowed target
// once.
#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("replay: against a model server", "[tools][replay]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>

#include <boost/json/parse.hpp>
#include <sqlite3.h>

#include <llmdlq/llm/backoff.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "llm/scripted_server.hpp"
#include "support/eventually.hpp"
#include "support/replay_letters.hpp"
#include "tools/run_tool.hpp"

namespace replay_command_test {

using namespace std::chrono_literals;
using llmdlq::moderation_status;
using llmdlq::test::chat_completion;
using llmdlq::test::run_llmdlq_reading;
using llmdlq::test::scripted_server;
using llmdlq::test::slurp;
using llmdlq::test::stored_failure;
using llmdlq::test::temp_dir;

namespace {

// A folder with today's schema and a SQLite DLQ holding `letters`.
struct dlq {
  temp_dir dir;
  std::string schema = dir.write("schema.json", llmdlq::test::replay_schema);
  std::string db = (dir.path() / "dlq.db").string();

  explicit dlq(const std::vector<llmdlq::envelope>& letters) {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    for (const auto& letter : letters) REQUIRE(store->publish(letter).has_value());
  }

  // `llmdlq replay sqlite:DB --schema FILE <arguments>`, run through `launcher`.
  llmdlq::test::tool_run replay(const std::string& arguments, const std::string& launcher = {}) const {
    return run_llmdlq_reading("replay sqlite:" + db + " --schema " + schema + " " + arguments, "/dev/null", launcher);
  }

  std::map<std::string, moderation_status> statuses() const {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    return llmdlq::test::statuses_by_key(*store);
  }
};

// Whether any request the server received mentions `text`.
bool asked_about(const scripted_server& server, std::size_t from, const std::string& text) {
  const auto requests = server.requests();
  for (std::size_t i = from; i < requests.size(); ++i) {
    if (requests[i].body.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("replay: a dry run counts next steps and shows samples, calls nothing and changes nothing",
          "[tools][replay]") {
  dlq q(llmdlq::test::replay_letters({stored_failure::cut_off, stored_failure::cut_off, stored_failure::schema_failure,
                                      stored_failure::cut_off}));
  scripted_server server;
  REQUIRE(server.listening());
  const std::string before = slurp(q.db);

  auto run = q.replay("--json --samples 2 --model-url " + server.base_url());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("dry_run") == true);
  CHECK(summary.at("seen") == 4);
  CHECK(summary.at("selected") == 4);
  CHECK(summary.at("by_outcome") == boost::json::parse(R"({"repair_prompt": 3, "held": 1})"));
  CHECK(summary.at("calls") == 0);
  const auto& samples = summary.at("samples").as_array();
  REQUIRE(samples.size() == 2);
  CHECK(samples[0].at("step") == "repair_prompt");
  CHECK(samples[0].at("model") == "m");
  CHECK(samples[0].at("before") == R"({"name": "letter-0)");

  run = q.replay("");
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("(dry run: nothing called, nothing changed)") != std::string::npos);
  CHECK(run.out.find("repair_prompt") != std::string::npos);
  CHECK(run.out.find("sample ") != std::string::npos);

  CHECK(server.calls() == 0);
  // Not a byte changed: no status moved, no replay table was made.
  CHECK(slurp(q.db) == before);
  for (const auto& [key, status] : q.statuses()) CHECK(status == moderation_status::pending);
}

TEST_CASE("replay: --execute recovers, exhausts and holds, and counts what the server reported", "[tools][replay]") {
  dlq q(llmdlq::test::replay_letters({stored_failure::cut_off, stored_failure::cut_off, stored_failure::cut_off,
                                      stored_failure::schema_failure}));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0), "stop", 100, 20),
                          chat_completion(llmdlq::test::recovered_answer(1), "stop", 100, 20),
                          chat_completion(llmdlq::test::failing_answer(2), "stop", 100, 20)});
  REQUIRE(server.listening());

  const auto run = q.replay("--execute --json --rate 0 --max-attempts 1 --model-url " + server.base_url());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("dry_run") == false);
  CHECK(summary.at("finished") == true);
  CHECK(summary.at("recovered") == 2);
  CHECK(summary.at("exhausted") == 1);
  CHECK(summary.at("held") == 1);
  CHECK(summary.at("calls") == 3);
  CHECK(summary.at("tokens") == boost::json::parse(R"({"prompt": 300, "completion": 60, "total": 360})"));
  CHECK(server.calls() == 3);
  for (const auto& request : server.requests()) {
    CHECK(request.path == "/v1/chat/completions");
    CHECK(request.json().at("model") == "m");
  }
  CHECK(q.statuses() == std::map<std::string, moderation_status>{{"key-0", moderation_status::recovered},
                                                                 {"key-1", moderation_status::recovered},
                                                                 {"key-2", moderation_status::exhausted},
                                                                 {"key-3", moderation_status::pending}});

  // Again, as text: nothing is left to ask, the held letter stays held.
  const auto again = q.replay("--execute --rate 0 --max-attempts 1 --model-url " + server.base_url());
  INFO(again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("recovered 0, exhausted 0, held 1, already written 0, delivered 0\n") != std::string::npos);
  CHECK(again.out.find("tokens 0 (prompt 0, completion 0) in 0 calls\n") != std::string::npos);
  CHECK(server.calls() == 3);
}

TEST_CASE("replay: the text summary counts the tokens the server reported", "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(2));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0), "stop", 7, 3),
                          chat_completion(llmdlq::test::recovered_answer(1), "stop", 11, 4)});
  REQUIRE(server.listening());
  const auto run = q.replay("--execute --rate 0 --model-url " + server.base_url());
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("recovered 2, exhausted 0, held 0, already written 0, delivered 0\n") != std::string::npos);
  CHECK(run.out.find("tokens 25 (prompt 18, completion 7) in 2 calls\n") != std::string::npos);
}

TEST_CASE("replay: --model and --escalate-to name the models asked", "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(1));
  scripted_server server({chat_completion(llmdlq::test::failing_answer(0)),
                          chat_completion(llmdlq::test::recovered_answer(0))});
  REQUIRE(server.listening());
  const auto run = q.replay("--execute --rate 0 --model small --escalate-to large --model-url " + server.base_url());
  INFO(run.err);
  CHECK(run.exit_code == 0);
  const auto requests = server.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].json().at("model") == "small");
  CHECK(requests[1].json().at("model") == "large");
  CHECK(q.statuses().at("key-0") == moderation_status::recovered);
}

TEST_CASE("replay: --limit stops after that many letters, and the next run goes on from there", "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(3));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0)),
                          chat_completion(llmdlq::test::recovered_answer(1)),
                          chat_completion(llmdlq::test::recovered_answer(2))});
  REQUIRE(server.listening());
  const auto dry = q.replay("--json --limit 1 --model-url " + server.base_url());
  REQUIRE(dry.exit_code == 0);
  CHECK(boost::json::parse(dry.out).at("stopped_because") == "the limit of 1 letter");
  auto run = q.replay("--execute --json --rate 0 --limit 2 --model-url " + server.base_url());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("finished") == false);
  CHECK(summary.at("stopped_because") == "the limit of 2 letters");
  CHECK(server.calls() == 2);
  CHECK(q.statuses().at("key-2") == moderation_status::pending);

  run = q.replay("--execute --json --rate 0 --limit 2 --model-url " + server.base_url());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("finished") == true);
  CHECK(summary.at("seen") == 1);
  CHECK(server.calls() == 3);
  CHECK(asked_about(server, 2, "letter-2"));
}

TEST_CASE("replay: the selection takes only the letters it names", "[tools][replay]") {
  const auto letters = llmdlq::test::replay_letters({stored_failure::cut_off, stored_failure::schema_failure,
                                                     stored_failure::cut_off});
  dlq q(letters);
  const auto selected = [&](const std::string& arguments) {
    const auto run = q.replay("--json " + arguments);
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    return boost::json::parse(run.out).at("selected");
  };
  CHECK(selected("") == 3);
  CHECK(selected("--id " + letters[2].dlq_id) == 1);
  CHECK(selected("--id " + letters[0].dlq_id + " --id " + letters[1].dlq_id) == 2);
  CHECK(selected("--category truncated") == 2);
  CHECK(selected("--category schema") == 1);
  CHECK(selected("--written-model m-2026-11") == 3);
  CHECK(selected("--written-model m") == 0);
  CHECK(selected("--written-schema receipt-1 --category truncated") == 2);
  CHECK(selected("--written-schema receipt-0") == 0);
  CHECK(selected("--since 2026-12-01T10:00:01Z") == 2);
  CHECK(selected("--until 2026-12-01T10:00:01Z") == 1);
  CHECK(q.replay("--category sideways").exit_code == 2);
}

TEST_CASE("replay: a payload another replay holds is left to it, whatever the name, and taken once given back",
          "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(2));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(1)),
                          chat_completion(llmdlq::test::recovered_answer(0))});
  REQUIRE(server.listening());
  {
    auto state = llmdlq::sqlite_replay_state::open(q.db);
    REQUIRE(state.has_value());
    REQUIRE(state->claim("payload key-0", "another-host:1", 300s).value());
  }
  auto run = q.replay("--execute --json --rate 0 --model-url " + server.base_url());
  INFO(run.err);
  CHECK(run.exit_code == 0);
  const auto summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("claimed_elsewhere") == 1);
  CHECK(summary.at("recovered") == 1);
  CHECK(server.calls() == 1);
  CHECK_FALSE(asked_about(server, 0, "letter-0"));
  CHECK(q.statuses().at("key-0") == moderation_status::pending);

  // Another name is another cursor, never a second turn of a payload in hand.
  run = q.replay("--execute --rate 0 --name other --model-url " + server.base_url());
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("1 letter held by another replay: left to it") != std::string::npos);
  CHECK(server.calls() == 1);
  {
    auto state = llmdlq::sqlite_replay_state::open(q.db);
    REQUIRE(state.has_value());
    REQUIRE(state->release_claim("payload key-0", "another-host:1").has_value());
  }
  run = q.replay("--execute --rate 0 --name other --model-url " + server.base_url());
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(server.calls() == 2);
  for (const auto& [key, status] : q.statuses()) CHECK(status == moderation_status::recovered);
}

TEST_CASE("replay: a TERM gives the lease and the claims back, so the next run need not wait for them",
          "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(2));
  scripted_server server({llmdlq::test::delayed(chat_completion(llmdlq::test::recovered_answer(0)), 20s),
                          chat_completion(llmdlq::test::recovered_answer(0)),
                          chat_completion(llmdlq::test::recovered_answer(1))});
  REQUIRE(server.listening());
  const std::string store = "sqlite:" + q.db;
  const std::string url = server.base_url();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::execl(LLMDLQ_TOOL, "llmdlq", "replay", store.c_str(), "--schema", q.schema.c_str(), "--execute", "--rate", "0",
            "--model-url", url.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Stopped while it waits for the model's answer, holding the lease and the letter's claim.
  CHECK(llmdlq::test::eventually([&] { return server.calls() == 1; }));
  REQUIRE(::kill(pid, SIGTERM) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM);

  const auto run = q.replay("--execute --json --rate 0 --model-url " + url);
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(server.calls() == 3);
  for (const auto& [key, status] : q.statuses()) CHECK(status == moderation_status::recovered);
}

TEST_CASE("replay: a call cut off by kill -9 is in the letter's history and counted", "[tools][replay]") {
  const auto letters = llmdlq::test::cut_off_letters(1);
  dlq q(letters);
  scripted_server server({llmdlq::test::delayed(chat_completion(llmdlq::test::recovered_answer(0)), 20s),
                          chat_completion(llmdlq::test::recovered_answer(0), "stop", 7, 4)});
  REQUIRE(server.listening());
  const std::string url = server.base_url();
  const pid_t pid = llmdlq::test::start_llmdlq({"replay", "sqlite:" + q.db, "--schema", q.schema, "--execute", "--rate",
                                                "0", "--model-url", url});
  REQUIRE(pid > 0);
  CHECK(llmdlq::test::eventually([&] { return server.calls() == 1; }));
  REQUIRE(::kill(pid, SIGKILL) == 0);
  CHECK(llmdlq::test::exit_code_of(pid) == 128 + SIGKILL);

  const auto history_of = [&] {
    auto opened = llmdlq::sqlite_store::open(q.db, {.read_only = true});
    REQUIRE(opened.has_value());
    auto record = opened->get(letters.front().dlq_id);
    REQUIRE(record.has_value());
    REQUIRE(record->has_value());
    return boost::json::parse((*record)->envelope_json).at("attempts").at("history").as_array();
  };
  // The call was written down before it was made: who was asked, and when.
  auto history = history_of();
  REQUIRE(history.size() == 1);
  CHECK(history[0].at("outcome") == "call_started");
  CHECK(history[0].at("model") == "m");
  CHECK(history[0].at("at").is_string());
  {
    auto state = llmdlq::sqlite_replay_state::open(q.db);
    REQUIRE(state.has_value());
    CHECK(state->attempts("key-0").value() == 1);
    char host[256] = {};
    REQUIRE(::gethostname(host, sizeof host - 1) == 0);
    // The killed replay's claim would expire on its own; it is given back here so the test need not wait.
    REQUIRE(state->release_claim("payload key-0", "llmdlq-replay:" + std::string(host) + ":" + std::to_string(pid))
                .has_value());
  }

  // The next run makes the second and last automated attempt, and the history keeps both.
  const auto run = q.replay("--execute --json --rate 0 --model-url " + url);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(boost::json::parse(run.out).at("recovered") == 1);
  CHECK(server.calls() == 2);
  history = history_of();
  REQUIRE(history.size() == 2);
  CHECK(history[0].at("outcome") == "call_started");
  CHECK(history[1].at("outcome") == "recovered");
  CHECK(history[1].at("tokens") == 11);
}

TEST_CASE("replay: a request the provider refuses stops the run and holds every letter, --provider sends what it takes",
          "[tools][replay]") {
  dlq q(llmdlq::test::replay_letters({stored_failure::cut_off, stored_failure::cut_off}));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0)),
                          chat_completion(llmdlq::test::recovered_answer(1))});
  REQUIRE(server.listening());
  server.answer_with(llmdlq::test::strict_as(llmdlq::provider_profile::openai_strict));

  // The schema as written (an open object): OpenAI's strict mode refuses it, whatever the letter.
  auto run = q.replay("--execute --json --rate 0 --provider full --model-url " + server.base_url());
  INFO(run.err);
  CHECK(run.exit_code == 0);
  auto summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("finished") == false);
  CHECK(summary.at("by_outcome") == boost::json::parse(R"({"request_refused": 1})"));
  CHECK(summary.at("stopped_because").as_string().find("'additionalProperties' is required") != std::string::npos);
  CHECK(summary.at("exhausted") == 0);
  CHECK(server.calls() == 1);  // the run stops at the first refusal
  for (const auto& [key, status] : q.statuses()) CHECK(status == moderation_status::pending);

  // Lowered for OpenAI, the same letters are recovered; neither lost an attempt to the refusal.
  run = q.replay("--execute --json --rate 0 --max-attempts 1 --provider openai --model-url " + server.base_url());
  INFO(run.err);
  CHECK(run.exit_code == 0);
  summary = boost::json::parse(run.out).as_object();
  INFO(run.out);
  CHECK(summary.at("recovered") == 2);
  const auto sent = server.requests().back().json().at("response_format").at("json_schema");
  CHECK(sent.at("strict") == true);
  CHECK(sent.at("schema").at("additionalProperties") == false);
  CHECK(q.statuses() == std::map<std::string, moderation_status>{{"key-0", moderation_status::recovered},
                                                                 {"key-1", moderation_status::recovered}});
}

TEST_CASE("replay: --rate paces the letters", "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(3));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0)),
                          chat_completion(llmdlq::test::recovered_answer(1)),
                          chat_completion(llmdlq::test::recovered_answer(2))});
  REQUIRE(server.listening());
  const auto start = std::chrono::steady_clock::now();
  const auto run = q.replay("--execute --rate 4 --model-url " + server.base_url());
  const auto took = std::chrono::steady_clock::now() - start;
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(server.calls() == 3);
  // Three letters at 4 a second: two intervals of 250 ms at least.
  CHECK(took >= 500ms);
}

TEST_CASE("replay: a letter whose call fails waits in the state, the run goes on, a later run asks it again",
          "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(3));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0)), llmdlq::test::server_error(),
                          chat_completion(llmdlq::test::recovered_answer(2))});
  REQUIRE(server.listening());
  const auto before = llmdlq::system_now();
  auto run = q.replay("--execute --json --rate 0 --model-url " + server.base_url());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("finished") == true);
  CHECK(summary.at("recovered") == 2);
  CHECK(summary.at("by_outcome").at("call_failed") == 1);
  CHECK(server.calls() == 3);
  CHECK(q.statuses() == std::map<std::string, moderation_status>{{"key-0", moderation_status::recovered},
                                                                 {"key-1", moderation_status::pending},
                                                                 {"key-2", moderation_status::recovered}});
  {
    auto state = llmdlq::sqlite_replay_state::open(q.db);
    REQUIRE(state.has_value());
    const auto hold = state->hold(llmdlq::payload_hold_key("key-1"));
    REQUIRE(hold.has_value());
    CHECK(hold->failures == 1);
    REQUIRE(hold->not_before.has_value());
    CHECK(*hold->not_before >= before + llmdlq::backoff_options{}.base);  // at least the backoff's first ceiling
    CHECK(hold->last_error.starts_with("server_error"));
  }
  // The wait is moved by hand, so that the test does not depend on how fast the runs come.
  const auto wait_until = [&](const std::string& time) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(q.db.c_str(), &db) == SQLITE_OK);
    const std::string sql = "UPDATE llmdlq_replay_holds SET not_before = '" + time + "' WHERE key = 'payload key-1'";
    CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
    CHECK(sqlite3_changes(db) == 1);
    sqlite3_close(db);
  };

  // While the letter waits, a run does not ask it.
  wait_until("2999-01-01T00:00:00.000Z");
  run = q.replay("--execute --json --rate 0 --model-url " + server.base_url());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(boost::json::parse(run.out).at("by_outcome").at("call_waiting") == 1);
  CHECK(server.calls() == 3);

  // Its wait over, the next run asks it again, and only it.
  wait_until("2000-01-01T00:00:00.000Z");
  server.add(chat_completion(llmdlq::test::recovered_answer(1)));
  run = q.replay("--execute --json --rate 0 --model-url " + server.base_url());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(q.statuses().at("key-1") == moderation_status::recovered);
  CHECK(server.calls() == 4);
  CHECK(asked_about(server, 3, "letter-1"));
  for (const auto& [key, status] : q.statuses()) CHECK(status == moderation_status::recovered);
}

TEST_CASE("replay: --to writes only to an allowed target, each payload once", "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(3));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0)),
                          chat_completion(llmdlq::test::recovered_answer(1)),
                          chat_completion(llmdlq::test::recovered_answer(2))});
  REQUIRE(server.listening());
  const std::string out = (q.dir.path() / "out.jsonl").string();
  const std::string execute = "--execute --rate 0 --model-url " + server.base_url() + " --to jsonl:" + out;
  const std::string no_env = "env -u LLMDLQ_REPLAY_ALLOWLIST";

  auto run = q.replay(execute, no_env);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("allowlist") != std::string::npos);

  const auto elsewhere = q.dir.write("elsewhere.allow", "# somewhere else\njsonl:/srv/replays/*\n");
  run = q.replay(execute + " --allowlist " + elsewhere, no_env);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("not on the allowlist") != std::string::npos);
  // The environment names an allowlist as well as --allowlist does.
  run = q.replay(execute, "env LLMDLQ_REPLAY_ALLOWLIST=" + elsewhere);
  CHECK(run.exit_code == 2);
  CHECK(server.calls() == 0);
  CHECK_FALSE(std::filesystem::exists(out));

  // Entries name absolute paths, links resolved.
  const auto root = std::filesystem::canonical(q.dir.path());
  const auto allowed = q.dir.write("allowed.allow", "jsonl:" + (root / "out").string() + "*\n");
  // The first run delivers all three, the next ones find nothing to write.
  for (int i = 0; i < 3; ++i) {
    run = q.replay(execute + " --allowlist " + allowed, no_env);
    INFO(run.err);
    CHECK(run.exit_code == 0);
  }
  CHECK(server.calls() == 3);
  std::multiset<std::string> keys;
  std::size_t lines = 0;
  std::istringstream written_lines(slurp(out));
  for (std::string line; std::getline(written_lines, line);) {
    ++lines;
    const auto written = boost::json::parse(line).as_object();
    keys.insert(std::string(written.at("idempotency_key").as_string()));
    CHECK(written.at("source") == "replay");
    CHECK(written.at("output").at("total") == 1);
  }
  CHECK(lines == 3);
  CHECK(keys == std::multiset<std::string>{"key-0", "key-1", "key-2"});
}

TEST_CASE("replay: a target file that others can write is refused before the model is asked", "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(1));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0))});
  REQUIRE(server.listening());
  const auto root = std::filesystem::canonical(q.dir.path());
  const auto out = (root / "out.jsonl").string();
  const auto allowed = q.dir.write("allowed.allow", "jsonl:" + out + "\n");
  q.dir.write("out.jsonl", "");
  REQUIRE(::chmod(out.c_str(), 0646) == 0);

  const auto run = q.replay("--execute --rate 0 --allowlist " + allowed + " --model-url " + server.base_url() +
                            " --to jsonl:" + out);
  INFO(run.err);
  CHECK(run.exit_code != 0);
  CHECK(run.err.find(out + " has mode 0646: group or others can write it") != std::string::npos);
  CHECK(server.calls() == 0);
  CHECK(slurp(out).empty());
}

TEST_CASE("replay: a new target file is its owner's only", "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(1));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0))});
  REQUIRE(server.listening());
  const auto root = std::filesystem::canonical(q.dir.path());
  const auto out = (root / "out.jsonl").string();
  const auto allowed = q.dir.write("allowed.allow", "jsonl:" + out + "\n");
  const auto run = q.replay("--execute --rate 0 --allowlist " + allowed + " --model-url " + server.base_url() +
                                " --to jsonl:" + out,
                            "umask 0 &&");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  struct stat info {};
  REQUIRE(::stat(out.c_str(), &info) == 0);
  CHECK((info.st_mode & 07777) == 0600);
}

TEST_CASE("replay: a target that fails stops the run (exit 3), the next run delivers without asking again",
          "[tools][replay]") {
  if (!std::filesystem::exists("/dev/full")) LLMDLQ_SKIP("/dev/full is missing: no target that fails");
  dlq q(llmdlq::test::cut_off_letters(2));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0)),
                          chat_completion(llmdlq::test::recovered_answer(1))});
  REQUIRE(server.listening());
  const auto root = std::filesystem::canonical(q.dir.path());
  const auto allowed = q.dir.write("allowed.allow", "jsonl:/dev/full\njsonl:" + (root / "out.jsonl").string() + "\n");
  const std::string execute = "--execute --rate 0 --allowlist " + allowed + " --model-url " + server.base_url();

  auto run = q.replay(execute + " --to jsonl:/dev/full");
  CHECK(run.exit_code == 3);
  CHECK(server.calls() == 1);

  run = q.replay(execute + " --json --to jsonl:" + (root / "out.jsonl").string());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("delivered") == 2);
  CHECK(summary.at("recovered") == 1);
  CHECK(summary.at("duplicates") == 1);  // recovered by the first run, written now
  CHECK(server.calls() == 2);
  std::istringstream lines(slurp(root / "out.jsonl"));
  std::multiset<std::string> keys;
  for (std::string line; std::getline(lines, line);) {
    keys.insert(std::string(boost::json::parse(line).at("idempotency_key").as_string()));
  }
  CHECK(keys == std::multiset<std::string>{"key-0", "key-1"});
  for (const auto& [key, status] : q.statuses()) CHECK(status == moderation_status::recovered);
}

TEST_CASE("replay: a target's line torn by a crash is cut off before anything is appended", "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(2));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0)),
                          chat_completion(llmdlq::test::recovered_answer(1))});
  REQUIRE(server.listening());
  const auto root = std::filesystem::canonical(q.dir.path());
  const auto out = (root / "out.jsonl").string();
  const auto allowed = q.dir.write("allowed.allow", "jsonl:" + out + "\n");
  const std::string earlier = R"({"idempotency_key":"earlier","source":"replay","output":{"total":1}})"
                              "\n";
  q.dir.write("out.jsonl", earlier + R"({"idempotency_key":"key-9","source":"rep)");
  REQUIRE(::chmod(out.c_str(), 0600) == 0);
  const auto run = q.replay("--execute --rate 0 --allowlist " + allowed + " --model-url " + server.base_url() +
                            " --to jsonl:" + out);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const std::string written = slurp(out);
  CHECK(written.starts_with(earlier));
  std::istringstream lines(written);
  std::multiset<std::string> keys;
  for (std::string line; std::getline(lines, line);) {
    keys.insert(std::string(boost::json::parse(line).at("idempotency_key").as_string()));  // every line parses
  }
  CHECK(keys == std::multiset<std::string>{"earlier", "key-0", "key-1"});
}

TEST_CASE("replay: letters purged while it runs are skipped and counted, and the run goes on to its end",
          "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(3));
  scripted_server server;
  // The first answer waits long enough for a purge on a loaded machine to end first.
  for (int i = 0; i < 3; ++i) {
    server.add(llmdlq::test::delayed(chat_completion(llmdlq::test::recovered_answer(i)), i == 0 ? 5s : 300ms));
  }
  REQUIRE(server.listening());
  const std::string store = "sqlite:" + q.db;
  const std::string url = server.base_url();
  const auto out = (q.dir.path() / "summary.json").string();
  const pid_t pid = llmdlq::test::start_llmdlq({"replay", store, "--schema", q.schema, "--execute", "--json", "--rate",
                                                "0", "--model-url", url},
                                               "/dev/null", out);
  REQUIRE(pid > 0);
  // While the first answer is on its way, a purge removes every letter.
  CHECK(llmdlq::test::eventually([&] { return server.calls() == 1; }));
  const auto purge = llmdlq::test::run_llmdlq("purge " + store + " --now 2100-01-01T00:00:00Z --operator ops");
  INFO(purge.err);
  REQUIRE(purge.exit_code == 0);
  CHECK(llmdlq::test::exit_code_of(pid) == 0);
  const auto summary = boost::json::parse(slurp(out)).as_object();
  CHECK(summary.at("finished") == true);
  CHECK(summary.at("purged") == 3);
  CHECK(summary.at("recovered") == 1);  // the call in flight: in the ledger, so no replay asks again
  CHECK(server.calls() == 1);           // the others were skipped, not asked
  CHECK(q.statuses().empty());
}

TEST_CASE("replay: --to is matched by the path it writes, not by how it is spelled", "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(1));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0))});
  REQUIRE(server.listening());
  std::filesystem::create_directory(q.dir.path() / "replays");
  std::filesystem::create_directory(q.dir.path() / "private");
  const auto root = std::filesystem::canonical(q.dir.path());
  const auto allowed = q.dir.write("allowed.allow", "jsonl:" + (root / "replays").string() + "/*\n");
  const std::string execute = "--execute --rate 0 --allowlist " + allowed + " --model-url " + server.base_url();

  // `..` leads out of the allowed folder, and so does a link inside it.
  auto run = q.replay(execute + " --to jsonl:" + (q.dir.path() / "replays/../private/out.jsonl").string());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("not on the allowlist") != std::string::npos);
  std::filesystem::create_directory_symlink(q.dir.path() / "private", q.dir.path() / "replays" / "link");
  run = q.replay(execute + " --to jsonl:" + (q.dir.path() / "replays/link/out.jsonl").string());
  CHECK(run.exit_code == 2);
  CHECK(server.calls() == 0);
  CHECK(std::filesystem::is_empty(q.dir.path() / "private"));

  // A relative path is matched as the absolute path it names.
  run = run_llmdlq_reading("replay sqlite:" + q.db + " --schema " + q.schema + " " + execute +
                               " --to jsonl:replays/./out.jsonl",
                           "/dev/null", "cd '" + q.dir.path().string() + "' &&");
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(server.calls() == 1);
  CHECK(std::filesystem::exists(q.dir.path() / "replays" / "out.jsonl"));
}

TEST_CASE("replay: --api-key-env sends the key only in the Authorization header, and never prints it",
          "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(2));
  scripted_server server({chat_completion(llmdlq::test::recovered_answer(0)),
                          llmdlq::test::api_error(401, "invalid_request_error", "invalid_api_key",
                                                  "Incorrect API key")});
  REQUIRE(server.listening());
  const std::string key = "sk-test-7f3a9c1e55d04b2a";
  const auto run = q.replay("--execute --rate 0 --api-key-env LLMDLQ_TEST_KEY --model-url " + server.base_url(),
                            "env LLMDLQ_TEST_KEY=" + key);
  INFO(run.err);
  CHECK(run.exit_code == 0);
  REQUIRE(server.calls() == 2);
  for (const auto& request : server.requests()) {
    CHECK(request.header("Authorization") == "Bearer " + key);
    CHECK(request.body.find(key) == std::string::npos);
    CHECK(request.path.find(key) == std::string::npos);
    for (const auto& [name, value] : request.headers) {
      if (name != "Authorization") CHECK(value.find(key) == std::string::npos);
    }
  }
  CHECK(run.out.find(key) == std::string::npos);
  CHECK(run.err.find(key) == std::string::npos);

  // A variable that holds nothing is a usage error, before any call.
  const auto empty = q.replay("--execute --api-key-env LLMDLQ_TEST_KEY --model-url " + server.base_url(),
                              "env LLMDLQ_TEST_KEY=");
  CHECK(empty.exit_code == 2);
  CHECK(server.calls() == 2);
}

TEST_CASE("replay: usage errors exit 2 and call nothing", "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(1));
  scripted_server server;
  REQUIRE(server.listening());
  const std::string before = slurp(q.db);
  const auto replay = [](const std::string& arguments) {
    return run_llmdlq_reading("replay " + arguments, "/dev/null");
  };
  auto run = replay("sqlite:" + q.db);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--schema") != std::string::npos);
  run = replay("sqlite:" + q.db + " --schema " + q.schema + " --execute");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--model-url") != std::string::npos);
  run = replay("redis:dlq --schema " + q.schema + " --model-url " + server.base_url());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("no store 'redis:dlq'") != std::string::npos);
  run = replay("sqlite:" + (q.dir.path() / "missing.db").string() + " --schema " + q.schema);
  CHECK(run.exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(q.dir.path() / "missing.db"));
  CHECK(replay("sqlite:" + q.db + " --schema " + q.schema + " --rate fast").exit_code == 2);
  CHECK(replay("sqlite:" + q.db + " --schema " + q.schema + " --relax everything").exit_code == 2);
  CHECK(replay("sqlite:" + q.db + " --schema " + q.schema + " --to kafka:out").exit_code == 2);
  CHECK(replay("sqlite:" + q.db + " --schema " + (q.dir.path() / "none.json").string()).exit_code == 2);
  CHECK(replay("--help").exit_code == 0);
  CHECK(server.calls() == 0);
  CHECK(slurp(q.db) == before);
}

TEST_CASE("replay: --state is refused for a sqlite: or postgres: DLQ, which keeps its replay state itself",
          "[tools][replay]") {
  dlq q(llmdlq::test::cut_off_letters(1));
  scripted_server server;
  REQUIRE(server.listening());
  const std::string before = slurp(q.db);
  const auto state = (q.dir.path() / "state.db").string();
  // A link to the DLQ itself, and a path nobody could use: refused alike, since neither would be used.
  const auto link = (q.dir.path() / "link.db").string();
  std::filesystem::create_symlink(q.db, link);
  for (const std::string& given : {state, link}) {
    for (const std::string run_kind : {std::string(), " --execute --rate 0 --model-url " + server.base_url()}) {
      CAPTURE(given, run_kind);
      const auto run = q.replay("--state sqlite:" + given + run_kind);
      INFO(run.err);
      CHECK(run.exit_code == 2);
      CHECK(run.err.find("--state is for a Kafka topic only: sqlite:" + q.db +
                         " keeps its replay state (attempts, ledger, lease) in its own database, so --state "
                         "would not be used (leave it out)") != std::string::npos);
      CHECK(run.out.empty());
    }
  }
  const auto postgres = run_llmdlq_reading("replay postgres:dbname=nowhere --schema " + q.schema +
                                               " --state sqlite:" + state,
                                           "/dev/null");
  CHECK(postgres.exit_code == 2);
  CHECK(postgres.err.find("--state is for a Kafka topic only: postgres keeps its replay state") != std::string::npos);
  CHECK(server.calls() == 0);
  CHECK_FALSE(std::filesystem::exists(state));
  CHECK(slurp(q.db) == before);
}

}  // namespace replay_command_test

#endif  // LLMDLQ_TEST_HTTPLIB
