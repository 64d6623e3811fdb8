// SPDX-License-Identifier: MIT
// What a pipeline holds: the schema by value, and each sink through a
// sink_handle that refers to an lvalue and owns an rvalue or a smart pointer.
#include <memory>
#include <string>
#include <type_traits>

#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/memory_sink.hpp>
#include <llmdlq/metrics.hpp>
#include <llmdlq/pipeline.hpp>
#include <llmdlq/sink_handle.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"
#include "support/temp_dir.hpp"

namespace pipeline_test {

namespace {

constexpr std::string_view schema_text = R"({"type": "object", "required": ["total"]})";

// A misuse that must not compile: a raw pointer (owner unknown), a const
// sink (cannot publish), an abstract `sink&&` (cannot be moved from), a sink
// that cannot move (pass a smart pointer).
static_assert(!std::is_constructible_v<llmdlq::sink_handle, llmdlq::memory_sink*>);
static_assert(!std::is_constructible_v<llmdlq::sink_handle, const llmdlq::memory_sink&>);
static_assert(!std::is_constructible_v<llmdlq::sink_handle, const llmdlq::jsonl_file_sink&&>);
static_assert(!std::is_constructible_v<llmdlq::sink_handle, llmdlq::sink&&>);
static_assert(!std::is_constructible_v<llmdlq::sink_handle, llmdlq::memory_sink&&>);
static_assert(std::is_constructible_v<llmdlq::sink_handle, llmdlq::jsonl_file_sink&&>);
static_assert(std::is_constructible_v<llmdlq::sink_handle, std::unique_ptr<llmdlq::memory_sink>&&>);
static_assert(!std::is_constructible_v<llmdlq::sink_handle, std::unique_ptr<llmdlq::memory_sink>&>);
static_assert(std::is_constructible_v<llmdlq::sink_handle, std::shared_ptr<llmdlq::memory_sink>>);

llmdlq::request_context keyed(std::string key) {
  llmdlq::request_context context;
  context.idempotency_key = std::move(key);
  return context;
}

// A config whose envelopes are the same however often they are made: a fixed clock.
llmdlq::process_config fixed_config() {
  llmdlq::process_config config;
  config.envelope.clock = [] { return llmdlq::timestamp(std::chrono::seconds(1'800'000'000)); };
  config.envelope.failure_code_prefix = "ocr";
  config.metrics = std::make_shared<llmdlq::metrics>();
  return config;
}

}  // namespace

TEST_CASE("sink_handle refers to an lvalue and owns an rvalue or a smart pointer", "[pipeline]") {
  llmdlq::memory_sink kept;
  const llmdlq::sink_handle referring{kept};
  CHECK_FALSE(referring.owning());
  CHECK(&referring.get() == &kept);

  auto shared = std::make_shared<llmdlq::memory_sink>();
  const llmdlq::sink_handle sharing{shared};
  CHECK(sharing.owning());
  CHECK(&*sharing == shared.get());
  CHECK(shared.use_count() == 2);
  {
    const llmdlq::sink_handle copy = sharing;  // NOLINT(performance-unnecessary-copy-initialization)
    CHECK(&copy.get() == shared.get());
    CHECK(shared.use_count() == 3);
  }
  CHECK(shared.use_count() == 2);

  llmdlq::test::temp_dir dir;
  const llmdlq::sink_handle moved_in{*llmdlq::jsonl_file_sink::open(dir.path() / "dlq.jsonl")};
  CHECK(moved_in.owning());
  CHECK(moved_in->publish(llmdlq::make_envelope({.category = llmdlq::failure_category::syntax}, "{", keyed("k"))));
}

TEST_CASE("a pipeline built from temporaries works after the expression that made them", "[pipeline]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  auto spool = std::make_shared<llmdlq::memory_sink>();
  // The schema, the sink and the options are temporaries of this full-expression.
  const llmdlq::pipeline pipeline{*llmdlq::schema::compile(std::string(schema_text)),
                                  *llmdlq::jsonl_file_sink::open(path), llmdlq::process_options{}, spool};

  auto d = pipeline.handle(R"({"total": 3})", keyed("accepted"));
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.accepted.has_value());
  CHECK(d.accepted->json == R"({"total": 3})");

  d = pipeline.handle(R"({"sum": 3})", keyed("schema"));
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.dead_letter.has_value());
  llmdlq::test::check_envelope(*d.dead_letter);
  CHECK(d.dead_letter->failure.category == llmdlq::failure_category::schema);
  REQUIRE(d.stored.has_value());
  CHECK_FALSE(d.in_fallback);
  CHECK(d.stored->location.find(path.filename().string()) != std::string::npos);
  CHECK(llmdlq::test::slurp(path).find(d.stored->dlq_id) != std::string::npos);

  // A copy shares the sinks: the same dlq_id is a duplicate through it.
  const llmdlq::pipeline copy = pipeline;  // NOLINT(performance-unnecessary-copy-initialization)
  d = copy.handle(R"({"sum": 3})", keyed("schema"));
  REQUIRE(d.stored.has_value());
  CHECK(d.stored->duplicate);
  CHECK(spool->size() == 0);
}

TEST_CASE("a pipeline owns a sink handed over as a unique_ptr, and shares a fallback", "[pipeline]") {
  auto dlq = std::make_unique<llmdlq::memory_sink>();
  llmdlq::memory_sink& dlq_seen = *dlq;  // owned by the pipeline from here on
  auto spool = std::make_shared<llmdlq::memory_sink>();
  const llmdlq::pipeline pipeline{*llmdlq::schema::compile(std::string(schema_text)), std::move(dlq), {}, spool};
  dlq_seen.fail_next(1, {llmdlq::sink_errc::rejected, "too large"});
  const auto d = pipeline.handle("total: 3", keyed("spooled"));
  CHECK(d == llmdlq::disposition::commit);
  CHECK(d.in_fallback);
  CHECK(dlq_seen.size() == 0);
  CHECK(spool->size() == 1);
}

TEST_CASE("a pipeline's stream judge: a dead answer is closed, stored with where it died, and the input committed",
          "[pipeline][stream]") {
  auto schema = llmdlq::schema::compile(R"({"type": "object", "additionalProperties": false,
      "properties": {"total": {"type": "number"}}, "required": ["total"]})");
  REQUIRE(schema.has_value());
  llmdlq::memory_sink dead_letters;
  llmdlq::process_options options;
  options.repair = llmdlq::repair_mode::off;
  const llmdlq::pipeline p{*schema, dead_letters, options};

  auto judge = p.judge_stream(keyed("stream-1"));
  CHECK_FALSE(judge.feed(R"({"total": 1, )").dead);
  REQUIRE(judge.feed(R"("tip": 2)").dead);  // additionalProperties false: "tip" cannot be accepted
  judge.cancel(6);
  const auto d = p.settle(judge.finish());
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.dead_letter.has_value());
  REQUIRE(d.stored.has_value());
  const auto stored = dead_letters.find(d.stored->dlq_id);
  REQUIRE(stored.has_value());
  llmdlq::test::check_envelope(*stored);
  CHECK(stored->raw_response.text == R"({"total": 1, "tip": 2)");
  CHECK(stored->failure.cancelled_at == llmdlq::cancel_point{judge.verdict().offset, 6});
  CHECK(judge.verdict().offset == 17);  // the closing quote of "tip", a name the schema forbids

  // The same stream again stores nothing twice; a sink that fails says retry.
  auto again = p.judge_stream(keyed("stream-1"));
  again.feed(R"({"total": 1, "tip": 2)");
  again.cancel(6);
  CHECK(p.settle(again.finish()).stored->duplicate);
  CHECK(dead_letters.size() == 1);
  dead_letters.fail_next(1);
  auto failing = p.judge_stream(keyed("stream-2"));
  failing.feed(R"({"total": "x")");
  CHECK(p.settle(failing.finish()) == llmdlq::disposition::retry);

  // A streamed answer accepted at its end: committed, nothing stored.
  auto fine = p.judge_stream(keyed("stream-3"));
  for (const std::string_view piece : {R"({"to)", R"(tal")", R"(: 12.5})"}) CHECK_FALSE(fine.feed(piece).dead);
  const auto ok = p.settle(fine.finish("stop"));
  CHECK(ok == llmdlq::disposition::commit);
  REQUIRE(ok.accepted.has_value());
  CHECK(ok.accepted->value().at("total") == 12.5);
  CHECK(dead_letters.size() == 1);
}

TEST_CASE("a pipeline without a sink hands back what it judged: the document, its repairs, each envelope",
          "[pipeline]") {
  const auto schema = llmdlq::schema::compile(std::string(schema_text));
  REQUIRE(schema.has_value());
  const llmdlq::process_config config = fixed_config();
  const llmdlq::pipeline alone{*schema, config};
  CHECK_FALSE(alone.publishes());
  CHECK_FALSE(alone.records_traffic());

  auto d = alone.handle(R"({"total": 3})", keyed("accepted"));
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.accepted.has_value());
  CHECK(d.accepted->json == R"({"total": 3})");
  CHECK_FALSE(d.accepted->repaired());
  CHECK_FALSE(d.dead_letter.has_value());

  d = alone.handle(R"({"total": 3,})", keyed("repaired"));
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.accepted.has_value());
  REQUIRE(d.accepted->repaired());
  CHECK(d.accepted->value().at("total") == 3);
  CHECK_FALSE(d.dead_letter.has_value());

  // A failure is committed with its envelope, unstored: exactly what process_llm_response makes.
  d = alone.handle(R"({"sum": 3})", keyed("schema"));
  CHECK(d == llmdlq::disposition::commit);
  CHECK_FALSE(d.accepted.has_value());
  REQUIRE(d.dead_letter.has_value());
  CHECK_FALSE(d.stored.has_value());
  CHECK_FALSE(d.error.has_value());
  CHECK_FALSE(d.in_fallback);
  CHECK_FALSE(d.rejected());
  llmdlq::test::check_envelope(*d.dead_letter);
  CHECK(d.dead_letter->failure.category == llmdlq::failure_category::schema);
  CHECK(d.dead_letter->failure.code == "ocr_schema_violation");
  llmdlq::process_config uncounted = config;
  uncounted.metrics = nullptr;
  const auto judged = llmdlq::process_llm_response(R"({"sum": 3})", *schema, keyed("schema"), uncounted);
  REQUIRE_FALSE(judged.has_value());
  CHECK(llmdlq::serialize(*d.dead_letter) == llmdlq::serialize(judged.error()));

  // An envelope made elsewhere comes back as it went in.
  const auto made = llmdlq::make_envelope({.category = llmdlq::failure_category::poison, .message = "context length"},
                                          "...", keyed("made"), uncounted);
  d = alone.dead_letter(made);
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.dead_letter.has_value());
  CHECK(llmdlq::serialize(*d.dead_letter) == llmdlq::serialize(made));

  // Judged responses are counted as a pipeline with a sink counts them; no sink is.
  const auto counted = config.metrics->snapshot();
  CHECK(counted.accepted == 2);
  CHECK(counted.processed == 3);
  CHECK(counted.sinks.empty());
  CHECK(alone.flush_traffic().has_value());
}

TEST_CASE("a pipeline without a sink hands back every envelope a pipeline with one would store", "[pipeline]") {
  const auto schema = llmdlq::schema::compile(std::string(schema_text));
  REQUIRE(schema.has_value());
  llmdlq::memory_sink dead_letters;
  const llmdlq::pipeline stored{*schema, dead_letters, fixed_config()};
  const llmdlq::pipeline alone{*schema, fixed_config()};
  const std::string_view responses[] = {"I cannot help with that.", "", R"({"total": )", "total: 3", R"({"sum": 3})",
                                        "{\"total\": \"\xff\"}"};
  int key = 0;
  for (const std::string_view raw : responses) {
    INFO(raw);
    const auto context = keyed("response-" + std::to_string(++key));
    const auto published = stored.handle(raw, context);
    const auto handed_back = alone.handle(raw, context);
    REQUIRE(published.stored.has_value());
    REQUIRE(handed_back.dead_letter.has_value());
    CHECK(handed_back == llmdlq::disposition::commit);
    const auto kept = dead_letters.find(published.stored->dlq_id);
    REQUIRE(kept.has_value());
    CHECK(llmdlq::serialize(*handed_back.dead_letter) == llmdlq::serialize(*kept));
  }
  CHECK(dead_letters.size() == std::size(responses));

  // A streamed answer judged by the pipeline's own stream judge is settled the same way.
  auto judge = alone.judge_stream(keyed("stream"));
  judge.feed(R"({"sum": 1})");
  const auto settled = alone.settle(judge.finish("stop"));
  CHECK(settled == llmdlq::disposition::commit);
  REQUIRE(settled.dead_letter.has_value());
  CHECK(settled.dead_letter->failure.category == llmdlq::failure_category::schema);
}

}  // namespace pipeline_test
