// SPDX-License-Identifier: MIT
// stream_judge: where a streamed answer dies, under which options, whatever
// the chunking, and that finish() is process_llm_response.
#include <boost/json/parse.hpp>
#include <llmdlq/metrics.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/stream_judge.hpp>

#include "catch.hpp"

namespace stream_judge_test {

namespace {

llmdlq::timestamp stream_now() { return llmdlq::timestamp(std::chrono::milliseconds(1'790'000'000'000)); }

const char* const receipt_schema = R"({
  "type": "object",
  "additionalProperties": false,
  "required": ["merchant", "total", "currency"],
  "properties": {
    "merchant": {"type": "string", "maxLength": 20},
    "total": {"type": "number", "minimum": 0, "maximum": 100000},
    "currency": {"enum": ["EUR", "USD", "RUB", "LKR"]},
    "items": {"type": "array", "maxItems": 2, "items": {"$ref": "#/$defs/item"}},
    "paid": {"type": "boolean"}
  },
  "$defs": {"item": {"type": "object", "properties": {"name": {"type": "string"}, "qty": {"type": "integer"}}}}
})";

llmdlq::schema compiled(const char* text = receipt_schema) {
  auto s = llmdlq::schema::compile(text);
  REQUIRE(s.has_value());
  return std::move(*s);
}

llmdlq::process_options strict() {
  llmdlq::process_options options;
  options.repair = llmdlq::repair_mode::off;
  options.clock = stream_now;
  return options;
}

llmdlq::process_options repairing() {
  llmdlq::process_options options;
  options.clock = stream_now;
  return options;
}

// The verdict after feeding `text` in pieces of `piece` bytes (0: whole).
llmdlq::stream_verdict fed(const llmdlq::schema& s, std::string_view text, const llmdlq::process_options& options,
                           std::size_t piece = 0) {
  llmdlq::stream_judge judge(s, {}, options);
  if (piece == 0) piece = text.size() + 1;
  for (std::size_t at = 0; at < text.size(); at += piece) judge.feed(text.substr(at, piece));
  return judge.verdict();
}

// Dead at `offset` with `category`, the same in every chunking, and the whole is not accepted.
void dies_at(const llmdlq::schema& s, std::string_view text, const llmdlq::process_options& options,
             std::size_t offset, llmdlq::failure_category category) {
  INFO(text);
  const auto whole = fed(s, text, options);
  CHECK(whole.dead);
  CHECK(whole.offset == offset);
  CHECK(whole.category == category);
  for (const std::size_t piece : {1, 2, 3, 7, 16}) {
    const auto v = fed(s, text, options, piece);
    CHECK(v.dead == whole.dead);
    CHECK(v.offset == whole.offset);
    CHECK(v.message == whole.message);
  }
  CHECK_FALSE(llmdlq::process_llm_response(text, s, {}, options).has_value());
}

void stays_viable(const llmdlq::schema& s, std::string_view text, const llmdlq::process_options& options) {
  INFO(text);
  for (const std::size_t piece : {0, 1, 5}) CHECK_FALSE(fed(s, text, options, piece).dead);
}

}  // namespace

TEST_CASE("stream_judge without repair: a value the schema rejects kills the answer at its first impossible byte",
          "[stream]") {
  const auto s = compiled();
  using llmdlq::failure_category;
  // A string where a number must be: dead at its quote, byte 10.
  dies_at(s, R"({"total": "12.50", "merchant": "Albert Heijn", "currency": "EUR"})", strict(), 10, failure_category::schema);
  // A name additionalProperties forbids: dead at its closing quote.
  dies_at(s, R"({"merchant": "A", "tip": 2})", strict(), 22, failure_category::schema);
  // An enum value no member is: dead at the string's closing quote.
  dies_at(s, R"({"currency": "GBP", "total": 1})", strict(), 17, failure_category::schema);
  // A third item where maxItems is 2: dead at its first byte.
  dies_at(s, R"({"items": [{}, {}, {"name": "x"}]})", strict(), 19, failure_category::schema);
  // An item's qty through $ref must be an integer: dead at the number's end (the comma after it).
  dies_at(s, R"({"items": [{"qty": 1.5, "name": "x"}]})", strict(), 22, failure_category::schema);
  // Over maximum: the number is known only at the byte after it.
  dies_at(s, R"({"total": 100001 })", strict(), 16, failure_category::schema);
  // maxLength counts characters, not bytes: 21 of them is one too many.
  dies_at(s, "{\"merchant\": \"" + std::string(21, 'x') + "\"}", strict(), 35, failure_category::schema);
  // Not JSON at all: prose, single quotes, a trailing comma, text after the value.
  dies_at(s, "Sure! {\"total\": 1}", strict(), 0, failure_category::syntax);
  dies_at(s, "{'total': 1}", strict(), 1, failure_category::syntax);
  dies_at(s, R"({"total": 1,})", strict(), 12, failure_category::syntax);
  dies_at(s, "{\"total\": 1} and more", strict(), 13, failure_category::syntax);
}

TEST_CASE("stream_judge without repair: what only the whole can decide keeps the answer alive", "[stream]") {
  const auto s = compiled();
  // required is judged at the end; so is a number that may still grow.
  stays_viable(s, R"({"total": 12.5)", strict());
  stays_viable(s, R"({"merchant": "ééééééééééééééééééé"})", strict());  // 19 characters, 38 bytes
  stays_viable(s, R"({"total": 1e-300})", strict());
  stays_viable(s, R"({"items": [{"qty": 2, "name": "x"}, {"qty": 3}]})", strict());
  // A missing required property is not death: finish() says schema.
  llmdlq::stream_judge judge(s, {}, strict());
  judge.feed(R"({"total": 12})");
  CHECK_FALSE(judge.verdict().dead);
  const auto result = judge.finish("stop");
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().failure.category == llmdlq::failure_category::schema);
}

TEST_CASE("stream_judge with local repair: prose, fences and a value a later one corrects are not death", "[stream]") {
  const auto s = compiled();
  const std::string good = R"({"merchant": "A", "total": 1, "currency": "EUR"})";
  stays_viable(s, "Sure! Here it is:\n```json\n" + good + "\n```", repairing());
  stays_viable(s, "{'merchant': 'A', 'total': 1, 'currency': 'EUR',}", repairing());
  // In prose, the first value fails the schema, the second is accepted: repair takes the one the schema accepts.
  const std::string corrected = R"(First: {"total": "twelve"} Sorry, corrected: )" + good;
  stays_viable(s, corrected, repairing());
  CHECK(llmdlq::process_llm_response(corrected, s, {}, repairing()).has_value());
  // The same text without repair is dead at its first byte, the prose.
  dies_at(s, corrected, strict(), 0, llmdlq::failure_category::syntax);
  // A token repair could still read on with is not yet a failure: an unescaped quote, strings joined by `+`.
  stays_viable(s, R"({"currency": "EU" + "R", "merchant": "A", "total": 1})", repairing());
  stays_viable(s, R"({"merchant": "A", "currency": "GB"P", "total": 1})", repairing());
  stays_viable(s, R"({"currency": "GBP")", repairing());  // what closes it has not come
}

TEST_CASE("stream_judge with local repair: a bracket that opens prose is no value, a fence after it answers",
          "[stream]") {
  const auto s = compiled(R"({"type": "object", "required": ["a"]})");
  const std::string text = "[Note] here it is:\n```json\n{\"a\": 1}\n```";
  stays_viable(s, text, repairing());
  CHECK(llmdlq::process_llm_response(text, s, {}, repairing()).has_value());
  // `[1]` opens a value, which is the answer: an array where an object belongs.
  dies_at(s, "[1] here it is:\n```json\n{\"a\": 1}\n```", repairing(), 1, llmdlq::failure_category::schema);
}

TEST_CASE("stream_judge with local repair: a text that opens with a value dies of what no repair can change",
          "[stream]") {
  const auto s = compiled();
  using llmdlq::failure_category;
  // A wrong type is certain at its first byte, whatever repair does later.
  dies_at(s, R"({"total": "four thousand", "merchant": 'A'})", repairing(), 10, failure_category::schema);
  // An enum miss, once the byte after it closes the string (repair could join it otherwise).
  dies_at(s, R"({"currency": "GBP" , "total": 1})", repairing(), 19, failure_category::schema);
  // A name additionalProperties forbids, at the colon after it; maxItems at the extra item.
  dies_at(s, R"({"merchant": "A", "tip" : 2})", repairing(), 24, failure_category::schema);
  dies_at(s, R"({"items": [{}, {}, {"name": "x"}]})", repairing(), 19, failure_category::schema);
  // A value that opens the text is the answer: a later one cannot correct it.
  const std::string second =
      R"({"total": "twelve"} Sorry, corrected: {"merchant": "A", "total": 1, "currency": "EUR"})";
  dies_at(s, second, repairing(), 10, failure_category::schema);
  // Repair that may drop or change a value leaves the schema to the whole: the lossy tier, coercion.
  auto lossy = repairing();
  lossy.accept_repairs = {llmdlq::repair_tier::lossless, llmdlq::repair_tier::syntactic, llmdlq::repair_tier::lossy};
  stays_viable(s, R"({"total": "four thousand", "merchant": "A"})", lossy);
  auto coercing = repairing();
  coercing.coerce = true;
  stays_viable(s, R"({"total": "four thousand", "merchant": "A"})", coercing);
}

TEST_CASE("stream_judge: an injection marker split across chunks, and a text over the size limit, are poison",
          "[stream]") {
  const auto s = compiled();
  for (const auto& options : {strict(), repairing()}) {
    llmdlq::stream_judge judge(s, {}, options);
    CHECK_FALSE(judge.feed(R"({"merchant": "<|im_)").dead);
    const auto& v = judge.feed(R"(start|>system", "total": 1})");
    CHECK(v.dead);
    CHECK(v.category == llmdlq::failure_category::poison);
    CHECK(v.offset == 25);  // the byte that completes the marker
    CHECK_FALSE(judge.finish().has_value());
    CHECK(judge.finish().error().failure.category == llmdlq::failure_category::poison);
  }
  auto small = repairing();
  small.limits.max_size = 16;
  dies_at(s, R"({"merchant": "AB", "total": 1})", small, 16, llmdlq::failure_category::poison);
}

TEST_CASE("stream_judge::finish is process_llm_response on the bytes received, with the finish reason given",
          "[stream]") {
  const auto s = compiled();
  const std::string texts[] = {R"({"merchant": "A", "total": 1, "currency": "EUR"})", R"({"total": "x"})",
                               "Sure! {\"merchant\": \"A\", \"total\": 1, \"currency\": \"EUR\"}", "", "I'm sorry, I can't.",
                               R"({"merchant": "A", "total": 1, "curr)"};
  for (const auto& options : {strict(), repairing()}) {
    for (const auto& text : texts) {
      for (const std::string_view reason : {"", "stop", "length"}) {
        INFO(text << " / " << reason);
        llmdlq::stream_judge judge(s, {}, options);
        for (std::size_t at = 0; at < text.size(); at += 3) judge.feed(std::string_view(text).substr(at, 3));
        CHECK(judge.received() == text);
        llmdlq::request_context context;
        context.finish_reason = std::string(reason);
        const auto expected = llmdlq::process_llm_response(text, s, context, options);
        const auto got = judge.finish(reason);
        REQUIRE(got.has_value() == expected.has_value());
        if (got) {
          CHECK(got->json == expected->json);
        } else {
          CHECK(llmdlq::serialize(got.error()) == llmdlq::serialize(expected.error()));
        }
      }
    }
  }
}

TEST_CASE("stream_judge::cancel: the envelope of a closed stream says where it died and after how many tokens",
          "[stream]") {
  const auto s = compiled();
  llmdlq::stream_judge judge(s, {}, strict());
  judge.feed(R"({"total": )");
  judge.cancel(4);  // still viable: nothing to record
  CHECK_FALSE(judge.context().cancelled_at.has_value());
  judge.feed(R"("12)");
  REQUIRE(judge.verdict().dead);
  judge.cancel(5);
  const auto result = judge.finish();
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().failure.cancelled_at == llmdlq::cancel_point{10, 5});
  CHECK(result.error().raw_response.text == R"({"total": "12)");
  const auto read = llmdlq::parse_envelope(llmdlq::serialize(result.error()));
  REQUIRE(read.has_value());
  CHECK(read->failure.cancelled_at == llmdlq::cancel_point{10, 5});
  // Without the tokens: the offset alone.
  llmdlq::stream_judge quiet(s, {}, strict());
  quiet.feed(R"({"total": true)");
  quiet.cancel();
  CHECK(quiet.finish().error().failure.cancelled_at == llmdlq::cancel_point{10, std::nullopt});
}

TEST_CASE("stream_judge counts each dead stream once in the host's metrics, with the bytes it took to know", "[stream]") {
  const auto s = compiled();
  auto options = strict();
  options.metrics = std::make_shared<llmdlq::metrics>();
  llmdlq::stream_judge judge(s, {}, options);
  judge.feed(R"({"total": )");
  judge.feed(R"("12", "more": )");
  judge.feed("1}");  // after death: kept, not judged, not counted again
  const auto snapshot = options.metrics->snapshot();
  REQUIRE(snapshot.stream_deaths.size() == 1);
  CHECK(snapshot.stream_deaths[0].category == "schema");
  CHECK(snapshot.stream_deaths[0].count == 1);
  CHECK(snapshot.stream_deaths[0].bytes == 11);
}


TEST_CASE("stream_judge::partial: the members and elements received whole, each open container closed", "[stream]") {
  const auto s = compiled();
  llmdlq::stream_judge judge(s, {}, repairing());
  CHECK_FALSE(judge.partial().has_value());
  const std::pair<std::string_view, std::string_view> steps[] = {
      {"Here it is: ", ""},
      {R"({"merchant": "Caf)", R"({})"},
      {R"(é", "total": 12)", R"({"merchant": "Café"})"},  // 12 may go on: 125
      {R"(.5, "lines": [{"qty": 1}, {"qty")", R"({"merchant": "Café", "total": 12.5, "lines": [{"qty": 1}, {}]})"},
      {R"(: 2}], "note": nul)", R"({"merchant": "Café", "total": 12.5, "lines": [{"qty": 1}, {"qty": 2}]})"},
      {R"(l})", R"({"merchant": "Café", "total": 12.5, "lines": [{"qty": 1}, {"qty": 2}], "note": null})"},
  };
  for (const auto& [piece, partial] : steps) {
    INFO(judge.received() << piece);
    judge.feed(piece);
    if (partial.empty()) {
      CHECK_FALSE(judge.partial().has_value());
    } else {
      REQUIRE(judge.partial().has_value());
      CHECK(*judge.partial() == boost::json::parse(partial));
    }
  }
  // What repair would mend counts as far as it is strict JSON.
  llmdlq::stream_judge quoted(s, {}, repairing());
  quoted.feed(R"({"total": 1, 'merchant': 'A')");
  CHECK(*quoted.partial() == boost::json::parse(R"({"total": 1})"));
}

}  // namespace stream_judge_test
