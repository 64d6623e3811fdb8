// SPDX-License-Identifier: MIT
// llmdlq::prometheus: the Collectable gives prometheus-cpp the families
// to_prometheus_text writes, and an Exposer serves them to a scrape.
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/exposer.h>
#include <prometheus/text_serializer.h>

#include <llmdlq/metrics_exposition.hpp>
#include <llmdlq/prometheus/collectable.hpp>

#include "catch.hpp"
#include "support/skip.hpp"

#ifdef LLMDLQ_TEST_HTTPLIB
#  include <httplib.h>
#endif

namespace collectable_test {

namespace {

// Exposition text as {(name, labels) -> value} and {comment lines}; the
// bucket bound `le` is read as a number, since writers spell 1e-06 as they like.
struct exposition {
  std::map<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>, double> samples;
  std::set<std::string> comments;
};

exposition read_exposition(const std::string& text) {
  exposition out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      out.comments.insert(line);
      continue;
    }
    const auto space = line.rfind(' ');
    REQUIRE(space != std::string::npos);
    const std::string series = line.substr(0, space);
    const auto brace = series.find('{');
    std::vector<std::pair<std::string, std::string>> labels;
    if (brace != std::string::npos) {
      std::size_t at = brace + 1;
      while (at < series.size() && series[at] != '}') {
        const auto eq = series.find('=', at);
        std::string name = series.substr(at, eq - at);
        std::string value;
        at = eq + 2;  // past ="
        while (series[at] != '"') {
          if (series[at] == '\\') ++at;
          value += series[at++];
        }
        ++at;  // past "
        if (series[at] == ',') ++at;
        if (name == "le") value = std::to_string(std::stod(value));
        labels.emplace_back(std::move(name), std::move(value));
      }
    }
    out.samples[{series.substr(0, brace), labels}] = std::stod(line.substr(space + 1));
  }
  return out;
}

std::shared_ptr<llmdlq::metrics> busy_metrics() {
  auto m = std::make_shared<llmdlq::metrics>();
  m->count_accepted({});
  llmdlq::repair_action fence;
  fence.code = "markdown_fence";
  m->count_accepted({&fence, 1});
  llmdlq::envelope e;
  e.failure.category = llmdlq::failure_category::schema;
  e.failure.code = "schema_violation \"quoted\"";
  e.triage.kind = llmdlq::triage_class::deterministic;
  m->count_dead_letter(e, std::chrono::microseconds(40));
  const auto sink = m->sink_slot("primary");
  m->count_publish(sink);
  m->count_sink_failure(sink, llmdlq::sink_errc::timeout);
  m->count_replay("repair_prompt", "recovered");
  m->count_tokens("gpt-4o-mini", 100, 20);
  m->set_pending(4, std::chrono::seconds(30));
  return m;
}

}  // namespace

TEST_CASE("the Collectable gives prometheus-cpp the families of to_prometheus_text", "[prometheus]") {
  const auto m = busy_metrics();
  const llmdlq::prometheus_collectable collectable{m};
  const auto families = collectable.Collect();
  REQUIRE(families.size() == llmdlq::metric_families(m->snapshot()).size());

  const auto theirs = read_exposition(prometheus::TextSerializer().Serialize(families));
  const auto ours = read_exposition(llmdlq::to_prometheus_text(m->snapshot()));
  CHECK(theirs.samples == ours.samples);
  CHECK(theirs.comments == ours.comments);
  CHECK(ours.samples.at({"llmdlq_processed_total", {}}) == 3);
  CHECK(ours.samples.at({"llmdlq_dead_lettered_total",
                         {{"category", "schema"}, {"triage", "deterministic"}, {"code", "schema_violation \"quoted\""}}}) ==
        1);
}

TEST_CASE("an Exposer serves the Collectable's families to a scrape", "[prometheus]") {
#ifndef LLMDLQ_TEST_HTTPLIB
  LLMDLQ_SKIP("cpp-httplib (libcpp-httplib-dev) is not installed: nothing to scrape with");
#else
  const auto m = busy_metrics();
  auto collectable = std::make_shared<llmdlq::prometheus_collectable>(m);
  prometheus::Exposer exposer{"127.0.0.1:0"};
  exposer.RegisterCollectable(collectable);
  const auto ports = exposer.GetListeningPorts();
  REQUIRE(ports.size() == 1);

  httplib::Client client("127.0.0.1", ports[0]);
  auto scraped = client.Get("/metrics");
  REQUIRE(scraped);
  REQUIRE(scraped->status == 200);
  const auto served = read_exposition(scraped->body);
  CHECK(served.samples.at({"llmdlq_accepted_total", {}}) == 2);
  CHECK(served.samples.at({"llmdlq_repaired_total", {{"code", "markdown_fence"}, {"tier", "lossless"}}}) == 1);
  CHECK(served.samples.at({"llmdlq_sink_failures_total", {{"sink", "primary"}, {"reason", "timeout"}}}) == 1);
  CHECK(served.comments.count("# TYPE llmdlq_failure_path_seconds histogram") == 1);

  // Counted after registration: the next scrape sees it.
  m->count_accepted({});
  scraped = client.Get("/metrics");
  REQUIRE(scraped);
  CHECK(read_exposition(scraped->body).samples.at({"llmdlq_accepted_total", {}}) == 3);
#endif
}

}  // namespace collectable_test
