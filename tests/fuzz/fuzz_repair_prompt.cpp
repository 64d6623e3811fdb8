// SPDX-License-Identifier: MIT
// Fuzzing the repair prompt: whatever a failed response holds, the prompt
// stays within max_repair_prompt_bytes, its instruction is the fixed text
// (nothing of the response in it), and the response appears once, quoted
// whole or as a prefix, between the two boundary lines. A reply that
// repeats the boundary is always a breakout.
//
// Input: the response.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>
#include <llmdlq/llm/repair_prompt.hpp>
#include <llmdlq/process.hpp>

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "fuzz_repair_prompt: %s\n%.4000s\n", what, detail.c_str());
  std::abort();
}

const std::string& schema_text() {
  static const std::string text = [] {
    std::ifstream in(std::string(LLMDLQ_SOURCE_DIR) + "/examples/data/receipt.schema.json", std::ios::binary);
    return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }();
  return text;
}

std::size_t count(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto schema = *llmdlq::schema::compile(schema_text());
  static const auto schema_json = boost::json::parse(schema_text());
  const std::string_view response(reinterpret_cast<const char*>(data), size);
  llmdlq::request_context context;
  context.idempotency_key = "fuzz";
  auto judged = llmdlq::process_llm_response(response, schema, context);
  if (judged) return 0;
  const llmdlq::envelope& e = judged.error();

  // Small limits, so that cutting the output, the schema and the errors is exercised.
  llmdlq::repair_prompt_options options;
  options.max_output_bytes = 300;
  options.max_schema_bytes = 400;
  options.max_errors = 3;
  const auto prompt = llmdlq::build_repair_prompt(e, schema_json, options);
  if (prompt.size() > llmdlq::max_repair_prompt_bytes(options)) fail("the prompt is over its bound", prompt.user);

  // The instruction is fixed: the same text for every response, but the boundary.
  std::string fixed = prompt.system;
  for (auto at = fixed.find(prompt.boundary); at != std::string::npos; at = fixed.find(prompt.boundary)) {
    fixed.erase(at, prompt.boundary.size());
  }
  static const std::string first_instruction = fixed;
  if (fixed != first_instruction) fail("the instruction changed with the response", prompt.system);

  const std::string open = "<<<" + prompt.boundary + "\n";
  const std::string close = "\n" + prompt.boundary + ">>>";
  if (count(prompt.user, open) != 1 || count(prompt.user, close) != 1) fail("the boundary lines are not unique", prompt.user);
  const auto begin = prompt.user.find(open) + open.size();
  const auto end = prompt.user.find(close);
  if (end < begin) fail("the boundary lines are out of order", prompt.user);
  const std::string_view quoted = std::string_view(prompt.user).substr(begin, end - begin);
  const std::string_view stored =
      e.raw_response.text && !e.raw_response.base64 ? std::string_view(*e.raw_response.text) : std::string_view();
  if (!stored.starts_with(quoted) || quoted.size() > options.max_output_bytes) {
    fail("the quoted output is not a prefix of the stored response", prompt.user);
  }
  if (!llmdlq::find_breakout(std::string(response) + prompt.boundary, prompt)) fail("a repeated boundary passed");
  (void)llmdlq::find_breakout(response, prompt);
  return 0;
}
