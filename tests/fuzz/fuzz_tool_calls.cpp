// SPDX-License-Identifier: MIT
// Fuzzing tool calls: replies read whole, and streams decoded and judged
// call by call. A streamed call that ended is judged exactly as
// process_tool_call judges its arguments whole (the same envelope, byte for
// byte, with the stream's model), whatever the chunking; a call the stream called dead is never
// accepted; every letter round-trips through the envelope's JSON and names
// its call.
//
// Input: a flags byte (the API: OpenAI, Anthropic or Ollama; a whole reply
// or a stream; repair off; tools lowered for OpenAI), a chunking seed byte,
// then the reply's bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <llmdlq/envelope.hpp>
#include <llmdlq/judged_tool_stream.hpp>
#include <llmdlq/tool_call.hpp>

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_tool_calls: %s\n%.2000s\n", what, detail.c_str());
  std::abort();
}

constexpr const char* tool_definitions = R"([
  {"type": "function", "function": {"name": "record_receipt", "parameters": {"type": "object",
    "required": ["merchant", "total"], "additionalProperties": false,
    "properties": {"merchant": {"type": "string", "maxLength": 12}, "total": {"type": "number", "minimum": 0},
                   "date": {"type": "string", "format": "date"}, "note": {"type": "string"},
                   "items": {"type": "array", "maxItems": 3, "items": {"type": "string"}}}}}},
  {"name": "lookup", "input_schema": {"type": "object", "properties": {"q": {"enum": ["a", "b", null]}}}}
])";

const llmdlq::tool_registry& tools(bool lowered) {
  static const auto both = [] {
    llmdlq::compile_options options;
    options.format_assertion = true;
    auto plain = llmdlq::tool_registry::from_json(tool_definitions, options);
    if (!plain) fail("the tools do not compile", plain.error().message);
    auto openai = llmdlq::lower_tools(*plain, llmdlq::provider_profile::openai_strict);
    if (!openai) fail("the tools do not lower", openai.error().message);
    return std::pair{*std::move(plain), std::move(openai->registry)};
  }();
  return lowered ? both.second : both.first;
}

llmdlq::process_config config_for(bool repair_off) {
  llmdlq::process_config c;
  c.envelope.clock = [] { return *llmdlq::parse_rfc3339("2026-12-06T12:00:00.000Z"); };
  if (repair_off) c.judging.repair = llmdlq::repair_mode::off;
  return c;
}

void check_letter(const llmdlq::envelope& e, const llmdlq::tool_call& call) {
  const std::string json = llmdlq::serialize(e);
  auto back = llmdlq::parse_envelope(json);
  if (!back) fail("a letter does not read back", back.error().path + ": " + back.error().message + "\n" + json);
  if (!(*back == e)) fail("a letter changes in its round trip", json);
  if (!e.tool_call || e.tool_call->index != call.index) fail("a letter does not name its call", json);
}

void judge_whole(std::string_view body, llmdlq::chat_api api, const llmdlq::tool_registry& registry,
                 const llmdlq::process_config& config, const llmdlq::request_context& context) {
  const auto reply = llmdlq::read_tool_calls(body, api);
  if (!reply) return;
  for (const auto& judged : llmdlq::process_tool_calls(*reply, registry, context, config)) {
    if (!judged.result) check_letter(judged.result.error(), judged.call);
  }
}

void judge_streamed(std::string_view bytes, llmdlq::chat_stream_format format, unsigned seed,
                    const llmdlq::tool_registry& registry, const llmdlq::process_config& config,
                    const llmdlq::request_context& context) {
  llmdlq::judged_tool_stream stream(registry, format, context, config);
  std::size_t at = 0;
  unsigned state = seed * 2654435761u + 1;
  while (at < bytes.size()) {
    state = state * 1103515245u + 12345u;
    const std::size_t piece = 1 + (state >> 16) % 64;
    std::ignore = stream.feed(bytes.substr(at, piece));
    at += piece;
  }
  const llmdlq::tool_stream_verdict verdict = stream.verdict();
  const bool ended = stream.done();
  const auto refusal = stream.decoder().refusal();
  const std::string reason = stream.decoder().finish_reason();
  const std::string model = stream.decoder().model();
  const auto judged = stream.finish();
  for (std::size_t i = 0; i < judged.size(); ++i) {
    const auto& j = judged[i];
    if (!j.result) check_letter(j.result.error(), j.call);
    if (verdict.dead && verdict.call == j.call.index && j.result) {
      fail("a call the stream called dead is accepted", j.call.arguments);
    }
    if (!ended) continue;  // a stream cut short judges its last call as cut off
    llmdlq::request_context whole = context;
    if (refusal) whole.refusal = *refusal;
    if (whole.model.name.empty()) whole.model.name = model;
    if (i + 1 == judged.size()) whole.finish_reason = reason;
    const auto again = llmdlq::process_tool_call(j.call, registry, whole, config);
    if (again.has_value() != j.result.has_value() ||
        (!again && llmdlq::serialize(again.error()) != llmdlq::serialize(j.result.error()))) {
      fail("a streamed call is not judged as its arguments whole", j.call.name + "\n" + j.call.arguments);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const unsigned flags = data[0];
  const unsigned seed = data[1];
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 2, size - 2);
  const unsigned api = (flags & 3u) % 3;
  const bool whole = (flags & 4u) != 0;
  const llmdlq::tool_registry& registry = tools((flags & 16u) != 0);
  const llmdlq::process_config config = config_for((flags & 8u) != 0);
  llmdlq::request_context context;
  if (flags & 32u) context.idempotency_key = "reply-1";
  if (whole) {
    judge_whole(bytes, static_cast<llmdlq::chat_api>(api), registry, config, context);
  } else {
    constexpr llmdlq::chat_stream_format formats[] = {llmdlq::chat_stream_format::openai_sse,
                                                      llmdlq::chat_stream_format::anthropic_sse,
                                                      llmdlq::chat_stream_format::ollama_ndjson};
    judge_streamed(bytes, formats[api], seed, registry, config, context);
  }
  return 0;
}
