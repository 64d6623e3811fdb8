// SPDX-License-Identifier: MIT
// The operator commands as a shell user runs them: list (filters, pages and
// cursors), show (the failing places marked), claim/resolve/discard/requeue
// (the log, refused corrections, lost races), top.
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include <boost/json.hpp>
#include <llmdlq/envelope.hpp>
#include <llmdlq/llm/resolution_delivery.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "run_tool.hpp"
#include "support/replay_letters.hpp"

namespace operator_commands_test {

using llmdlq::test::run_llmdlq;
using llmdlq::test::temp_dir;

namespace {

constexpr std::string_view schema_text =
    R"({"type": "object", "required": ["total", "email"], "properties": {"total": {"type": "number"},)"
    R"( "email": {"type": "string", "format": "email"},)"
    R"( "items": {"type": "array", "items": {"type": "object", "properties": {"qty": {"type": "integer"}}}}}})";

// The raw responses the DLQ holds, by what is wrong with them.
constexpr std::string_view schema_failure = R"({"total": "12", "email": "a@b.c", "items": [{"qty": 1}, {"qty": "x"}]})";
constexpr std::string_view syntax_failure = R"({"total": 3 "email": "x@y.z"})";

std::string response_line(int id, std::string_view response) {
  return boost::json::serialize(boost::json::object{{"id", id}, {"response", response}}) + "\n";
}

struct filled_dlq {
  temp_dir dir;
  std::string schema = dir.write("schema.json", schema_text);
  std::string db = (dir.path() / "dlq.db").string();
  std::string store = "sqlite:" + db;

  explicit filled_dlq(const std::string& input) {
    const auto run = run_llmdlq("process --repair off --schema " + schema + " --sink " + store, input);
    REQUIRE(run.exit_code == 0);
  }
};

std::vector<boost::json::object> json_lines(const std::string& text) {
  std::vector<boost::json::object> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(boost::json::parse(line).as_object());
  return out;
}

std::string id_of_category(const filled_dlq& dlq, const std::string& category) {
  const auto run = run_llmdlq("list " + dlq.store + " --category " + category + " --json");
  REQUIRE(run.exit_code == 0);
  const auto rows = json_lines(run.out);
  REQUIRE(rows.size() == 1);
  return std::string(rows[0].at("dlq_id").as_string());
}

std::string text(const boost::json::value& v) { return std::string(v.as_string()); }

}  // namespace

TEST_CASE("list: filters, JSON Lines and pages that follow the printed cursor", "[tools][operator]") {
  std::string input;
  for (int i = 0; i < 7; ++i) input += response_line(i, "[" + std::to_string(i));  // truncated
  input += response_line(100, schema_failure) + response_line(101, syntax_failure);
  filled_dlq dlq(input);

  auto run = run_llmdlq("list " + dlq.store + " --json");
  REQUIRE(run.exit_code == 0);
  auto rows = json_lines(run.out);
  REQUIRE(rows.size() == 9);
  for (const auto& row : rows) {
    CHECK(text(row.at("status")) == "pending");
    CHECK(row.at("age_seconds").as_int64() >= 0);
  }
  run = run_llmdlq("list " + dlq.store + " --json --category schema --category syntax");
  rows = json_lines(run.out);
  std::set<std::string> categories;
  for (const auto& row : rows) categories.insert(text(row.at("category")));
  CHECK(categories == std::set<std::string>{"schema", "syntax"});
  CHECK(rows.size() == 2);
  CHECK(json_lines(run_llmdlq("list " + dlq.store + " --json --triage deterministic").out).size() == 1);
  CHECK(run_llmdlq("list " + dlq.store + " --json --since 2h --status claimed").out.empty());
  CHECK(run_llmdlq("list " + dlq.store + " --json --until 1h").out.empty());

  // Pages of 4 through the JSON form's {"next": ...} line: every record once.
  std::vector<std::string> seen;
  std::string after;
  for (int page = 0; page < 5; ++page) {
    run = run_llmdlq("list " + dlq.store + " --json --limit 4" + (after.empty() ? "" : " --after '" + after + "'"));
    REQUIRE(run.exit_code == 0);
    after.clear();
    for (const auto& row : json_lines(run.out)) {
      if (row.contains("next")) {
        after = text(row.at("next"));
      } else {
        seen.push_back(text(row.at("dlq_id")));
      }
    }
    if (after.empty()) break;
  }
  CHECK(seen.size() == 9);
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 9);

  // The table form: a header and a row per record; the cursor goes to stderr.
  run = run_llmdlq("list " + dlq.store + " --limit 4");
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("ID") == 0);
  CHECK(std::count(run.out.begin(), run.out.end(), '\n') == 5);
  CHECK(run.out.find("\x1b[") == std::string::npos);  // no colour off a terminal
  CHECK(run.err.find("next page: --after ") != std::string::npos);

  CHECK(run_llmdlq("list " + dlq.store + " --status nonsense").exit_code == 2);
  CHECK(run_llmdlq("list " + dlq.store + " --after nonsense").exit_code == 2);
  CHECK(run_llmdlq("list " + dlq.store + " --since yesterday").exit_code == 2);
  CHECK(run_llmdlq("list sqlite:" + (dlq.dir.path() / "none.db").string()).exit_code == 2);
  CHECK(run_llmdlq("list --help").exit_code == 0);
}

TEST_CASE("show: the raw response with the places its failure points at marked", "[tools][operator]") {
  filled_dlq dlq(response_line(1, schema_failure) + response_line(2, syntax_failure));

  const std::string schema_id = id_of_category(dlq, "schema");
  auto run = run_llmdlq("show " + dlq.store + " " + schema_id);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find(R"({"total": >>[1]"12"<<, "email": "a@b.c", "items": [{"qty": 1}, {"qty": >>[2]"x"<<}]})") !=
        std::string::npos);
  CHECK(run.out.find("[1] bytes 10..14: /total: ") != std::string::npos);
  CHECK(run.out.find("[2] bytes 64..67: /items/1/qty: ") != std::string::npos);
  CHECK(run.out.find("operator log") != std::string::npos);

  run = run_llmdlq("show " + dlq.store + " " + schema_id + " --json");
  REQUIRE(run.exit_code == 0);
  const auto shown = boost::json::parse(run.out).as_object();
  CHECK(text(shown.at("dlq_id")) == schema_id);
  const auto& spans = shown.at("error_spans").as_array();
  REQUIRE(spans.size() == 2);
  const std::string raw(schema_failure);
  const auto span_text = [&](const boost::json::value& s) {
    const auto begin = s.at("begin").to_number<std::size_t>();
    return raw.substr(begin, s.at("end").to_number<std::size_t>() - begin);
  };
  CHECK(span_text(spans[0]) == "\"12\"");
  CHECK(text(spans[0].at("pointer")) == "/total");
  CHECK(span_text(spans[1]) == "\"x\"");
  CHECK(text(spans[1].at("pointer")) == "/items/1/qty");
  CHECK(text(shown.at("envelope").at("raw_response").at("text")) == raw);

  run = run_llmdlq("show " + dlq.store + " " + id_of_category(dlq, "syntax"));
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find(R"({"total": 3 >>[1]"email"<<: "x@y.z"})") != std::string::npos);

  CHECK(run_llmdlq("show " + dlq.store + " no-such-id").exit_code == 5);
  CHECK(run_llmdlq("show " + dlq.store).exit_code == 2);
}

TEST_CASE("show: a model without a provider by its name alone, and the attempts the way the history counts them",
          "[tools][operator]") {
  temp_dir dir;
  const std::string db = (dir.path() / "dlq.db").string();
  auto letter = llmdlq::test::cut_off_letters(1).front();
  letter.model.name = "cv-local";
  letter.tool_call = llmdlq::tool_call_reference{"record_\x1b[2Jreceipt", "call_7", 1};
  const auto at = letter.created_at;
  for (int i = 0; i < 3; ++i) {
    letter.attempts.history.push_back(
        {.strategy = "repair_prompt", .outcome = "call_failed", .at = at, .model = "cv-local"});
  }
  letter.attempts.history.push_back({.strategy = "local_repair", .outcome = "truncated", .at = at});
  letter.attempts.history.push_back(
      {.strategy = "repair_prompt", .outcome = "truncated", .tokens = 120, .at = at, .model = "cv-local"});
  auto other = llmdlq::test::cut_off_letters(2).back();
  other.model.provider = "ollama";
  other.model.name = "cv-local";
  {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    REQUIRE(store->publish(letter).has_value());
    REQUIRE(store->publish(other).has_value());
  }
  auto run = run_llmdlq("show sqlite:" + db + " " + letter.dlq_id);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("\n  model           cv-local\n") != std::string::npos);
  CHECK(run.out.find("/cv-local") == std::string::npos);
  // The model's tool name, its escape shown as such.
  CHECK(run.out.find("\n  tool call       record_\\u{001B}[2Jreceipt, id call_7, call 1 of the reply\n") !=
        std::string::npos);
  CHECK(run.out.find('\x1b') == std::string::npos);
  CHECK(run.out.find("\nattempts: 1 of 2 automated attempts made; not counted: 3 calls without an answer, "
                     "1 local step\n") != std::string::npos);
  CHECK(run.out.find("call_failed  tokens 0, model cv-local (not counted: no answer)\n") != std::string::npos);
  CHECK(run.out.find("truncated    tokens 0 (not counted: local step)\n") != std::string::npos);
  CHECK(run.out.find("truncated    tokens 120, model cv-local\n") != std::string::npos);

  run = run_llmdlq("show sqlite:" + db + " " + other.dlq_id);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("\n  model           ollama/cv-local\n") != std::string::npos);
  CHECK(run.out.find("\nattempts: 0 of 2 automated attempts made\n  (no recovery attempt yet)\n") != std::string::npos);
}

TEST_CASE("resolve: a correction is checked against the schema before the store sees it", "[tools][operator]") {
  filled_dlq dlq(response_line(1, syntax_failure));
  const std::string id = id_of_category(dlq, "syntax");
  const std::string target = dlq.store + " " + id;
  const std::string with_schema = " --operator ann --schema " + dlq.schema;

  // Not claimed yet: resolving is a lost race, with its own exit code.
  const auto good = dlq.dir.write("good.json", R"({"total": 3, "email": "x@y.z"})");
  auto run = run_llmdlq("resolve " + target + with_schema + " --corrected " + good);
  CHECK(run.exit_code == 4);
  CHECK(run.err.find("it is pending") != std::string::npos);

  REQUIRE(run_llmdlq("claim " + target + " --operator ann --note 'mine now'").exit_code == 0);
  run = run_llmdlq("resolve " + target + with_schema + " --corrected " +
                   dlq.dir.write("broken.json", R"({"total": 3 "email": "x@y.z"})"));
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("(syntax)") != std::string::npos);
  run = run_llmdlq("resolve " + target + with_schema + " --json --corrected " +
                   dlq.dir.write("bad.json", R"({"total": "3", "email": "not an address"})"));
  CHECK(run.exit_code == 1);
  const auto refused = boost::json::parse(run.out).as_object();
  std::set<std::string> pointers;
  for (const auto& e : refused.at("errors").as_array()) pointers.insert(text(e.at("instance_path")));
  CHECK(pointers == std::set<std::string>{"/total", "/email"});
  // Refusals changed nothing.
  CHECK(text(boost::json::parse(run_llmdlq("show " + target + " --json").out).at("status")) == "claimed");

  run = run_llmdlq("resolve " + target + with_schema + " --json --corrected -", R"({"total": 3, "email": "x@y.z"})");
  REQUIRE(run.exit_code == 0);
  CHECK(text(boost::json::parse(run.out).at("status")) == "resolved");

  const auto shown = boost::json::parse(run_llmdlq("show " + target + " --json").out).as_object();
  CHECK(shown.at("resolution") == boost::json::parse(R"({"total": 3, "email": "x@y.z"})"));
  const auto& log = shown.at("operator_log").as_array();
  REQUIRE(log.size() == 2);
  CHECK(text(log[0].at("action")) == "claim");
  CHECK(text(log[0].at("operator")) == "ann");
  CHECK(text(log[0].at("note")) == "mine now");
  CHECK(text(log[1].at("action")) == "resolve");
  CHECK(text(log[1].at("to")) == "resolved");

  CHECK(run_llmdlq("resolve " + target + " --operator ann --corrected " + good).exit_code == 2);  // no --schema
  CHECK(run_llmdlq("claim " + dlq.store + " no-such-id --operator ann").exit_code == 5);
}

TEST_CASE("claim: of two operators claiming at once, one wins and the other is told who holds it",
          "[tools][operator]") {
  std::string input;
  for (int i = 0; i < 6; ++i) input += response_line(i, "[" + std::to_string(i));
  filled_dlq dlq(input);
  std::vector<std::string> ids;
  for (const auto& row : json_lines(run_llmdlq("list " + dlq.store + " --json").out)) ids.push_back(text(row.at("dlq_id")));
  REQUIRE(ids.size() == 6);
  for (const auto& id : ids) {
    const auto dir = dlq.dir.path().string();
    const std::string claim = std::string("'") + LLMDLQ_TOOL + "' claim " + dlq.store + " " + id;
    const std::string script = "(" + claim + " --operator ann 2>'" + dir + "/ann.err'; echo $? >'" + dir +
                               "/ann.rc') & (" + claim + " --operator bob 2>'" + dir + "/bob.err'; echo $? >'" + dir +
                               "/bob.rc') & wait";
    const auto script_file = dlq.dir.write("race.sh", script + "\n");
    REQUIRE(std::system(("sh '" + script_file + "' >/dev/null").c_str()) == 0);
    const std::string ann = llmdlq::test::slurp(dlq.dir.path() / "ann.rc");
    const std::string bob = llmdlq::test::slurp(dlq.dir.path() / "bob.rc");
    CHECK(std::multiset<std::string>{ann, bob} == std::multiset<std::string>{"0\n", "4\n"});
    const std::string loser_err = llmdlq::test::slurp(dlq.dir.path() / (ann == "0\n" ? "bob.err" : "ann.err"));
    CHECK(loser_err.find(std::string("claimed by ") + (ann == "0\n" ? "ann" : "bob")) != std::string::npos);
    const auto shown = boost::json::parse(run_llmdlq("show " + dlq.store + " " + id + " --json").out);
    CHECK(shown.at("operator_log").as_array().size() == 1);
  }
  // The rest of an operator's day, each action in the log.
  REQUIRE(run_llmdlq("requeue " + dlq.store + " " + ids[0] + " --operator ann").exit_code == 0);
  REQUIRE(run_llmdlq("discard " + dlq.store + " " + ids[1] + " --operator ann --note dup").exit_code == 0);
  CHECK(run_llmdlq("discard " + dlq.store + " " + ids[1] + " --operator bob").exit_code == 4);
  const auto log = boost::json::parse(run_llmdlq("show " + dlq.store + " " + ids[1] + " --json").out).at("operator_log");
  REQUIRE(log.as_array().size() == 2);
  CHECK(text(log.as_array()[1].at("action")) == "discard");
  CHECK(json_lines(run_llmdlq("list " + dlq.store + " --json --status requeued").out).size() == 1);
}

TEST_CASE("top --once: the counts, the pending count and the oldest pending age", "[tools][operator]") {
  filled_dlq dlq(response_line(1, schema_failure) + response_line(2, syntax_failure) + response_line(3, "[1"));
  REQUIRE(run_llmdlq("claim " + dlq.store + " " + id_of_category(dlq, "schema") + " --operator ann").exit_code == 0);
  auto run = run_llmdlq("top " + dlq.store + " --once --json");
  REQUIRE(run.exit_code == 0);
  const auto block = boost::json::parse(run.out).as_object();
  CHECK(block.at("total") == 3);
  CHECK(block.at("pending") == 2);
  CHECK(block.at("status").at("claimed") == 1);
  CHECK(block.at("category").at("truncated") == 1);
  CHECK(block.at("oldest_pending_age_seconds").as_int64() >= 0);
  run = run_llmdlq("top " + dlq.store + " --once");
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("3 dead letters, 2 pending, oldest pending ") != std::string::npos);
  CHECK(run.out.find("\x1b[") == std::string::npos);
  CHECK(run_llmdlq("top " + dlq.store + " --interval 0").exit_code == 2);
}

TEST_CASE("process records its traffic in a SQLite sink", "[tools][operator]") {
  filled_dlq dlq(response_line(1, R"({"total": 1, "email": "a@b.c"})") + response_line(2, "[1"));
  auto store = llmdlq::sqlite_store::open(dlq.db, {.read_only = true});
  REQUIRE(store);
  const auto now = llmdlq::system_now();
  const auto timeline = store->timeline(now - std::chrono::hours(1), now + std::chrono::minutes(1), std::chrono::hours(2));
  REQUIRE(timeline);
  REQUIRE(timeline->size() == 1);
  CHECK(timeline->front().processed == 2);
  CHECK(timeline->front().dead_lettered == 1);
  CHECK(timeline->front().dead_letters() == 1);
}

TEST_CASE("deliver: resolved corrections go downstream once, with who resolved them, across a crash",
          "[tools][operator][deliver]") {
  filled_dlq dlq(response_line(1, schema_failure) + response_line(2, syntax_failure) +
                 response_line(3, R"({"total": 3 "email": "z@y.x"})"));
  const auto ids = [&] {
    std::vector<std::string> found;
    for (const auto& row : json_lines(run_llmdlq("list " + dlq.store + " --json").out)) {
      found.emplace_back(row.at("dlq_id").as_string());
    }
    return found;
  }();
  REQUIRE(ids.size() == 3);
  const auto corrected = dlq.dir.write("corrected.json", R"({"total": 12, "email": "a@b.c"})");
  for (const std::string& id : {ids[0], ids[1]}) {
    REQUIRE(run_llmdlq("claim " + dlq.store + " " + id + " --operator ann").exit_code == 0);
    REQUIRE(run_llmdlq("resolve " + dlq.store + " " + id + " --operator ann --note 'read off the scan' --schema " +
                       dlq.schema + " --corrected " + corrected)
                .exit_code == 0);
  }
  // list --json shows the resolution.
  std::size_t shown = 0;
  for (const auto& row : json_lines(run_llmdlq("list " + dlq.store + " --json").out)) {
    if (row.contains("resolution")) {
      CHECK(row.at("resolution").at("total") == 12);
      ++shown;
    }
  }
  CHECK(shown == 2);

  const auto root = std::filesystem::canonical(dlq.dir.path());
  const auto out = (root / "corrections.jsonl").string();
  const auto allowlist = dlq.dir.write("targets.allow", "jsonl:" + out + "\n");
  const std::string deliver = "deliver " + dlq.store + " --json --to jsonl:" + out + " --allowlist " + allowlist;
  const auto lines_of_out = [&] { return json_lines(llmdlq::test::slurp(out)); };

  // A run killed after the ledger took one correction and before it was written: the next run writes it.
  std::string first_key;
  {
    auto store = llmdlq::sqlite_store::open(dlq.db);
    REQUIRE(store.has_value());
    auto record = store->get(ids[0]);
    REQUIRE(record.has_value());
    REQUIRE(record->has_value());
    first_key = llmdlq::parse_envelope((*record)->envelope_json)->idempotency_key;
    auto state = llmdlq::sqlite_replay_state::open(dlq.db);
    REQUIRE(state.has_value());
    REQUIRE(state->record_output(first_key, llmdlq::resolution_source_name, ids[0], *(*record)->resolution)
                .has_value());
  }
  auto run = run_llmdlq(deliver);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto summary = boost::json::parse(run.out);
  CHECK(summary.at("resolved") == 2);
  CHECK(summary.at("delivered") == 2);
  auto lines = lines_of_out();
  REQUIRE(lines.size() == 2);
  for (const auto& line : lines) {
    CHECK(line.at("source") == "operator");
    CHECK(line.at("resolved_by") == "ann");
    CHECK(line.at("note") == "read off the scan");
    CHECK(line.at("output").at("total") == 12);
  }

  // A run killed after it wrote a correction and before the ledger said so: the target has it, nothing twice.
  {
    auto state = llmdlq::sqlite_replay_state::open(dlq.db);
    REQUIRE(state.has_value());
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(dlq.db.c_str(), &db) == SQLITE_OK);
    const std::string undo = "UPDATE llmdlq_replay_ledger SET delivered = 0 WHERE idempotency_key = '" + first_key + "'";
    CHECK(sqlite3_exec(db, undo.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  run = run_llmdlq(deliver);
  REQUIRE(run.exit_code == 0);
  CHECK(lines_of_out().size() == 2);
  run = run_llmdlq(deliver);
  REQUIRE(run.exit_code == 0);
  summary = boost::json::parse(run.out);
  CHECK(summary.at("delivered") == 0);
  CHECK(summary.at("already_delivered") == 2);
  CHECK(lines_of_out().size() == 2);

  CHECK(run_llmdlq("deliver " + dlq.store).exit_code == 2);                     // no target
  CHECK(run_llmdlq("deliver " + dlq.store + " --to jsonl:" + out).exit_code == 2);  // no allowlist
}

}  // namespace operator_commands_test
