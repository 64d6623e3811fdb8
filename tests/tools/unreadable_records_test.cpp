// SPDX-License-Identifier: MIT
// One record of a SQLite DLQ that does not read back (an envelope that is not
// JSON or not an envelope, an unknown status, a field of the wrong type) is
// skipped, counted and reported by its dlq_id by every command that reads
// many records, which processes all the others and exits 6; show and the
// actions name what is wrong with it. Then the same with many random
// truncations and byte flips of one envelope.
#include "catch.hpp"
#include "support/skip.hpp"

#ifndef LLMDLQ_TEST_HTTPLIB

TEST_CASE("unreadable records: every command reads around them", "[tools][unreadable]") {
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: no test server");
}

#else

#include <cstdlib>
#include <random>
#include <set>
#include <sstream>

#include <boost/json.hpp>

#include "llm/scripted_server.hpp"
#include "support/broken_records.hpp"
#include "tools/run_tool.hpp"

namespace unreadable_records_test {

using llmdlq::test::broken_records_dlq;
using llmdlq::test::record_corruption;
using llmdlq::test::run_llmdlq;
using llmdlq::test::scripted_server;
using llmdlq::test::tool_run;

namespace {

// docs/command-line.md: some records did not read back; the others were processed.
constexpr int exit_unreadable = 6;

std::vector<boost::json::object> json_lines(const std::string& text) {
  std::vector<boost::json::object> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    boost::system::error_code ec;
    auto value = boost::json::parse(line, ec);
    REQUIRE_FALSE(ec);
    REQUIRE(value.is_object());
    out.push_back(std::move(value.as_object()));
  }
  return out;
}

boost::json::object json_of(const tool_run& run) {
  INFO(run.out);
  INFO(run.err);
  auto lines = json_lines(run.out);
  REQUIRE(lines.size() == 1);
  return lines.front();
}

// The dlq_ids of a list of {"dlq_id", "reason"} objects, each reason checked for `reason`.
std::set<std::string> reported(const boost::json::value& list, const std::string& reason = {}) {
  std::set<std::string> ids;
  for (const auto& entry : list.as_array()) {
    ids.emplace(entry.at("dlq_id").as_string());
    const std::string why(entry.at("reason").as_string());
    INFO(why);
    CHECK_FALSE(why.empty());
    if (!reason.empty()) CHECK(why.find(reason) != std::string::npos);
  }
  return ids;
}

// A model server that answers the question about letter N with its recovered answer.
void answer_every_letter(scripted_server& server) {
  server.answer_with([](const llmdlq::test::recorded_request& request) -> std::optional<llmdlq::test::scripted_reply> {
    const auto at = request.body.find("letter-");
    int n = 0;
    if (at != std::string::npos) n = std::atoi(request.body.c_str() + at + 7);
    return llmdlq::test::chat_completion(llmdlq::test::recovered_answer(n));
  });
}

struct expectation {
  std::size_t victim;     // the letter broken
  bool seen_by_status;    // commands that read by status take it (its status reads)
  bool read_by_everyone;  // what is broken is a part every reader reads (not expires_at only)
};

std::string replay(const broken_records_dlq& q, const std::string& arguments) {
  return "replay " + q.store + " --schema " + q.schema + " --rate 0 --json " + arguments;
}

}  // namespace

TEST_CASE("unreadable records: each command reads around one broken record and names it", "[tools][unreadable]") {
  for (const record_corruption& broken : llmdlq::test::record_corruptions()) {
    DYNAMIC_SECTION(broken.name) {
      broken_records_dlq q;
      const std::size_t victim = broken_records_dlq::pending_victim;
      const std::string id = q.ids[victim];
      q.corrupt(victim, broken.sql);
      const std::string stored_before = q.envelope_text(victim);
      const std::string status_before = q.statuses().at(id);
      const bool unreadable = !broken.expiry_only;  // what list, stats and show read
      const bool by_status = unreadable && !broken.status;  // what replay reads
      const int read_code = unreadable ? exit_unreadable : 0;

      // list: every record, the broken one as unreadable with its id and why.
      auto run = run_llmdlq("list " + q.store + " --limit 100 --json");
      CHECK(run.exit_code == read_code);
      auto rows = json_lines(run.out);
      CHECK(rows.size() == broken_records_dlq::letters);
      std::size_t marked = 0;
      for (const auto& row : rows) {
        if (!row.contains("unreadable")) continue;
        ++marked;
        CHECK(row.at("dlq_id").as_string() == id);
        CHECK(std::string(row.at("unreadable").as_string()).find(broken.reason) != std::string::npos);
      }
      CHECK(marked == (unreadable ? 1u : 0u));
      if (unreadable) CHECK(run.err.find(id) != std::string::npos);
      run = run_llmdlq("list " + q.store + " --limit 100");
      CHECK(run.exit_code == read_code);
      if (unreadable) {
        CHECK(run.out.find(id + " ") != std::string::npos);
        CHECK(run.out.find("unreadable") != std::string::npos);
      }

      // stats and top: the counts of all, the broken one named.
      run = run_llmdlq("stats " + q.store + " --json");
      CHECK(run.exit_code == read_code);
      auto stats = json_of(run);
      CHECK(stats.at("total") == broken_records_dlq::letters);
      CHECK(stats.at("unreadable") == (unreadable ? 1 : 0));
      CHECK(reported(stats.at("unreadable_records"), broken.reason) ==
            (unreadable ? std::set<std::string>{id} : std::set<std::string>{}));
      run = run_llmdlq("stats " + q.store);
      CHECK(run.exit_code == read_code);
      if (unreadable) CHECK(run.out.find(id) != std::string::npos);
      run = run_llmdlq("top " + q.store + " --once --json");
      CHECK(run.exit_code == read_code);
      CHECK(json_of(run).at("unreadable") == (unreadable ? 1 : 0));

      // report: the page is written, and names it.
      const std::string html = (q.dir.path() / "report.html").string();
      run = run_llmdlq("report " + q.store + " --html " + html);
      INFO(run.err);
      CHECK(run.exit_code == read_code);
      const std::string page = llmdlq::test::slurp(html);
      CHECK(page.find("</html>") != std::string::npos);
      if (unreadable) CHECK(page.find(id) != std::string::npos);

      // replay, dry: all 40 pending letters judged but the broken one, which is reported.
      run = run_llmdlq(replay(q, ""));
      CHECK(run.exit_code == (by_status ? exit_unreadable : 0));
      auto summary = json_of(run);
      CHECK(summary.at("seen") == (broken.status ? 39 : 40));
      CHECK(summary.at("selected") == (by_status ? 39 : broken.status ? 39 : 40));
      CHECK(summary.at("unreadable") == (by_status ? 1 : 0));
      CHECK(reported(summary.at("unreadable_letters"), broken.reason) ==
            (by_status ? std::set<std::string>{id} : std::set<std::string>{}));
      if (by_status) CHECK(run.err.find(id) != std::string::npos);

      // replay --execute: every other pending letter recovered; the broken one left as it is.
      {
        scripted_server server;
        REQUIRE(server.listening());
        answer_every_letter(server);
        run = run_llmdlq(replay(q, "--execute --model-url " + server.base_url()));
        CHECK(run.exit_code == (by_status ? exit_unreadable : 0));
        summary = json_of(run);
        CHECK(summary.at("finished") == true);
        CHECK(summary.at("recovered") == (by_status || broken.status ? 39 : 40));
        CHECK(summary.at("unreadable") == (by_status ? 1 : 0));
        CHECK(reported(summary.at("unreadable_letters")) ==
              (by_status ? std::set<std::string>{id} : std::set<std::string>{}));
        const auto statuses = q.statuses();
        for (std::size_t n = 0; n < broken_records_dlq::first_resolved; ++n) {
          if (n == victim && (by_status || broken.status)) continue;
          INFO("letter " << n);
          CHECK(statuses.at(q.ids[n]) == "recovered");
        }
        for (std::size_t n = broken_records_dlq::first_resolved; n < broken_records_dlq::letters; ++n) {
          CHECK(statuses.at(q.ids[n]) == "resolved");
        }
        if (by_status || broken.status) {
          CHECK(statuses.at(id) == status_before);
          CHECK(q.envelope_text(victim) == stored_before);
        }
      }

      // show names what is wrong with it; an unknown status refuses every action.
      run = run_llmdlq("show " + q.store + " " + id);
      CHECK(run.exit_code == read_code);
      if (unreadable) CHECK(run.err.find(broken.reason) != std::string::npos);
      run = run_llmdlq("show " + q.store + " " + id + " --json");
      CHECK(run.exit_code == read_code);
      if (unreadable) {
        CHECK(std::string(json_of(run).at("unreadable").as_string()).find(broken.reason) != std::string::npos);
      }
      for (const std::string action : {"claim", "discard", "requeue"}) {
        run = run_llmdlq(action + " " + q.store + " " + id + " --operator bob");
        INFO(action << ": " << run.err);
        if (broken.status) {
          CHECK(run.exit_code == exit_unreadable);
          CHECK(run.err.find("bogus") != std::string::npos);
          CHECK(run.out.find("pending") == std::string::npos);
          CHECK(q.statuses().at(id) == "bogus");
        }
      }

      // purge: every expired record goes, whatever its envelope; one whose expiry does not read stays.
      run = run_llmdlq("purge " + q.store + " --now 2030-01-01T00:00:00Z --operator ann --json");
      CHECK(run.exit_code == (broken.expiry_only ? exit_unreadable : 0));
      auto purged = json_of(run);
      CHECK(purged.at("count") == (broken.expiry_only ? 49 : 50));
      CHECK(purged.at("unreadable") == (broken.expiry_only ? 1 : 0));
      if (broken.expiry_only) {
        CHECK(reported(purged.at("unreadable_records"), broken.reason) == std::set<std::string>{id});
        CHECK(q.statuses().size() == 1);
      }
    }
  }
}

TEST_CASE("unreadable records: deliver writes every other correction and names the broken one",
          "[tools][unreadable][deliver]") {
  for (const record_corruption& broken : llmdlq::test::record_corruptions()) {
    DYNAMIC_SECTION(broken.name) {
      broken_records_dlq q;
      const std::size_t victim = broken_records_dlq::resolved_victim;
      const std::string id = q.ids[victim];
      q.corrupt(victim, broken.sql);
      const bool by_status = !broken.expiry_only && !broken.status;
      const std::size_t resolved = broken_records_dlq::letters - broken_records_dlq::first_resolved;
      const auto root = std::filesystem::canonical(q.dir.path());
      const auto out = (root / "corrections.jsonl").string();
      const auto allowlist = q.dir.write("targets.allow", "jsonl:" + out + "\n");
      const auto run = run_llmdlq("deliver " + q.store + " --json --to jsonl:" + out + " --allowlist " + allowlist);
      CHECK(run.exit_code == (by_status ? exit_unreadable : 0));
      const auto summary = json_of(run);
      CHECK(summary.at("delivered") == (by_status || broken.status ? resolved - 1 : resolved));
      CHECK(summary.at("unreadable") == (by_status ? 1 : 0));
      CHECK(reported(summary.at("unreadable_letters"), broken.reason) ==
            (by_status ? std::set<std::string>{id} : std::set<std::string>{}));
      if (by_status) CHECK(run.err.find(id) != std::string::npos);
      std::set<std::string> written;
      for (const auto& line : json_lines(llmdlq::test::slurp(out))) written.emplace(line.at("dlq_id").as_string());
      for (std::size_t n = broken_records_dlq::first_resolved; n < broken_records_dlq::letters; ++n) {
        if (n == victim && (by_status || broken.status)) continue;
        CHECK(written.contains(q.ids[n]));
      }
      if (by_status || broken.status) CHECK_FALSE(written.contains(id));
    }
  }
}

TEST_CASE("unreadable records: random truncations and byte flips of one envelope stop no command",
          "[tools][unreadable][fuzz]") {
  std::size_t runs = 40;
  if (const char* wanted = std::getenv("LLMDLQ_UNREADABLE_RUNS")) runs = std::strtoul(wanted, nullptr, 10);
  std::mt19937 random(20261206);
  for (std::size_t i = 0; i < runs; ++i) {
    broken_records_dlq q;
    const bool pending = i % 2 == 0;
    const std::size_t victim = pending ? broken_records_dlq::pending_victim : broken_records_dlq::resolved_victim;
    const std::string id = q.ids[victim];
    std::string text = q.envelope_text(victim);
    std::string change;
    if (i % 4 < 2) {
      const std::size_t length = std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(random);
      text.resize(length);
      change = "cut to " + std::to_string(length) + " bytes";
    } else {
      const int flips = std::uniform_int_distribution<int>(1, 3)(random);
      for (int f = 0; f < flips; ++f) {
        const std::size_t at = std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(random);
        text[at] = static_cast<char>(text[at] ^ std::uniform_int_distribution<int>(1, 255)(random));
        change += "flip at " + std::to_string(at) + "; ";
      }
    }
    q.set_envelope(victim, text);
    INFO("run " << i << ": letter " << victim << ", " << change);

    // Whether the command said so of the broken letter, and of no other; its exit code agrees.
    const auto check_reported = [&](const tool_run& run, const boost::json::value& list) {
      const auto ids = reported(list);
      CHECK(ids.size() <= 1);
      if (!ids.empty()) CHECK(ids == std::set<std::string>{id});
      CHECK(run.exit_code == (ids.empty() ? 0 : exit_unreadable));
      return !ids.empty();
    };

    auto run = run_llmdlq("list " + q.store + " --limit 100 --json");
    CHECK((run.exit_code == 0 || run.exit_code == exit_unreadable));
    CHECK(json_lines(run.out).size() == broken_records_dlq::letters);
    run = run_llmdlq("stats " + q.store + " --json");
    const bool unreadable = check_reported(run, json_of(run).at("unreadable_records"));
    CHECK(json_of(run).at("total") == broken_records_dlq::letters);
    run = run_llmdlq("top " + q.store + " --once --json");
    CHECK(run.exit_code == (unreadable ? exit_unreadable : 0));
    run = run_llmdlq("report " + q.store + " --html " + (q.dir.path() / "report.html").string());
    CHECK(run.exit_code == (unreadable ? exit_unreadable : 0));

    run = run_llmdlq(replay(q, ""));
    auto summary = json_of(run);
    const bool skipped = check_reported(run, summary.at("unreadable_letters"));
    CHECK(skipped == (pending && unreadable));
    CHECK(summary.at("seen") == 40);
    CHECK(summary.at("selected").as_int64() + summary.at("unreadable").as_int64() == 40);
    {
      scripted_server server;
      REQUIRE(server.listening());
      answer_every_letter(server);
      run = run_llmdlq(replay(q, "--execute --model-url " + server.base_url()));
      summary = json_of(run);
      CHECK(summary.at("finished") == true);
      CHECK(check_reported(run, summary.at("unreadable_letters")) == skipped);
      const auto statuses = q.statuses();
      for (std::size_t n = 0; n < broken_records_dlq::first_resolved; ++n) {
        if (n != victim) CHECK(statuses.at(q.ids[n]) == "recovered");
      }
    }

    const auto root = std::filesystem::canonical(q.dir.path());
    const auto out = (root / "corrections.jsonl").string();
    const auto allowlist = q.dir.write("targets.allow", "jsonl:" + out + "\n");
    run = run_llmdlq("deliver " + q.store + " --json --to jsonl:" + out + " --allowlist " + allowlist);
    summary = json_of(run);
    CHECK(check_reported(run, summary.at("unreadable_letters")) == (!pending && unreadable));
    CHECK(summary.at("delivered").as_int64() + summary.at("superseded").as_int64() +
              summary.at("unreadable").as_int64() ==
          10);

    run = run_llmdlq("purge " + q.store + " --now 2030-01-01T00:00:00Z --operator ann --json");
    CHECK(run.exit_code == 0);
    CHECK(json_of(run).at("count") == broken_records_dlq::letters);
  }
}

}  // namespace unreadable_records_test

#endif
