// SPDX-License-Identifier: MIT
// The DLQ-rate alarm on a clock the test moves: a breach is told once, a
// recovery once, and no traffic or too little never alarms.
#include <chrono>
#include <memory>
#include <vector>

#include <llmdlq/dlq_rate_alarm.hpp>
#include <llmdlq/metrics.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"

namespace dlq_rate_alarm_test {

namespace {

using namespace std::chrono_literals;

struct manual_clock {
  llmdlq::timestamp now = *llmdlq::parse_rfc3339("2026-12-01T10:00:00.000Z");
  llmdlq::clock_function function() {
    return [this] { return now; };
  }
};

struct alarm_log {
  std::vector<llmdlq::dlq_rate_reading> breaches;
  std::vector<llmdlq::dlq_rate_reading> recoveries;
};

llmdlq::dlq_rate_alarm make_alarm(manual_clock& clock, alarm_log& log) {
  llmdlq::dlq_rate_alarm_options options;  // 5 minutes in 60 steps, 2 %, at least 100 processed
  options.clock = clock.function();
  return llmdlq::dlq_rate_alarm(
      options, [&log](const llmdlq::dlq_rate_reading& r) { log.breaches.push_back(r); },
      [&log](const llmdlq::dlq_rate_reading& r) { log.recoveries.push_back(r); });
}

}  // namespace

TEST_CASE("a breach fires once, stays quiet while breached, and recovery fires once", "[alarm]") {
  manual_clock clock;
  alarm_log log;
  auto alarm = make_alarm(clock, log);

  alarm.record(100, 2);  // exactly 2 %: not above the threshold
  CHECK(log.breaches.empty());
  alarm.record(true);  // 3 of 101
  REQUIRE(log.breaches.size() == 1);
  CHECK(log.breaches[0].processed == 101);
  CHECK(log.breaches[0].dead_lettered == 3);
  CHECK(log.breaches[0].breached);
  CHECK(alarm.breached());

  for (int i = 0; i < 20; ++i) alarm.record(true);
  clock.now += 10s;
  alarm.record(50, 10);
  CHECK(alarm.check().breached);
  CHECK(log.breaches.size() == 1);
  CHECK(log.recoveries.empty());

  // Clean traffic dilutes the window under 2 %.
  alarm.record(1000, 0);  // 33 of 1171: still above
  CHECK(log.recoveries.empty());
  alarm.record(600, 0);  // 33 of 1771: 1.86 %
  REQUIRE(log.recoveries.size() == 1);
  CHECK_FALSE(log.recoveries[0].breached);
  CHECK(log.recoveries[0].rate() < 0.02);
  alarm.record(100, 0);
  CHECK(log.recoveries.size() == 1);
  CHECK(log.breaches.size() == 1);
}

TEST_CASE("no traffic is quiet, and so is traffic under the minimum volume", "[alarm]") {
  manual_clock clock;
  alarm_log log;
  auto alarm = make_alarm(clock, log);

  for (int minute = 0; minute < 20; ++minute) {
    clock.now += 1min;
    CHECK_FALSE(alarm.check().breached);
  }
  alarm.record(99, 99);  // every response failed, but only 99 of them
  CHECK_FALSE(alarm.check().breached);
  CHECK(log.breaches.empty());
  CHECK(log.recoveries.empty());
}

TEST_CASE("the window slides: old failures leave it, and an idle window recovers", "[alarm]") {
  manual_clock clock;
  alarm_log log;
  auto alarm = make_alarm(clock, log);

  alarm.record(200, 10);
  REQUIRE(log.breaches.size() == 1);

  // Four minutes later the failures are still in the five-minute window.
  clock.now += 4min;
  alarm.record(200, 0);  // 10 of 400
  CHECK(alarm.breached());

  // Past five minutes the first batch has left: 0 of 200.
  clock.now += 61s + 5s;
  const auto reading = alarm.check();
  CHECK(reading.processed == 200);
  CHECK(reading.dead_lettered == 0);
  REQUIRE(log.recoveries.size() == 1);

  // Breached again, then the traffic stops: once the window is empty, a
  // check() recovers it; further checks stay quiet.
  alarm.record(100, 50);
  REQUIRE(log.breaches.size() == 2);
  clock.now += 6min;
  CHECK(alarm.check().processed == 0);
  CHECK(log.recoveries.size() == 2);
  clock.now += 6min;
  alarm.check();
  CHECK(log.recoveries.size() == 2);
  CHECK(log.breaches.size() == 2);
}

TEST_CASE("the window's memory is its buckets, whatever the time skipped", "[alarm]") {
  manual_clock clock;
  alarm_log log;
  llmdlq::dlq_rate_alarm_options options;
  options.window = 10s;
  options.buckets = 10;
  options.min_processed = 1;
  options.threshold = 0.5;
  options.clock = clock.function();
  llmdlq::dlq_rate_alarm alarm(options, [&log](const auto& r) { log.breaches.push_back(r); },
                               [&log](const auto& r) { log.recoveries.push_back(r); });

  for (int second = 0; second < 30; ++second) {
    alarm.record(second % 2 == 0);
    clock.now += 1s;
  }
  // The last ten seconds: five failed of ten.
  const auto reading = alarm.check();
  CHECK(reading.processed <= 10);
  CHECK(reading.processed >= 9);
  clock.now += std::chrono::hours(24 * 365);  // a year later: one pass over the ring, then empty
  CHECK(alarm.check().processed == 0);
  // A clock that steps back counts in the latest step, not a past one.
  clock.now -= 1h;
  alarm.record(false);
  CHECK(alarm.check().processed == 1);
}

TEST_CASE("a metrics registry feeds the alarm it carries", "[alarm][metrics]") {
  manual_clock clock;
  alarm_log log;
  llmdlq::dlq_rate_alarm_options alarm_options;
  alarm_options.min_processed = 10;
  alarm_options.clock = clock.function();
  auto alarm = std::make_shared<llmdlq::dlq_rate_alarm>(
      alarm_options, [&log](const auto& r) { log.breaches.push_back(r); },
      [&log](const auto& r) { log.recoveries.push_back(r); });
  auto m = std::make_shared<llmdlq::metrics>(llmdlq::metrics_options{.alarm = alarm});

  const auto schema = *llmdlq::schema::compile(R"({"type": "object", "required": ["total"]})");
  llmdlq::process_options options;
  options.metrics = m;
  for (int i = 0; i < 9; ++i) (void)llmdlq::process_llm_response(R"({"total": 1})", schema, {}, options);
  CHECK(log.breaches.empty());
  (void)llmdlq::process_llm_response("not json", schema, {}, options);
  REQUIRE(log.breaches.size() == 1);
  CHECK(log.breaches[0].processed == 10);
  CHECK(log.breaches[0].dead_lettered == 1);

  // Accepted responses reach the alarm only when it is fed: at the next dead
  // letter or check_alarm(), which places them in the window's current step.
  for (int i = 0; i < 90; ++i) (void)llmdlq::process_llm_response(R"({"total": 1})", schema, {}, options);
  CHECK(log.recoveries.empty());
  clock.now += 10s;
  m->check_alarm();
  REQUIRE(log.recoveries.size() == 1);
  CHECK(log.recoveries[0].processed == 100);
  m->check_alarm();
  CHECK(alarm->check().processed == 100);
  CHECK(log.recoveries.size() == 1);
}

}  // namespace dlq_rate_alarm_test
