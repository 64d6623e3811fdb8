// SPDX-License-Identifier: MIT
// What the console's pages and `llmdlq report` show: spans highlighted,
// record text escaped, a form on every POST carrying its CSRF token,
// charts drawn without a fetch, one colour per category, lines labelled.
#include <regex>
#include <set>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <llmdlq/envelope.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "console/pages.hpp"
#include "console/charts.hpp"
#include "tools/run_tool.hpp"

namespace console_pages_test {

using namespace llmdlq::cli;
using llmdlq::test::run_llmdlq;
using llmdlq::test::slurp;
using llmdlq::test::temp_dir;

namespace {

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

llmdlq::moderation_record hostile_record() {
  llmdlq::envelope e;
  e.dlq_id = "8faed0ba-7bfc-8608-9c87-e19dc253e620";
  e.raw_response = llmdlq::captured_text::of(R"({"name": "<script>x</script></textarea>", "total": -1})");
  e.failure.category = llmdlq::failure_category::schema;
  e.failure.code = "schema_violation";
  e.idempotency_key = "key-1";
  e.failure.message = "<b>bold</b>";
  e.failure.errors.push_back({"/total", "/properties/total/minimum", "minimum", "must be >= 0 <i>"});
  llmdlq::moderation_record r;
  r.dlq_id = "d1\"><script>";
  r.status = llmdlq::moderation_status::claimed;
  r.category = "<category>";
  r.raw_response = *e.raw_response.text;
  r.envelope_json = boost::json::serialize(llmdlq::to_json(e));
  r.operator_log = R"([{"at": "2026-01-01T00:00:00Z", "operator": "<img src=x>", "action": "claim"}])";
  r.claimed_by = "<img src=x>";
  return r;
}

}  // namespace

TEST_CASE("highlighted_html: marks the spans and escapes every piece", "[console][pages]") {
  const std::string raw = R"({"a": "<b>", "c": 1})";
  const auto html = highlighted_html(raw, {{6, 11, "/a: \"quoted\""}});
  CHECK(html == R"({&quot;a&quot;: <mark title="/a: &quot;quoted&quot;">&quot;&lt;b&gt;&quot;</mark>, &quot;c&quot;: 1})");
  // A span ending inside a character takes the whole character.
  CHECK(highlighted_html("é!", {{0, 1, "x"}}) == "<mark title=\"x\">é</mark>!");
}

TEST_CASE("record_page_html: record text never becomes markup, and every form carries the CSRF token",
          "[console][pages]") {
  llmdlq::cli::session_table sessions;
  const auto session = sessions.open("<alice>");
  const auto record = hostile_record();
  const auto envelope = llmdlq::envelope_from_json(boost::json::parse(record.envelope_json));
  INFO((envelope ? std::string() : envelope.error().path + ": " + envelope.error().message));
  REQUIRE(envelope.has_value());
  const auto html = record_page_html(session, record, {});
  CHECK(html.find("<script>x") == std::string::npos);
  CHECK(html.find("</textarea>\"") == std::string::npos);
  CHECK(count(html, "</textarea>") == 1);  // the resolve form's own
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("<b>bold") == std::string::npos);
  CHECK(html.find("<category>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;x&lt;/script&gt;&lt;/textarea&gt;") != std::string::npos);
  CHECK(html.find("<mark") != std::string::npos);
  // Inline code is what the Content-Security-Policy forbids.
  CHECK(html.find(" style=") == std::string::npos);
  CHECK(html.find("<style") == std::string::npos);
  CHECK(std::regex_search(html, std::regex("<script src=\"/assets/console.js\"")));
  CHECK(count(html, "<script") == 1);
  CHECK_FALSE(std::regex_search(html, std::regex(R"( on[a-z]+=)")));
  const auto forms = count(html, "method=\"post\"");
  CHECK(forms >= 4);  // logout, resolve, discard, requeue
  CHECK(count(html, "name=\"csrf\" value=\"" + session.csrf + "\"") == forms);
}

TEST_CASE("pages: bidi controls in record text and operator names are shown as escapes, never as themselves",
          "[console][pages][escape]") {
  // U+202E turns the text after it around; U+202C ends the override.
  const std::string evil = "\u202e" "evil" "\u202c";
  const std::string raw_bytes = "\xE2\x80\xAE";
  const std::string shown = "\\u202Eevil\\u202C";
  llmdlq::cli::session_table sessions;
  const auto session = sessions.open("alice" + evil);
  llmdlq::envelope e;
  e.dlq_id = "8faed0ba-7bfc-8608-9c87-e19dc253e620";
  e.raw_response = llmdlq::captured_text::of("{\"name\": \"" + evil + "\", \"total\": -1}");
  e.failure.category = llmdlq::failure_category::schema;
  e.failure.code = "schema_violation";
  e.idempotency_key = "key-1";
  e.failure.message = "message " + evil;
  e.failure.errors.push_back({"/total", "/properties/total/minimum", "minimum", "must be >= 0 " + evil});
  llmdlq::moderation_record record;
  record.dlq_id = e.dlq_id;
  record.status = llmdlq::moderation_status::claimed;
  record.category = "schema" + evil;
  record.raw_response = *e.raw_response.text;
  record.envelope_json = boost::json::serialize(llmdlq::to_json(e));
  record.operator_log = R"([{"at": "2026-01-01T00:00:00Z", "operator": "bob)" + evil +
                        R"(", "action": "claim", "note": "note)" + evil + R"("}])";
  record.claimed_by = "bob" + evil;

  const auto check_page = [&](const std::string& page, std::size_t at_least) {
    CHECK(page.find(raw_bytes) == std::string::npos);
    CHECK(page.find("\xE2\x80\xAC") == std::string::npos);
    CHECK(count(page, shown) >= at_least);
  };
  // The header's name, the category, claimed by, the raw response (twice:
  // shown and in the resolve form), the failure message, the error, the
  // operator log's operator and note, the envelope.
  check_page(record_page_html(session, record, {}), 9);
  check_page(record_page_html(session, record, {"", "Refused " + evil, e.failure.errors, "{" + evil + "}"}), 9);
  llmdlq::moderation_page page;
  page.records.push_back(record);
  dlq_overview overview;
  overview.statistics.by_category = {{record.category, 1}};
  check_page(queue_page_html(session, {}, page, overview, llmdlq::system_now()), 3);
  check_page(message_page(&session, "Not found", "No dead letter " + evil + "."), 2);
  check_page(login_page("Refused " + evil), 1);
}

TEST_CASE("charts: bars per category, and a rate only with traffic counts", "[console][charts]") {
  const auto day = [](const char* text) { return *llmdlq::parse_rfc3339(text); };
  std::vector<llmdlq::dlq_timeline_bucket> timeline{
      {day("2026-01-01T00:00:00Z"), {{"schema", 3}, {"syntax", 1}}, 0, 0},
      {day("2026-01-02T00:00:00Z"), {}, 0, 0},
      {day("2026-01-03T00:00:00Z"), {{"<x>", 2}}, 0, 0}};
  const auto bars = timeline_chart_svg(timeline);
  CHECK(count(bars, "<rect class=\"bar\"") == 3);
  CHECK(bars.find("&lt;x&gt;") != std::string::npos);
  CHECK(bars.find("<x>") == std::string::npos);
  CHECK(dlq_rate_chart_svg(timeline).find("<svg") == std::string::npos);
  timeline[0].processed = 100;
  timeline[2].processed = 50;
  const auto rate = dlq_rate_chart_svg(timeline);
  CHECK(count(rate, "<circle") == 2);
  CHECK(rate.find("4.00%") != std::string::npos);
  CHECK(timeline_chart_svg({}).find("<svg") == std::string::npos);
}

TEST_CASE("charts: a category has one colour whichever categories are shown beside it", "[console][charts]") {
  const auto day = [](const char* text) { return *llmdlq::parse_rfc3339(text); };
  const auto fill_of = [](const std::string& svg, const std::string& category) {
    const std::regex bar("fill=\"(#[0-9A-F]{6})\"><title>[0-9-]+ " + category + ":");
    std::smatch m;
    REQUIRE(std::regex_search(svg, m, bar));
    return m[1].str();
  };
  const std::vector<llmdlq::dlq_timeline_bucket> week{{day("2026-01-01T00:00:00Z"), {{"syntax", 1}}, 0, 0}};
  const std::vector<llmdlq::dlq_timeline_bucket> month{
      {day("2026-01-01T00:00:00Z"), {{"empty", 2}, {"refusal", 1}, {"syntax", 1}}, 0, 0}};
  CHECK(fill_of(timeline_chart_svg(week), "syntax") == fill_of(timeline_chart_svg(month), "syntax"));
  CHECK(fill_of(timeline_chart_svg(week), "syntax") == category_colour("syntax"));
  // Every category of the taxonomy has its own colour; any other name is grey.
  std::set<std::string_view> colours;
  for (const auto* category : {"poison", "refusal", "empty", "truncated", "syntax", "schema", "semantic",
                               "low_confidence"}) {
    colours.insert(category_colour(category));
  }
  CHECK(colours.size() == 8);
  CHECK(colours.count(category_colour("made_up")) == 0);
  // The counts table, the queue and a record show the same colour.
  dlq_overview overview;
  overview.statistics.by_category = {{"syntax", 1}};
  const auto swatch = category_swatch_html("syntax");
  CHECK(swatch.find(std::string(category_colour("syntax"))) != std::string::npos);
  CHECK(counts_tables_html(overview, llmdlq::system_now()).find(swatch + " syntax") != std::string::npos);
  llmdlq::cli::session_table sessions;
  const auto session = sessions.open("alice");
  auto record = hostile_record();
  record.category = "syntax";
  llmdlq::moderation_page page;
  page.records.push_back(record);
  CHECK(queue_page_html(session, {}, page, overview, llmdlq::system_now()).find(swatch + " syntax") !=
        std::string::npos);
  CHECK(record_page_html(session, record, {}).find(swatch + " syntax") != std::string::npos);
}

TEST_CASE("charts: the DLQ rate's lines are labelled on the chart and in a legend", "[console][charts]") {
  const auto day = [](const char* text) { return *llmdlq::parse_rfc3339(text); };
  const std::vector<llmdlq::dlq_timeline_bucket> timeline{{day("2026-01-01T00:00:00Z"), {{"syntax", 1}}, 100, 0}};
  const auto rate = dlq_rate_chart_svg(timeline);
  CHECK(rate.find(">alarm threshold 2%</text>") != std::string::npos);
  CHECK(rate.find("<li><svg width=\"24\" height=\"12\" aria-hidden=\"true\"><line class=\"threshold\"") !=
        std::string::npos);
  CHECK(rate.find("</svg> alarm threshold 2%</li>") != std::string::npos);
  CHECK(rate.find("</svg> DLQ rate: dead letters per processed response</li>") != std::string::npos);
}

TEST_CASE("pages: counts and attempts in words a person reads", "[console][pages]") {
  dlq_overview overview;
  overview.statistics.total = 1;
  CHECK(counts_tables_html(overview, llmdlq::system_now()).find("<strong>1</strong> dead letter;") !=
        std::string::npos);
  overview.statistics.total = 2;
  CHECK(counts_tables_html(overview, llmdlq::system_now()).find("<strong>2</strong> dead letters;") !=
        std::string::npos);

  llmdlq::cli::session_table sessions;
  const auto session = sessions.open("alice");
  auto record = hostile_record();
  auto e = *llmdlq::parse_envelope(record.envelope_json);
  for (int i = 0; i < 3; ++i) e.attempts.history.push_back({.strategy = "repair_prompt", .outcome = "call_failed"});
  e.raw_response = llmdlq::captured_text::of("x");
  e.raw_response.text.reset();  // kept as length and hash only
  record.envelope_json = llmdlq::serialize(e);
  const auto html = record_page_html(session, record, {});
  CHECK(html.find("0 of 2 automated attempts made; not counted: 3 calls without an answer.") != std::string::npos);
  CHECK(count(html, "<td>no: no answer</td>") == 3);
  CHECK(html.find("failure(s)") == std::string::npos);
  CHECK(html.find("No text stored (1 byte, sha256 ") != std::string::npos);
}

TEST_CASE("report: one page with its charts and counts, no script and no URL to fetch", "[console][report]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", R"({"type": "object"})");
  const std::string db = (dir.path() / "dlq.db").string();
  REQUIRE(run_llmdlq("process --schema " + schema + " --sink sqlite:" + db,
                     R"({"id": 1, "response": "nope"})" "\n" R"({"id": 2, "response": "[1, 2"})" "\n")
              .exit_code == 0);
  const auto page = (dir.path() / "report.html").string();
  const auto run = run_llmdlq("report sqlite:" + db + " --html " + page + " --since 30d");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto html = slurp(page);
  CHECK(count(html, "<rect class=\"bar\"") == 2);
  CHECK(html.find("<table class=\"counts\"") != std::string::npos);
  CHECK(html.find("truncated") != std::string::npos);
  CHECK_FALSE(std::regex_search(html, std::regex("https?:", std::regex::icase)));
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find(" src=") == std::string::npos);
  CHECK(html.find(" href=") == std::string::npos);

  // `process` recorded its traffic: the DLQ rate is drawn, and follows
  // what is recorded later.
  CHECK(html.find("<polyline") != std::string::npos);
  CHECK(html.find("100.00% of 2<") != std::string::npos);
  {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    REQUIRE(store->record_traffic(llmdlq::system_now(), 38, 0).has_value());
  }
  REQUIRE(run_llmdlq("report sqlite:" + db + " --html " + page).exit_code == 0);
  CHECK(slurp(page).find("5.00% of 40") != std::string::npos);

  CHECK(run_llmdlq("report sqlite:" + db).exit_code == 2);
  CHECK(run_llmdlq("report sqlite:" + db + " --html " + page + " --since yesterday").exit_code == 2);
  CHECK(run_llmdlq("report sqlite:" + (dir.path() / "missing.db").string() + " --html " + page).exit_code == 2);
}

TEST_CASE("queue_page_html: filters kept in the next page's link, record text escaped", "[console][pages]") {
  llmdlq::cli::session_table sessions;
  const auto session = sessions.open("alice");
  llmdlq::moderation_page page;
  page.records.push_back(hostile_record());
  page.more = true;
  page.next = llmdlq::moderation_cursor{"2026-01-01T00:00:00.000Z", "d1"};
  queue_filter filter;
  filter.category = "schema";
  dlq_overview overview;
  overview.statistics.by_category = {{"schema", 1}, {"<c>", 2}};
  const auto html = queue_page_html(session, filter, page, overview, llmdlq::system_now());
  CHECK(html.find("class=\"next\"") != std::string::npos);
  CHECK(html.find("after=2026-01-01T00%3A00%3A00.000Z%2Cd1") != std::string::npos);
  CHECK(html.find("category=schema") != std::string::npos);
  CHECK(html.find("<option value=\"schema\" selected>") != std::string::npos);
  CHECK(html.find("&lt;c&gt;") != std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("<script>") == std::string::npos);
  page.more = false;
  CHECK(queue_page_html(session, filter, page, overview, llmdlq::system_now()).find("class=\"next\"") ==
        std::string::npos);
}

TEST_CASE("console: listens on loopback only unless told, and needs a store", "[console][tool]") {
  temp_dir dir;
  const auto schema = dir.write("schema.json", R"({"type": "object"})");
  const std::string db = (dir.path() / "dlq.db").string();
  REQUIRE(run_llmdlq("process --schema " + schema + " --sink sqlite:" + db, R"({"id": 1, "response": "x"})" "\n")
              .exit_code == 0);
  auto run = run_llmdlq("console sqlite:" + db + " --listen 0.0.0.0:0");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--allow-remote") != std::string::npos);
  CHECK(run_llmdlq("console sqlite:" + db + " --listen 127.0.0.1").exit_code == 2);
  CHECK(run_llmdlq("console sqlite:" + (dir.path() / "missing.db").string()).exit_code == 2);
  const auto open_token = dir.write("token", "0123456789abcdef0123456789\n");  // readable by others
  run = run_llmdlq("console sqlite:" + db + " --listen 127.0.0.1:0 --token-file " + open_token);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("chmod 600") != std::string::npos);
}

}  // namespace console_pages_test
