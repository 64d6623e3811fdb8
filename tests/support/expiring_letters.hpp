// SPDX-License-Identifier: MIT
// A DLQ's worth of envelopes for purge tests: some expired at a known time,
// some not, one without expires_at, and the purge time between them.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <llmdlq/process.hpp>
#include <llmdlq/purge.hpp>

namespace llmdlq::test {

/// Three envelopes expired by `purge_time` (at purge_time - 2 days,
/// purge_time - 1 day and exactly purge_time), two that expire later and one
/// without expires_at.
struct expiring_letters {
  timestamp purge_time = *parse_rfc3339("2026-06-01T00:00:00.000Z");
  std::vector<envelope> expired;
  std::vector<envelope> kept;

  expiring_letters() {
    using namespace std::chrono_literals;
    const auto make = [&](const std::string& key, timestamp expires_at) {
      request_context context;
      context.idempotency_key = key;
      process_options options;
      options.clock = [&] { return expires_at - 24h; };
      options.retention = 24h;
      return make_envelope({.category = failure_category::syntax, .message = "test failure"}, "raw", context,
                           options);
    };
    expired.push_back(make("expired-oldest", purge_time - 48h));
    expired.push_back(make("expired-middle", purge_time - 24h));
    expired.push_back(make("expired-at-now", purge_time));
    kept.push_back(make("kept-soon", purge_time + 1ms));
    kept.push_back(make("kept-later", purge_time + 24h));
    envelope forever = make("kept-forever", purge_time - 72h);
    forever.expires_at.reset();
    kept.push_back(forever);
  }

  [[nodiscard]] std::vector<envelope> all() const {
    std::vector<envelope> letters = expired;
    letters.insert(letters.end(), kept.begin(), kept.end());
    return letters;
  }

  [[nodiscard]] purge_request request(bool dry_run = false) const {
    return {.now = purge_time, .operator_name = "alice", .dry_run = dry_run};
  }

  /// What purging them at purge_time reports.
  [[nodiscard]] purge_report expected_report(bool dry_run = false) const {
    auto report = purge_report::for_request(request(dry_run));
    for (const auto& e : expired) report.add(*e.expires_at);
    return report;
  }
};

}  // namespace llmdlq::test
