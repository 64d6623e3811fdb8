// SPDX-License-Identifier: MIT
// Fuzzing lower_schema, check_provider_schema and map_forced_nulls: any
// JSON lowers for every profile without a crash; what is lowered for strict
// mode is what that profile's strict mode takes; an answer (any strict
// JSON) mapped back is strict JSON that only lost members whose value is
// null, and mapping it again changes nothing.
//
// Input: the schema, a line holding only `---`, then the answer.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <llmdlq/json_parser.hpp>
#include <llmdlq/provider_schema.hpp>

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_provider_schema: %s\n%.2000s\n", what, detail.c_str());
  std::abort();
}

// Whether `cut` (what one forced_null action took out) is one member whose
// value is null, with at most the separators around it.
bool one_null_member(std::string_view cut) {
  const auto blank_or_comma = [](char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!cut.empty() && blank_or_comma(cut.front())) cut.remove_prefix(1);
  while (!cut.empty() && blank_or_comma(cut.back())) cut.remove_suffix(1);
  if (cut.empty() || cut.front() != '"' || !cut.ends_with("null")) return false;
  const std::string member = "{" + std::string(cut) + "}";
  if (!llmdlq::is_strict_json(member)) return false;
  const auto v = boost::json::parse(member);
  return v.as_object().size() == 1 && v.as_object().begin()->value().is_null();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = input.find("\n---\n");
  const std::string_view schema_text = input.substr(0, cut);
  const std::string_view answer = cut == std::string_view::npos ? std::string_view() : input.substr(cut + 5);
  boost::system::error_code ec;
  boost::json::parse_options depth;
  depth.max_depth = 64;
  const boost::json::value schema = boost::json::parse(schema_text, ec, {}, depth);
  if (ec) return 0;
  const bool strict_answer = llmdlq::is_strict_json(answer);
  for (const auto profile :
       {llmdlq::provider_profile::full, llmdlq::provider_profile::openai_strict, llmdlq::provider_profile::gemini,
        llmdlq::provider_profile::anthropic, llmdlq::provider_profile::ollama}) {
    const auto lowered = llmdlq::lower_schema(schema, profile);
    if (!lowered) fail("a JSON schema does not lower", lowered.error().message);
    if (lowered->strict && llmdlq::check_provider_schema(lowered->schema, profile)) {
      fail("what is lowered for strict mode is refused", lowered->text());
    }
    if (!lowered->strict && lowered->reason.empty()) fail("not strict, and no reason", lowered->text());
    if (!lowered->nulls || !strict_answer) continue;
    const auto mapped = llmdlq::map_forced_nulls(answer, *lowered->nulls);
    if (!llmdlq::is_strict_json(mapped.json)) fail("mapped back, the answer is not JSON", mapped.json);
    for (const auto& a : mapped.actions) {
      if (!one_null_member(a.before)) fail("mapping back took out more than a null member", a.before);
    }
    if (!llmdlq::map_forced_nulls(mapped.json, *lowered->nulls).actions.empty()) {
      fail("mapping back twice takes out more", mapped.json);
    }
  }
  return 0;
}
