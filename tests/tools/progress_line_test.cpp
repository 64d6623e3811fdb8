// SPDX-License-Identifier: MIT
// The progress of `replay`, `deliver` and `purge` on a terminal: the
// `llmdlq` binary run under a pseudo-terminal redraws one line in place and
// ends on the final counts; through a pipe, or with --json, stderr holds no
// progress at all.
#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "progress_line.hpp"
#include "support/expiring_letters.hpp"
#include "support/replay_letters.hpp"
#include "tools/run_tool.hpp"

namespace progress_line_test {

using llmdlq::test::run_llmdlq;
using llmdlq::test::temp_dir;
using namespace std::chrono_literals;

struct terminal_run {
  int exit_code = -1;
  std::string terminal;  // what the command wrote to its terminal: standard error
};

// Runs `llmdlq <arguments...>` with standard error on a pseudo-terminal and
// standard output in `out`, and reads the terminal until the command ends.
terminal_run run_on_terminal(const std::vector<std::string>& arguments, const std::string& out) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int output = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int input = ::open("/dev/null", O_RDONLY);
    ::dup2(output, STDOUT_FILENO);
    ::dup2(input, STDIN_FILENO);
    std::vector<char*> argv{const_cast<char*>("llmdlq")};
    for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    ::execv(LLMDLQ_TOOL, argv.data());
    ::_exit(127);
  }
  terminal_run run;
  char buffer[4096];
  for (;;) {
    const auto n = ::read(master, buffer, sizeof buffer);
    if (n > 0) {
      run.terminal.append(buffer, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO: the command closed its side
    }
  }
  ::close(master);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// A SQLite DLQ holding `letters`, with today's schema beside it.
struct dlq {
  temp_dir dir;
  std::string schema = dir.write("schema.json", llmdlq::test::replay_schema);
  std::string db = (dir.path() / "dlq.db").string();
  std::string store = "sqlite:" + db;
  std::string out = (dir.path() / "stdout").string();

  explicit dlq(const std::vector<llmdlq::envelope>& letters) {
    auto opened = llmdlq::sqlite_store::open(db);
    REQUIRE(opened.has_value());
    for (const auto& letter : letters) REQUIRE(opened->publish(letter).has_value());
  }
};

}  // namespace progress_line_test

using namespace progress_line_test;

TEST_CASE("progress_text says done of selected and the rate and the tokens against the budget and the time left",
          "[tools][progress]") {
  using llmdlq::cli::progress_text;
  CHECK(progress_text("replay", "letters", {.done = 0, .selected = 40, .tokens = {}, .token_budget = {}}, 0s) ==
        "replay: 0/40 letters");
  CHECK(progress_text("replay", "letters", {.done = 10, .selected = 40, .tokens = 1200, .token_budget = 50000}, 5s) ==
        "replay: 10/40 letters, 2.0/s, 1200/50000 tokens, 15s left");
  CHECK(progress_text("redrive", "letters", {.done = 7, .selected = {}, .tokens = {}, .token_budget = {}}, 2s) ==
        "redrive: 7/? letters, 3.5/s");
  CHECK(progress_text("replay", "letters", {.done = 1, .selected = 400, .tokens = 90, .token_budget = {}}, 1s) ==
        "replay: 1/400 letters, 1.0/s, 90 tokens, 6m39s left");
  // Letters made during the run: never fewer selected than done.
  CHECK(progress_text("replay", "letters", {.done = 5, .selected = 3, .tokens = {}, .token_budget = {}}, 1s) ==
        "replay: 5/5 letters, 5.0/s");
}

TEST_CASE("replay redraws one progress line on a terminal and ends on its final counts", "[tools][progress]") {
  dlq d(llmdlq::test::cut_off_letters(3));
  const auto run = run_on_terminal({"replay", d.store, "--schema", d.schema}, d.out);
  INFO(run.terminal);
  CHECK(run.exit_code == 0);
  CHECK(run.terminal.find("\rreplay: 0/3 letters") != std::string::npos);
  CHECK(run.terminal.find("\rreplay: 3/3 letters") != std::string::npos);
  CHECK(run.terminal.find("\x1b[K") != std::string::npos);
  CHECK(run.terminal.find("tokens") == std::string::npos);  // a dry run spends none
  CHECK(run.terminal.back() == '\n');
  CHECK(llmdlq::test::slurp(d.out).find("3 letters read") != std::string::npos);
}

TEST_CASE("no progress reaches stderr when it is no terminal or with --json", "[tools][progress]") {
  dlq d(llmdlq::test::cut_off_letters(3));
  const auto piped = run_llmdlq("replay " + d.store + " --schema " + d.schema);
  CHECK(piped.exit_code == 0);
  CHECK(piped.err.empty());
  const auto json = run_on_terminal({"replay", d.store, "--schema", d.schema, "--json"}, d.out);
  CHECK(json.exit_code == 0);
  CHECK(json.terminal.empty());
  const auto purged = run_on_terminal({"purge", d.store, "--dry-run", "--json"}, d.out);
  CHECK(purged.exit_code == 0);
  CHECK(purged.terminal.empty());
}

TEST_CASE("purge and deliver show their progress on a terminal", "[tools][progress]") {
  const llmdlq::test::expiring_letters letters;
  dlq d(letters.all());
  const auto purged = run_on_terminal({"purge", d.store, "--now", "2026-06-01T00:00:00.000Z"}, d.out);
  INFO(purged.terminal);
  CHECK(purged.exit_code == 0);
  CHECK(purged.terminal.find("\rpurge: 0/3 letters") != std::string::npos);
  CHECK(purged.terminal.find("\rpurge: 3/3 letters") != std::string::npos);

  // A JSON Lines DLQ is not counted beforehand: its count is known once it is read.
  const auto file = (d.dir.path() / "dlq.jsonl").string();
  REQUIRE(run_llmdlq("process --schema " + d.schema + " --sink jsonl:" + file,
                     "{\"response\":\"no\"}\n{\"response\":\"not\"}\n{\"response\":\"never\"}\n")
              .exit_code == 0);
  const auto lines = run_on_terminal({"purge", "jsonl:" + file, "--now", "2100-01-01T00:00:00.000Z"}, d.out);
  INFO(lines.terminal);
  CHECK(lines.exit_code == 0);
  CHECK(lines.terminal.find("\rpurge: 3/3 letters") != std::string::npos);

  // A resolved letter's correction goes downstream.
  const auto id = llmdlq::test::lines_of(run_llmdlq("list " + d.store + " --json").out).at(0).at("dlq_id");
  const std::string dlq_id(id.as_string());
  const auto corrected = d.dir.write("corrected.json", R"({"name": "x", "total": 1})");
  REQUIRE(run_llmdlq("claim " + d.store + " " + dlq_id).exit_code == 0);
  REQUIRE(run_llmdlq("resolve " + d.store + " " + dlq_id + " --schema " + d.schema + " --corrected " + corrected)
              .exit_code == 0);
  const auto target = (std::filesystem::canonical(d.dir.path()) / "out.jsonl").string();
  const auto allowlist = d.dir.write("targets.allow", "jsonl:" + target + "\n");
  const auto delivered = run_on_terminal({"deliver", d.store, "--to", "jsonl:" + target, "--allowlist", allowlist},
                                         d.out);
  INFO(delivered.terminal);
  CHECK(delivered.exit_code == 0);
  CHECK(delivered.terminal.find("\rdeliver: 1/1 letters") != std::string::npos);
}
