// SPDX-License-Identifier: MIT
// `llmdlq eval` on the demo's DLQ (the OCR batch whose answers copy the
// decimal comma) against the stand-in model server, whose answers to the
// demo's fixed prompt fix nine letters of twelve and break two controls of
// six: the matrix, the counts, the thresholds' exit status, the per-letter
// lines, and a DLQ left byte for byte as it was.
#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_MODEL_SERVER

TEST_CASE("eval: the demo's DLQ against the stand-in model server", "[tools][eval]") {
  LLMDLQ_SKIP("the examples' local_model_server is not built (cpp-httplib, LLMDLQ_BUILD_EXAMPLES)");
}

#else

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <boost/json.hpp>

#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

namespace {

const std::string data_dir = std::string(LLMDLQ_SOURCE_DIR) + "/examples/data";

// The stand-in model server, answering by --answers FILE, for as long as it lives.
class stand_in_server {
 public:
  explicit stand_in_server(const std::string& answers) {
    int out[2];
    REQUIRE(::pipe(out) == 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      ::close(out[0]);
      ::execl(LLMDLQ_MODEL_SERVER, "local_model_server", "--answers", answers.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    read_end_ = out[0];
    std::string line;
    char c = 0;
    while (::read(read_end_, &c, 1) == 1 && c != '\n') line += c;
    const std::string prefix = "listening on ";
    REQUIRE(line.starts_with(prefix));
    url_ = line.substr(prefix.size());
  }
  stand_in_server(const stand_in_server&) = delete;
  stand_in_server& operator=(const stand_in_server&) = delete;
  ~stand_in_server() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    ::close(read_end_);
  }
  [[nodiscard]] const std::string& url() const { return url_; }

 private:
  pid_t pid_ = -1;
  int read_end_ = -1;
  std::string url_;
};

// The demo's DLQ: its OCR batch, and one letter that stores no input.
std::string demo_dlq(const llmdlq::test::temp_dir& dir) {
  const std::string db = (dir.path() / "receipts-dlq.db").string();
  const std::string process = "process --schema '" + data_dir +
                              "/receipt.schema.json' --format-assertion --now 2026-11-30T09:00:00Z --sink 'sqlite:" +
                              db + "' --schema-version receipt-v1 --prompt-version extract-v3 --model receipts-local";
  const auto batch = llmdlq::test::run_llmdlq_reading(process, data_dir + "/ocr_inputs.jsonl");
  REQUIRE(batch.exit_code == 0);
  const auto no_input = llmdlq::test::run_llmdlq(process, R"({"id": "scan-9", "response": "{\"total\": \"1,00\"}"})"
                                                          "\n");
  REQUIRE(no_input.exit_code == 0);
  return db;
}

std::string eval_line(const std::string& db, const std::string& url, const std::string& more) {
  return "eval 'sqlite:" + db + "' --model-url " + url + " --model receipts-candidate --prompt '" + data_dir +
         "/eval_prompt.txt' --schema '" + data_dir + "/receipt.schema.json' --format-assertion --control '" + data_dir +
         "/eval_controls.jsonl' --rate 0 " + more;
}

// The DLQ's database file and its write-ahead log (when there is one), with their bytes.
std::map<std::string, std::string> dlq_files(const std::string& db) {
  std::map<std::string, std::string> files{{"db", llmdlq::test::slurp(db)}};
  if (std::filesystem::exists(db + "-wal")) files["wal"] = llmdlq::test::slurp(db + "-wal");
  return files;
}

}  // namespace

TEST_CASE("eval: the fixed prompt fixes nine letters and breaks two controls", "[tools][eval]") {
  llmdlq::test::temp_dir dir;
  const std::string db = demo_dlq(dir);
  const stand_in_server server(data_dir + "/eval_answers.jsonl");
  const std::string results = (dir.path() / "results.jsonl").string();
  const std::string page = (dir.path() / "eval.html").string();
  const auto run = llmdlq::test::run_llmdlq(eval_line(db, server.url(),
                                                      "--concurrency 2 --json --results '" + results + "' --html '" +
                                                          page + "' --min-fixed 9 --max-regressed 2"));
  INFO(run.err);
  CHECK(run.exit_code == 0);
  const auto summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("letters") == 13);
  CHECK(summary.at("evaluated") == 12);
  CHECK(summary.at("fixed") == 9);
  CHECK(summary.at("not_evaluable") == 1);
  CHECK(summary.at("controls_evaluated") == 6);
  CHECK(summary.at("regressed") == 2);
  CHECK(summary.at("matrix") == boost::json::parse(R"({"schema": {"accepted": 9, "schema": 3}})"));
  CHECK(summary.at("regressions") == boost::json::parse(R"({"semantic": 2})"));
  CHECK(summary.at("calls") == 18);
  CHECK(summary.at("tokens").at("total").as_int64() > 0);
  const auto& fixed_interval = summary.at("fixed_interval").as_array();
  CHECK(fixed_interval[0].as_double() == Approx(0.4677).margin(1e-4));
  CHECK(fixed_interval[1].as_double() == Approx(0.9111).margin(1e-4));

  SECTION("one JSON line per letter and control") {
    std::map<std::string, int> after;
    std::set<std::string> letters;
    for (const auto& line : llmdlq::test::lines_of(llmdlq::test::slurp(results))) {
      const auto& status = line.at("after").at("status").as_string();
      if (line.contains("dlq_id")) {
        letters.insert(std::string(line.at("dlq_id").as_string()));
        CHECK(line.at("before").at("category") == "schema");
        if (status == "not_evaluable") CHECK(line.at("after").at("detail") == "the letter stores no original input");
      } else {
        CHECK(line.at("before").at("status") == "accepted");
        if (status == "failed") CHECK(line.at("after").at("category") == "semantic");
      }
      // An answer found dead is cut there, before the server reports its usage.
      if (status == "accepted") CHECK(line.at("tokens").at("total").as_int64() > 0);
      CHECK(line.contains("latency_ms"));
      ++after[std::string(line.contains("dlq_id") ? "letter " : "control ") + std::string(status)];
    }
    CHECK(letters.size() == 13);
    CHECK(after == std::map<std::string, int>{{"letter accepted", 9},
                                              {"letter failed", 3},
                                              {"letter not_evaluable", 1},
                                              {"control accepted", 4},
                                              {"control failed", 2}});
  }
  SECTION("a page with the matrix, the counts and the cost") {
    const std::string html = llmdlq::test::slurp(page);
    CHECK(html.find("Before → after by category") != std::string::npos);
    CHECK(html.find("<th>fixed letters</th><td>9</td><td>12</td>") != std::string::npos);
    CHECK(html.find("<th>regressed controls</th><td>2</td><td>6</td>") != std::string::npos);
    CHECK(html.find("<script") == std::string::npos);
  }
}

TEST_CASE("eval: a threshold that does not hold fails the run and the DLQ stays byte for byte as it was",
          "[tools][eval]") {
  llmdlq::test::temp_dir dir;
  const std::string db = demo_dlq(dir);
  const stand_in_server server(data_dir + "/eval_answers.jsonl");
  const std::string written = llmdlq::test::slurp(db);
  const auto first = llmdlq::test::run_llmdlq(eval_line(db, server.url(), "--min-fixed 75%"));
  INFO(first.err);
  CHECK(first.exit_code == 0);
  const auto after_first = dlq_files(db);
  CHECK(after_first.at("db") == written);
  CHECK(first.out.find("fixed 9 of 12 (75.0 %, 95 % CI 46.8–91.1 %)") != std::string::npos);
  CHECK(first.out.find("regressed 2 of 6 controls") != std::string::npos);
  const auto second = llmdlq::test::run_llmdlq(eval_line(db, server.url(), "--min-fixed 80% --max-regressed 1"));
  CHECK(second.exit_code == 1);
  CHECK(second.out.find("--min-fixed 80%: does not hold") != std::string::npos);
  CHECK(second.out.find("--max-regressed 1: does not hold") != std::string::npos);
  CHECK(dlq_files(db) == after_first);
}

TEST_CASE("eval: a sample is the same for the same seed", "[tools][eval]") {
  llmdlq::test::temp_dir dir;
  const std::string db = demo_dlq(dir);
  const stand_in_server server(data_dir + "/eval_answers.jsonl");
  const auto sample = [&](const std::string& name, const std::string& seed) {
    const std::string results = (dir.path() / name).string();
    const auto run = llmdlq::test::run_llmdlq(
        eval_line(db, server.url(), "--sample 5 --seed " + seed + " --json --results '" + results + "'"));
    CHECK(run.exit_code == 0);
    std::set<std::string> ids;
    for (const auto& line : llmdlq::test::lines_of(llmdlq::test::slurp(results))) {
      if (line.contains("dlq_id")) ids.insert(std::string(line.at("dlq_id").as_string()));
    }
    return ids;
  };
  const auto first = sample("a.jsonl", "7");
  CHECK(first.size() == 5);
  CHECK(sample("b.jsonl", "7") == first);
}

TEST_CASE("eval: a redacted input is evaluable only with the keys that open its sealed copy", "[tools][eval]") {
  llmdlq::test::temp_dir dir;
  const std::string keys = (dir.path() / "keys").string();
  REQUIRE(llmdlq::test::run_llmdlq("keys generate k1 --keys '" + keys + "'").exit_code == 0);
  const std::string db = (dir.path() / "sealed.db").string();
  const auto stored = llmdlq::test::run_llmdlq(
      "process --schema '" + data_dir + "/receipt.schema.json' --sink 'sqlite:" + db + "' --keys '" + keys + "'",
      R"({"id": "s1", "input": "Receipt for ann@example.com TOTAAL EUR 3,00", "response": "{\"total\": \"3,00\"}"})"
      "\n");
  REQUIRE(stored.exit_code == 0);
  const stand_in_server server(data_dir + "/eval_answers.jsonl");
  const auto after = [&](const std::string& more) {
    const std::string results = (dir.path() / "results.jsonl").string();
    const auto run = llmdlq::test::run_llmdlq(eval_line(db, server.url(), "--results '" + results + "' " + more));
    CHECK(run.exit_code == 0);
    const auto lines = llmdlq::test::lines_of(llmdlq::test::slurp(results));
    REQUIRE(lines.size() == 7);  // the letter, then the six controls
    return lines.front().at("after").as_object();
  };
  const auto without = after("");
  CHECK(without.at("status") == "not_evaluable");
  CHECK(without.at("detail") == "its original input is redacted, and its sealed copy needs the keys");
  CHECK(after("--keys '" + keys + "'").at("status") == "failed");  // asked: the stand-in knows no answer to it
}

TEST_CASE("eval: calls that get no answer make the counts incomplete", "[tools][eval]") {
  llmdlq::test::temp_dir dir;
  const std::string db = demo_dlq(dir);
  const auto run = llmdlq::test::run_llmdlq(eval_line(db, "http://127.0.0.1:1/v1", "--timeout 5 --json"));
  CHECK(run.exit_code == 3);
  const auto summary = boost::json::parse(run.out).as_object();
  CHECK(summary.at("call_failed") == 18);
  CHECK(summary.at("evaluated") == 0);
}

#endif
