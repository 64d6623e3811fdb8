// SPDX-License-Identifier: MIT
// Fuzzing the stream judge against the whole-text judgement: whatever the
// text, the options and the chunking, finish() is process_llm_response, the
// verdict does not depend on the chunking, and a text called dead is not
// accepted whole.
//
// Closed at a dead verdict, finish() keeps the verdict's category.
//
// Input: a flags byte (repair off, coercion, schema, small size limit,
// finish reason length, lossy repairs accepted), a chunking seed byte,
// then the response.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <llmdlq/envelope.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/stream_judge.hpp>

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_stream_judge: %s\n%.2000s\n", what, detail.c_str());
  std::abort();
}

// Schemas shaped like extraction schemas, with what the judge follows down
// the text ($ref, allOf, additionalProperties: false, prefixItems, enum,
// const, bounds, formats) and what it must leave to the whole (anyOf,
// required, patternProperties).
constexpr const char* schemas[] = {
    R"({"type": "object", "additionalProperties": false, "required": ["merchant", "total"],
        "properties": {"merchant": {"type": "string", "maxLength": 12, "pattern": "^[A-Z]"},
                       "total": {"type": "number", "minimum": 0, "maximum": 1000, "multipleOf": 0.01},
                       "currency": {"enum": ["EUR", "USD", null, 1]},
                       "date": {"type": "string", "format": "date"},
                       "items": {"type": "array", "maxItems": 3, "items": {"$ref": "#/$defs/item"}}},
        "$defs": {"item": {"type": "object", "maxProperties": 2, "additionalProperties": false,
                           "properties": {"name": {"type": "string"}, "qty": {"type": "integer", "exclusiveMinimum": 0}}}}})",
    R"({"allOf": [{"type": ["object", "array"]}, {"properties": {"a": {"const": "x"}}}],
        "prefixItems": [{"type": "boolean"}, {"type": "null"}], "items": false,
        "anyOf": [{"required": ["a"]}, {"type": "array"}],
        "patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": {"type": "string"}})",
    R"({"$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"n": {"type": "integer"}},
        "properties": {"n": {"$ref": "#/definitions/n", "type": "string"}, "list": {"items": [{"type": "string"}],
                       "additionalItems": {"type": "number"}}}})",
    R"({})",
};

const llmdlq::schema& schema_at(unsigned index) {
  static const auto compiled = [] {
    std::vector<llmdlq::schema> all;
    llmdlq::compile_options options;
    options.format_assertion = true;
    for (const char* text : schemas) {
      auto s = llmdlq::schema::compile(text, options);
      if (!s) fail("a schema does not compile", s.error().message);
      all.push_back(*std::move(s));
    }
    return all;
  }();
  return compiled[index % compiled.size()];
}

std::string outcome(const llmdlq::expected<llmdlq::accepted, llmdlq::envelope>& r) {
  if (!r) return "dead " + llmdlq::serialize(r.error());
  std::string text = "accepted " + r->json;
  for (const auto& a : r->repairs) text += " " + std::string(a.code);
  return text;
}

std::string describe(const llmdlq::stream_verdict& v) {
  return v.dead ? std::to_string(v.offset) + " " + std::string(llmdlq::to_string(v.category)) + " " + v.message
                : std::string("viable");
}

llmdlq::timestamp fixed_now() { return llmdlq::timestamp(std::chrono::milliseconds(1'790'000'000'000)); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t flags = data[0];
  std::uint32_t seed = data[1] * 2654435761u + 1;
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  const llmdlq::schema& schema = schema_at((flags >> 2) & 3u);
  llmdlq::process_options options;
  options.clock = fixed_now;
  options.repair = (flags & 1u) ? llmdlq::repair_mode::off : llmdlq::repair_mode::local;
  options.coerce = (flags & 2u) != 0;
  options.limits.max_size = (flags & 16u) ? 64 : 1u << 20;
  options.limits.max_depth = 32;
  llmdlq::request_context context;
  if (flags & 32u) context.finish_reason = "length";
  if (flags & 64u) {
    options.accept_repairs = {llmdlq::repair_tier::lossless, llmdlq::repair_tier::syntactic,
                              llmdlq::repair_tier::lossy};
  }

  const auto whole = llmdlq::process_llm_response(text, schema, context, options);
  const std::string want = outcome(whole);
  std::string verdict;
  for (int chunking = 0; chunking < 3; ++chunking) {
    llmdlq::stream_judge judge(schema, context, options);
    for (std::size_t at = 0; at < text.size();) {
      seed = seed * 1103515245u + 12345u;
      const std::size_t n = chunking == 0 ? text.size() : chunking == 1 ? 1 : 1 + (seed >> 16) % 23;
      judge.feed(text.substr(at, n));
      at += n;
    }
    const std::string now = describe(judge.verdict());
    if (chunking == 0) verdict = now;
    if (now != verdict) fail("the verdict depends on the chunking", verdict + "\n" + now);
    if (judge.verdict().dead && whole) fail("dead, but the whole text is accepted", now + "\n" + std::string(text));
    if (outcome(judge.finish()) != want) fail("finish() is not process_llm_response", want);
  }
  // Closed where it died, the answer's envelope says why it died (or that the text is poison).
  llmdlq::stream_judge judge(schema, context, options);
  for (std::size_t at = 0; at < text.size() && !judge.verdict().dead; ++at) judge.feed(text.substr(at, 1));
  if (judge.verdict().dead) {
    judge.cancel();
    const auto cut = judge.finish();
    if (cut) fail("a cancelled stream is accepted", describe(judge.verdict()));
    const auto category = cut.error().failure.category;
    if (category != judge.verdict().category && category != llmdlq::failure_category::poison) {
      fail("a cancelled stream's envelope is not its verdict's", describe(judge.verdict()) + "\n" + outcome(cut));
    }
    if (cut.error().failure.cancelled_at != llmdlq::cancel_point{judge.verdict().offset, std::nullopt}) {
      fail("a cancelled stream's envelope does not say where", describe(judge.verdict()));
    }
  }
  return 0;
}
