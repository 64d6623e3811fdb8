// SPDX-License-Identifier: MIT
// `llmdlq process` and `llmdlq stats` as an operator runs them.
#include <unistd.h>

#include <boost/json/parse.hpp>

#include "catch.hpp"
#include "tools/run_tool.hpp"

using llmdlq::test::run_llmdlq;
using llmdlq::test::temp_dir;

namespace {

constexpr std::string_view schema_json = R"({
  "type": "object", "required": ["total", "date"],
  "properties": {"total": {"type": "number"}, "date": {"type": "string", "format": "date", "x-dlq-rule": "not-future"}}
})";

std::vector<boost::json::object> lines_of(const std::string& out) {
  std::vector<boost::json::object> lines;
  std::size_t at = 0;
  while (at < out.size()) {
    const auto end = out.find('\n', at);
    lines.push_back(boost::json::parse(out.substr(at, end - at)).as_object());
    at = end + 1;
  }
  return lines;
}

}  // namespace

TEST_CASE("process: one verdict line per input line, in order", "[tools][process]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const std::string input =
      R"({"id": 1, "response": "{\"total\": 3, \"date\": \"2026-01-02\"}"})" "\n"
      R"({"id": "b", "response": "```json\n{\"total\": 4, \"date\": \"2026-01-02\"}\n```"})" "\n"
      R"({"id": 3, "response": "{\"total\": \"4\", \"date\": \"2026-01-02\"}", "idempotency_key": "k3"})" "\n"
      R"({"id": 4, "response": "{\"total\": 5, \"date\": \"2027-01-02\"}"})" "\n"
      R"({"id": 5, "response": "{\"total\": 5, \"date\": \"2026-01-02\"}", "confidence": 0.3})" "\n"
      R"({"id": 6, "response": "{\"total\": 5, \"date\": \"2026-01-02\"}", "finish_reason": "length"})" "\n";
  const auto run = run_llmdlq("process --schema " + schema + " --format-assertion --now 2026-11-29T00:00:00Z "
                              "--min-confidence 0.5",
                              input);
  CHECK(run.exit_code == 0);
  CHECK(run.err.empty());
  const auto lines = lines_of(run.out);
  REQUIRE(lines.size() == 6);
  CHECK(lines[0].at("status") == "accepted");
  CHECK(lines[0].at("value") == boost::json::parse(R"({"total": 3, "date": "2026-01-02"})"));
  CHECK(lines[0].at("repairs").as_array().empty());
  CHECK(lines[1].at("id") == "b");
  CHECK(lines[1].at("repairs").as_array()[0].at("code") == "markdown_fence");
  CHECK(lines[1].at("repairs").as_array()[0].at("tier") == "lossless");
  CHECK(lines[2].at("status") == "dead_lettered");
  CHECK(lines[2].at("category") == "schema");
  CHECK(lines[2].at("triage") == "deterministic");
  CHECK(lines[2].at("dlq_id").as_string().size() == 36);
  CHECK(lines[2].at("errors").as_array()[0].at("instance_path") == "/total");
  CHECK(lines[3].at("category") == "semantic");
  CHECK(lines[4].at("category") == "low_confidence");
  CHECK(lines[5].at("category") == "truncated");
}

TEST_CASE("process: dead letters land in the sink; stats counts them", "[tools][process][stats]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const std::string db = (dir.path() / "dlq.db").string();
  const std::string input = R"({"id": 1, "response": "nope"})" "\n" R"({"id": 2, "response": ""})" "\n"
                            R"({"id": 3, "response": "{\"total\": 1, \"date\": \"2026-01-01\"}"})" "\n";
  auto run = run_llmdlq("process --schema " + schema + " --code-prefix ocr --sink sqlite:" + db, input);
  CHECK(run.exit_code == 0);
  const auto lines = lines_of(run.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].at("code") == "ocr_structural_broken_json");

  run = run_llmdlq("stats --json sqlite:" + db);
  CHECK(run.exit_code == 0);
  const auto stats = boost::json::parse(run.out);
  CHECK(stats.at("total") == 2);
  CHECK(stats.at("category").at("syntax") == 1);
  CHECK(stats.at("category").at("empty") == 1);
  CHECK(stats.at("status").at("pending") == 2);
  CHECK(stats.at("triage").at("transient") == 2);

  run = run_llmdlq("stats sqlite:" + db);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("2 dead letters") != std::string::npos);
  CHECK(run.out.find("by status:") != std::string::npos);

  const auto jsonl = (dir.path() / "dlq.jsonl").string();
  run = run_llmdlq("process --schema " + schema + " --sink jsonl:" + jsonl, input);
  CHECK(run.exit_code == 0);
  CHECK(llmdlq::test::slurp(jsonl).find("\"category\":\"syntax\"") != std::string::npos);
  // What the tool stored is what the published envelope schema describes.
  const std::string envelope_schema = std::string(LLMDLQ_SOURCE_DIR) + "/schemas/envelope-v1.json";
  run = run_llmdlq("validate --format-assertion --jsonl --schema " + envelope_schema, llmdlq::test::slurp(jsonl));
  CHECK(run.exit_code == 0);
  CHECK(run.out == "{\"valid\":true}\n{\"valid\":true}\n");
}

TEST_CASE("process: a malformed input line gets its own line and the run goes on", "[tools][process]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto run = run_llmdlq("process --schema " + schema,
                              "garbage\n" R"({"id": 7})" "\n" R"({"id": 8, "response": "{\"total\": 1, \"date\": \"2026-01-01\"}"})" "\n");
  CHECK(run.exit_code == 2);
  const auto lines = lines_of(run.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].at("line") == 1);
  CHECK(lines[0].at("status") == "invalid_input");
  CHECK(lines[1].at("status") == "invalid_input");
  CHECK(lines[2].at("status") == "accepted");
}

TEST_CASE("process: a failing sink makes the line a retry and the exit status 3", "[tools][process]") {
  if (::access("/dev/full", W_OK) != 0) {
    WARN("/dev/full is not writable here: skipped");
    return;
  }
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto run = run_llmdlq("process --schema " + schema + " --sink jsonl:/dev/full",
                              R"({"id": 1, "response": "not json"})" "\n"
                              R"({"id": 2, "response": "{\"total\": 1, \"date\": \"2026-01-01\"}"})" "\n");
  CHECK(run.exit_code == 3);
  const auto lines = lines_of(run.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].at("status") == "retry");
  CHECK(lines[0].at("error").as_string().find("No space left on device") != boost::json::string::npos);
  CHECK(lines[1].at("status") == "accepted");
}

TEST_CASE("process: --repair off is strict", "[tools][process]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const auto run = run_llmdlq("process --repair off --schema " + schema,
                              R"({"id": 1, "response": "```json\n{\"total\": 4, \"date\": \"2026-01-02\"}\n```"})" "\n");
  const auto lines = lines_of(run.out);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].at("category") == "syntax");
}

TEST_CASE("process and stats: usage errors exit 2", "[tools][process][stats]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  CHECK(run_llmdlq("process").exit_code == 2);
  CHECK(run_llmdlq("process --schema " + schema + " --repair sometimes").exit_code == 2);
  CHECK(run_llmdlq("process --schema " + schema + " --now yesterday").exit_code == 2);
  CHECK(run_llmdlq("process --schema " + schema + " --min-confidence high").exit_code == 2);
  CHECK(run_llmdlq("process --schema " + schema + " --sink kafka:x").exit_code == 2);
  CHECK(run_llmdlq("process --schema " + schema + " --bogus").exit_code == 2);
  CHECK(run_llmdlq("process --schema " + dir.write("bad.json", R"({"x-dlq-rule": "someday"})")).exit_code == 2);
  CHECK(run_llmdlq("stats").exit_code == 2);
  CHECK(run_llmdlq("stats sqlite:" + (dir.path() / "missing.db").string()).exit_code == 2);
  CHECK(run_llmdlq("process --help").exit_code == 0);
}
