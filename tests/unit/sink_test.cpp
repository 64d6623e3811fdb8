// SPDX-License-Identifier: MIT
// The memory and JSON Lines sinks, and the pipeline's commit/retry answer.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/memory_sink.hpp>
#include <llmdlq/pipeline.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

namespace sink_test {

namespace {

llmdlq::envelope sample(std::string key, std::string_view raw = "not json") {
  llmdlq::request_context context;
  context.idempotency_key = std::move(key);
  return llmdlq::test::check_envelope(
      llmdlq::make_envelope({.category = llmdlq::failure_category::syntax, .message = "not JSON"}, raw, context));
}

const llmdlq::schema& any_object() {
  static const auto schema = *llmdlq::schema::compile(R"({"type": "object", "required": ["total"]})");
  return schema;
}

}  // namespace

TEST_CASE("memory_sink stores, recognises re-publishes, and fails on demand", "[sink]") {
  llmdlq::memory_sink sink;
  const auto e = sample("a");
  auto first = sink.publish(e);
  REQUIRE(first.has_value());
  CHECK_FALSE(first->duplicate);
  auto again = sink.publish(e);
  REQUIRE(again.has_value());
  CHECK(again->duplicate);
  CHECK(sink.size() == 1);
  CHECK(sink.find(e.dlq_id) == e);

  sink.fail_next(2);
  CHECK_FALSE(sink.publish(sample("b")).has_value());
  CHECK_FALSE(sink.publish(sample("c")).has_value());
  CHECK(sink.publish(sample("d")).has_value());
  CHECK(sink.size() == 2);
}

TEST_CASE("memory_sink is safe to share between threads", "[sink]") {
  // Catch2's assertions are not thread-safe: the threads only count.
  std::vector<llmdlq::envelope> envelopes;
  for (int i = 0; i < 400; ++i) envelopes.push_back(sample("k" + std::to_string(i)));
  llmdlq::memory_sink sink;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        if (!sink.publish(envelopes[static_cast<std::size_t>(t * 100 + i)])) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
  CHECK(sink.size() == 400);
}

TEST_CASE("jsonl_file_sink appends whole lines that read back as envelopes", "[sink]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  std::vector<llmdlq::envelope> written;
  {
    auto sink = llmdlq::jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    written.push_back(sample("one"));
    auto r = sink->publish(written.back());
    REQUIRE(r.has_value());
    CHECK(r->location.ends_with(":1"));
    const std::vector<llmdlq::envelope> batch{sample("two"), sample("three", "Caf\xE9")};
    auto receipts = sink->publish_batch(batch);
    REQUIRE(receipts.has_value());
    CHECK(receipts->back().location.ends_with(":3"));
    written.insert(written.end(), batch.begin(), batch.end());
  }
  auto contents = llmdlq::read_jsonl_envelopes(path);
  REQUIRE(contents.has_value());
  CHECK(contents->skipped_lines == 0);
  CHECK(contents->envelopes == written);
  CHECK(contents->envelopes[2].raw_response.base64);
}

TEST_CASE("jsonl_file_sink removes a line a crash left half-written", "[sink]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  const auto kept = sample("kept");
  {
    std::ofstream out(path, std::ios::binary);
    out << llmdlq::serialize(kept) << '\n';
    const std::string torn = llmdlq::serialize(sample("torn"));
    out << torn.substr(0, torn.size() / 2);  // the process died mid-write
  }
  auto sink = llmdlq::jsonl_file_sink::open(path);
  REQUIRE(sink.has_value());
  CHECK(sink->recovered_bytes() > 0);
  const auto next = sample("next");
  auto r = sink->publish(next);
  REQUIRE(r.has_value());
  CHECK(r->location.ends_with(":2"));
  auto contents = llmdlq::read_jsonl_envelopes(path);
  REQUIRE(contents.has_value());
  CHECK(contents->skipped_lines == 0);
  REQUIRE(contents->envelopes.size() == 2);
  CHECK(contents->envelopes[0] == kept);
  CHECK(contents->envelopes[1] == next);
}

TEST_CASE("jsonl_file_sink reports a full disk, and the pipeline then says retry", "[sink][pipeline]") {
  if (::access("/dev/full", W_OK) != 0) LLMDLQ_SKIP("/dev/full is not writable here");
  auto sink = llmdlq::jsonl_file_sink::open("/dev/full");
  REQUIRE(sink.has_value());
  auto r = sink->publish(sample("x"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == llmdlq::sink_errc::io_error);
  CHECK(r.error().message.find("No space left on device") != std::string::npos);

  llmdlq::pipeline pipeline{any_object(), *sink};
  const auto d = pipeline.handle("[oops", {});
  CHECK(d == llmdlq::disposition::retry);
  CHECK_FALSE(d.should_commit());
  REQUIRE(d.dead_letter.has_value());  // nothing is lost: the envelope is still in hand
  REQUIRE(d.error.has_value());
}

TEST_CASE("jsonl_file_sink: an unopenable path is an error, not a crash", "[sink]") {
  auto sink = llmdlq::jsonl_file_sink::open("/nonexistent-dir/dlq.jsonl");
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == llmdlq::sink_errc::io_error);
}

TEST_CASE("pipeline: commit when accepted or durably dead-lettered, retry when the sink fails", "[pipeline]") {
  llmdlq::memory_sink sink;
  llmdlq::pipeline pipeline{any_object(), sink};
  llmdlq::request_context context;
  context.idempotency_key = "msg-1";

  auto d = pipeline.handle(R"({"total": 3})", context);
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.accepted.has_value());
  CHECK(sink.size() == 0);

  d = pipeline.handle(R"({"sum": 3})", context);
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.stored.has_value());
  REQUIRE(d.dead_letter.has_value());
  llmdlq::test::check_envelope(*d.dead_letter);
  CHECK(sink.find(d.stored->dlq_id).has_value());

  sink.fail_next(1);
  context.idempotency_key = "msg-2";
  d = pipeline.handle("total: 3", context);
  CHECK(d == llmdlq::disposition::retry);
  REQUIRE(d.error.has_value());
  CHECK(d.error->code == llmdlq::sink_errc::unavailable);
  CHECK(sink.size() == 1);
  // The host retries the same input later; now the sink works.
  d = pipeline.handle("total: 3", context);
  CHECK(d == llmdlq::disposition::commit);
  CHECK(sink.size() == 2);
}

}  // namespace sink_test
