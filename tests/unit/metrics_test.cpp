// SPDX-License-Identifier: MIT
// What a metrics registry counts after process_llm_response and a pipeline
// ran, its bounded label sets, concurrent counting, and its Prometheus text
// read back line by line.
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <llmdlq/memory_sink.hpp>
#include <llmdlq/metrics.hpp>
#include <llmdlq/metrics_exposition.hpp>
#include <llmdlq/pipeline.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"
#include "support/receipt_schema.hpp"

namespace metrics_test {

namespace {

using llmdlq::failure_category;

const llmdlq::schema& schema() { return llmdlq::test::small_receipt_schema(); }

constexpr std::string_view good = R"({"merchant": "AH", "total": 23.47, "date": "2026-09-28"})";

struct failing_input {
  failure_category category;
  std::string raw;
  llmdlq::request_context context;
};

// One response per failure category, in the taxonomy's order.
std::vector<failing_input> one_of_each_category() {
  llmdlq::request_context unsure;
  unsure.confidence = 0.1;
  return {
      {failure_category::poison, std::string("{\"merchant\": \"AH\"\0}", 18), {}},
      {failure_category::refusal, "I'm sorry, but I can't read this receipt: the image is too blurry.", {}},
      {failure_category::empty, "  \n", {}},
      {failure_category::truncated, R"({"merchant": "AH", "total": 23.4)", {}},
      {failure_category::syntax, "total = 23.47, merchant = AH", {}},
      {failure_category::schema, R"({"merchant": "AH", "total": "23.47", "date": "2026-09-28"})", {}},
      {failure_category::semantic, R"({"merchant": "AH", "total": 1, "date": "2026-02-30"})", {}},
      {failure_category::low_confidence, std::string(good), unsure},
  };
}

llmdlq::process_options counted(std::shared_ptr<llmdlq::metrics> m) {
  llmdlq::process_options o;
  o.min_confidence = 0.5;
  o.metrics = std::move(m);
  return o;
}

// The Prometheus text as {series name with labels -> value}, checking
// that every line is a comment of the two kinds or a well-formed sample,
// and collecting each family's TYPE.
struct parsed_exposition {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;
  std::map<std::string, std::string> help;
};

parsed_exposition parse(const std::string& text) {
  static const std::regex help_line(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*))");
  static const std::regex type_line(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex sample_line(
      R"re(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*\})? ([-+0-9.eE]+|\+Inf|NaN))re");
  parsed_exposition out;
  std::istringstream lines(text);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    INFO(line);
    if (std::regex_match(line, m, help_line)) {
      out.help[m[1]] = m[2];
    } else if (std::regex_match(line, m, type_line)) {
      CHECK(out.types.count(m[1]) == 0);
      out.types[m[1]] = m[2];
    } else {
      REQUIRE(std::regex_match(line, m, sample_line));
      const auto space = line.rfind(' ');
      out.samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("metrics count accepted, repaired and each failure category", "[metrics]") {
  auto m = std::make_shared<llmdlq::metrics>();
  const auto options = counted(m);

  REQUIRE(llmdlq::process_llm_response(good, schema(), {}, options));
  REQUIRE(llmdlq::process_llm_response(good, schema(), {}, options));
  const auto repaired = llmdlq::process_llm_response(
      "```json\n{\"merchant\": \"AH\", \"total\": 23.47, \"date\": \"2026-09-28\",}\n```", schema(), {}, options);
  REQUIRE(repaired);
  std::map<std::pair<std::string, std::string>, std::uint64_t> repairs_made;  // (code, tier) -> actions
  for (const auto& a : repaired->repairs) ++repairs_made[{std::string(a.code), std::string(to_string(a.tier))}];
  REQUIRE(repairs_made.count({"markdown_fence", "lossless"}) == 1);
  REQUIRE(repairs_made.count({"trailing_comma", "syntactic"}) == 1);

  std::map<std::string, std::pair<std::string, std::string>> expected;  // category -> triage, code
  for (const auto& input : one_of_each_category()) {
    const auto result = llmdlq::process_llm_response(input.raw, schema(), input.context, options);
    REQUIRE_FALSE(result);
    REQUIRE(result.error().failure.category == input.category);
    expected[std::string(to_string(input.category))] = {std::string(to_string(result.error().triage.kind)),
                                                        result.error().failure.code};
  }
  // A failure the host found: make_envelope counts it as a processed response too.
  const auto made = llmdlq::make_envelope({.category = failure_category::poison, .message = "context length exceeded"},
                                          "", {}, options);

  const auto s = m->snapshot();
  CHECK(s.accepted == 3);
  CHECK(s.processed == 3 + 8 + 1);
  CHECK(s.dead_lettered_total() == 9);

  std::map<std::pair<std::string, std::string>, std::uint64_t> repairs;
  for (const auto& r : s.repaired) repairs[{r.code, r.tier}] = r.count;
  CHECK(repairs == repairs_made);

  REQUIRE(s.dead_lettered.size() == 8);
  for (const auto& d : s.dead_lettered) {
    INFO(d.category);
    REQUIRE(expected.count(d.category) == 1);
    CHECK(d.triage == expected[d.category].first);
    CHECK(d.code == expected[d.category].second);
    CHECK(d.count == (d.category == "poison" ? 2u : 1u));
  }
  CHECK(made.failure.code == expected["poison"].second);

  // Every dead letter's envelope was timed, none beyond a second here.
  CHECK(s.failure_path.count == 9);
  REQUIRE(s.failure_path.cumulative.size() == llmdlq::failure_path_bounds.size() + 1);
  CHECK(s.failure_path.cumulative.back() == 9);
  CHECK(s.failure_path.cumulative[s.failure_path.cumulative.size() - 2] == 9);
  CHECK(s.failure_path.sum > 0.0);
  CHECK_FALSE(s.pending_records);
}

TEST_CASE("without metrics nothing is counted, and a registry is not needed", "[metrics]") {
  auto m = std::make_shared<llmdlq::metrics>();
  llmdlq::process_options uncounted;
  REQUIRE(llmdlq::process_llm_response(good, schema(), {}, uncounted));
  CHECK(m->snapshot().processed == 0);
}

TEST_CASE("a pipeline counts each sink's publishes and failures under its name", "[metrics]") {
  auto m = std::make_shared<llmdlq::metrics>();
  llmdlq::memory_sink primary;
  llmdlq::memory_sink spool;
  const llmdlq::pipeline p{schema(), primary, counted(m), llmdlq::sink_handle{spool}.named("spool")};

  llmdlq::request_context context;
  context.idempotency_key = "k1";
  CHECK(p.handle("not json", context).should_commit());
  CHECK(p.handle(good, context).should_commit());

  primary.fail_next(2, {llmdlq::sink_errc::timeout, "slow"});
  context.idempotency_key = "k2";
  CHECK_FALSE(p.handle("not json", context).should_commit());
  CHECK_FALSE(p.handle("not json", context).should_commit());

  primary.fail_next(1, {llmdlq::sink_errc::rejected, "too big"});
  const auto spooled = p.handle("not json", context);
  CHECK(spooled.in_fallback);

  const auto s = m->snapshot();
  REQUIRE(s.sinks.size() == 2);
  CHECK(s.sinks[0].sink == "memory");
  CHECK(s.sinks[0].publishes == 1);
  CHECK(s.sinks[0].failures[static_cast<std::size_t>(llmdlq::sink_errc::timeout)] == 2);
  CHECK(s.sinks[0].failures[static_cast<std::size_t>(llmdlq::sink_errc::rejected)] == 1);
  CHECK(s.sinks[1].sink == "spool");
  CHECK(s.sinks[1].publishes == 1);
  CHECK(s.processed == 5);
  CHECK(s.accepted == 1);

  const auto text = parse(llmdlq::to_prometheus_text(s));
  CHECK(text.samples.at(R"(llmdlq_sink_publishes_total{sink="memory"})") == 1);
  CHECK(text.samples.at(R"(llmdlq_sink_publishes_total{sink="spool"})") == 1);
  CHECK(text.samples.at(R"(llmdlq_sink_failures_total{sink="memory",reason="timeout"})") == 2);
  CHECK(text.samples.at(R"(llmdlq_sink_failures_total{sink="memory",reason="rejected"})") == 1);
}

TEST_CASE("labels beyond a bound are counted under other", "[metrics]") {
  llmdlq::metrics m{{.max_models = 2}};
  m.count_tokens("gpt-a", 10, 1);
  m.count_tokens("gpt-b", 20, 2);
  m.count_tokens("gpt-c", 30, 3);
  m.count_tokens("gpt-d", 40, 4);
  m.count_tokens("gpt-a", 1, 1);
  const auto s = m.snapshot();
  REQUIRE(s.tokens.size() == 3);
  CHECK(s.tokens[0].model == "gpt-a");
  CHECK(s.tokens[0].prompt == 11);
  CHECK(s.tokens[1].model == "gpt-b");
  CHECK(s.tokens[2].model == "other");
  CHECK(s.tokens[2].prompt == 70);
  CHECK(s.tokens[2].completion == 7);
}

TEST_CASE("metrics count exactly under concurrent updates", "[metrics]") {
  auto m = std::make_shared<llmdlq::metrics>();
  const auto options = counted(m);
  constexpr int threads = 4;
  constexpr int per_thread = 300;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const std::string model = "model-" + std::to_string(t % 2);
      for (int i = 0; i < per_thread; ++i) {
        (void)llmdlq::process_llm_response(i % 3 == 0 ? std::string_view("nope") : good, schema(), {}, options);
        m->count_tokens(model, 2, 1);
        m->count_replay("repair_prompt", i % 2 == 0 ? "recovered" : "continued");
      }
    });
  }
  for (auto& w : workers) w.join();

  const auto s = m->snapshot();
  CHECK(s.processed == threads * per_thread);
  CHECK(s.accepted == threads * (per_thread - per_thread / 3));
  REQUIRE(s.dead_lettered.size() == 1);
  CHECK(s.dead_lettered[0].category == "syntax");
  CHECK(s.dead_lettered[0].count == threads * per_thread / 3);
  REQUIRE(s.tokens.size() == 2);
  CHECK(s.tokens[0].prompt + s.tokens[1].prompt == 2 * threads * per_thread);
  REQUIRE(s.replays.size() == 2);
  CHECK(s.replays[0].count + s.replays[1].count == threads * per_thread);
}

TEST_CASE("the Prometheus text: HELP and TYPE per family, labels escaped, histogram cumulative", "[metrics]") {
  llmdlq::metrics m;
  llmdlq::envelope e;
  e.failure.category = failure_category::syntax;
  e.failure.code = "odd \"code\"\\with\nnewline";
  e.triage.kind = llmdlq::triage_class::transient;
  m.count_dead_letter(e, std::chrono::microseconds(3));
  m.count_dead_letter(e, std::chrono::milliseconds(2));
  m.count_dead_letter(e, std::chrono::seconds(5));
  m.count_accepted({});
  m.count_replay("stop", "held");
  m.count_tokens("gpt-4o-mini", 120, 30);
  m.count_stream_death(llmdlq::failure_category::schema, 11);
  m.count_stream_death(llmdlq::failure_category::schema, 30);
  m.set_pending(7, std::chrono::seconds(90));

  const std::string text = llmdlq::to_prometheus_text(m.snapshot());
  const auto p = parse(text);

  const std::map<std::string, std::string> families{
      {"llmdlq_processed_total", "counter"},         {"llmdlq_accepted_total", "counter"},
      {"llmdlq_repaired_total", "counter"},          {"llmdlq_dead_lettered_total", "counter"},
      {"llmdlq_sink_publishes_total", "counter"},    {"llmdlq_sink_failures_total", "counter"},
      {"llmdlq_replays_total", "counter"},           {"llmdlq_tokens_total", "counter"},
      {"llmdlq_stream_deaths_total", "counter"},     {"llmdlq_stream_bytes_before_death_total", "counter"},
      {"llmdlq_failure_path_seconds", "histogram"},  {"llmdlq_pending_records", "gauge"},
      {"llmdlq_oldest_pending_age_seconds", "gauge"}};
  CHECK(p.types == families);
  for (const auto& [name, type] : families) CHECK_FALSE(p.help.at(name).empty());

  CHECK(p.samples.at("llmdlq_processed_total") == 4);
  CHECK(p.samples.at("llmdlq_accepted_total") == 1);
  CHECK(p.samples.at(
            R"(llmdlq_dead_lettered_total{category="syntax",triage="transient",code="odd \"code\"\\with\nnewline"})") ==
        3);
  CHECK(p.samples.at(R"(llmdlq_replays_total{step="stop",outcome="held"})") == 1);
  CHECK(p.samples.at(R"(llmdlq_tokens_total{model="gpt-4o-mini",kind="prompt"})") == 120);
  CHECK(p.samples.at(R"(llmdlq_tokens_total{model="gpt-4o-mini",kind="completion"})") == 30);
  CHECK(p.samples.at(R"(llmdlq_stream_deaths_total{category="schema"})") == 2);
  CHECK(p.samples.at(R"(llmdlq_stream_bytes_before_death_total{category="schema"})") == 41);
  CHECK(p.samples.at("llmdlq_pending_records") == 7);
  CHECK(p.samples.at("llmdlq_oldest_pending_age_seconds") == 90);

  CHECK(p.samples.at(R"(llmdlq_failure_path_seconds_bucket{le="1e-06"})") == 0);
  CHECK(p.samples.at(R"(llmdlq_failure_path_seconds_bucket{le="5e-06"})") == 1);
  CHECK(p.samples.at(R"(llmdlq_failure_path_seconds_bucket{le="0.0025"})") == 2);
  CHECK(p.samples.at(R"(llmdlq_failure_path_seconds_bucket{le="1"})") == 2);
  CHECK(p.samples.at(R"(llmdlq_failure_path_seconds_bucket{le="+Inf"})") == 3);
  CHECK(p.samples.at("llmdlq_failure_path_seconds_count") == 3);
  CHECK(p.samples.at("llmdlq_failure_path_seconds_sum") == Approx(5.002003));

  // One bucket per bound and +Inf, never decreasing as the bound grows.
  const std::string bucket = "llmdlq_failure_path_seconds_bucket{le=\"";
  std::map<double, double> buckets;
  for (const auto& [series, value] : p.samples) {
    if (series.rfind(bucket, 0) == 0) buckets[std::stod(series.substr(bucket.size()))] = value;
  }
  CHECK(buckets.size() == llmdlq::failure_path_bounds.size() + 1);
  double previous = 0;
  for (const auto& [bound, count] : buckets) {
    CHECK(count >= previous);
    previous = count;
  }
}

namespace {

// A store as refresh_pending reads one: statistics() with records by status
// and the oldest pending record's creation time.
struct counted_store {
  struct statistics_type {
    std::map<std::string, std::uint64_t> by_status;
    std::optional<llmdlq::timestamp> oldest_pending_created_at;
  };
  llmdlq::expected<statistics_type, std::string> answer;
  [[nodiscard]] llmdlq::expected<statistics_type, std::string> statistics() const { return answer; }
};

}  // namespace

TEST_CASE("refresh_pending sets the backlog gauges from a store's statistics", "[metrics]") {
  llmdlq::metrics m;
  const auto now = *llmdlq::parse_rfc3339("2026-12-01T12:00:00.000Z");
  counted_store store;
  store.answer = counted_store::statistics_type{{{"pending", 12}, {"resolved", 40}}, now - std::chrono::minutes(3)};
  REQUIRE(llmdlq::refresh_pending(m, store, now));
  CHECK(m.snapshot().pending_records == 12u);
  CHECK(m.snapshot().oldest_pending_age_seconds == 180.0);

  store.answer = llmdlq::unexpected(std::string("database is locked"));
  CHECK_FALSE(llmdlq::refresh_pending(m, store, now));
  CHECK(m.snapshot().pending_records == 12u);  // kept

  store.answer = counted_store::statistics_type{{{"resolved", 52}}, std::nullopt};
  REQUIRE(llmdlq::refresh_pending(m, store, now));
  CHECK(m.snapshot().pending_records == 0u);
  CHECK(m.snapshot().oldest_pending_age_seconds == 0.0);
}

}  // namespace metrics_test
