// SPDX-License-Identifier: MIT
// Fuzzing the whole judgement of a response against the receipt schema: an
// accepted document is valid, and a dead-letter envelope is always one the
// DLQ can hold: valid against schemas/envelope-v1.json, read back unchanged,
// within the size cap, and with the response and the input stored as a
// prefix whose length and hash describe the whole text.
//
// Input: a cap byte, a flags byte, then the response, a NUL byte and the
// original input (without a NUL, there is no original input).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>

#include <llmdlq/detail/identifiers.hpp>
#include <llmdlq/envelope.hpp>
#include <llmdlq/json_parser.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/schema.hpp>

namespace {

[[noreturn]] void fail(const char* what, const std::string& envelope_json = {}) {
  std::fprintf(stderr, "fuzz_process: %s\n%.4000s\n", what, envelope_json.c_str());
  std::abort();
}

llmdlq::schema compile_file(const char* relative_path, bool format_assertion) {
  std::ifstream in(std::string(LLMDLQ_SOURCE_DIR) + "/" + relative_path, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  llmdlq::compile_options options;
  options.format_assertion = format_assertion;
  auto schema = llmdlq::schema::compile(text, options);
  if (!schema) fail(relative_path);
  return *std::move(schema);
}

const llmdlq::schema& receipt_schema() {
  static const auto schema = compile_file("examples/data/receipt.schema.json", true);
  return schema;
}

const llmdlq::schema& envelope_schema() {
  static const auto schema = compile_file("schemas/envelope-v1.json", true);
  return schema;
}

// The flags byte.
constexpr std::uint8_t strict_parsing = 1u << 0;       // repair off
constexpr std::uint8_t coercion = 1u << 1;             // schema-guided coercion on
constexpr std::uint8_t input_as_identity = 1u << 2;    // the original input is also the key and record id
constexpr std::uint8_t cut_off_by_length = 1u << 3;    // the API said finish_reason "length"
constexpr std::uint8_t confidence_bits = 3u << 4;      // a score held to 0.5: none, 0.3, NaN or infinity
constexpr std::uint8_t no_errors_kept = 1u << 6;       // max_errors 0

// `redacted`: the whole text as the default redactor leaves it.
void check_captured(const llmdlq::captured_text& captured, std::string_view whole, std::string_view redacted,
                    const std::string& json) {
  if (captured.length != whole.size() || captured.sha256 != llmdlq::detail::sha256_hex(whole)) {
    fail("a stored text's length or hash does not describe the whole text", json);
  }
  if (!captured.text) return;
  const std::string encoded = captured.base64 ? llmdlq::detail::base64(redacted) : std::string(redacted);
  if (!encoded.starts_with(*captured.text) || captured.cut != (captured.text->size() < encoded.size())) {
    fail("a stored text is not the whole redacted text or a prefix marked cut", json);
  }
}

void check_envelope(const llmdlq::envelope& e, std::string_view response, std::string_view original_input,
                    std::size_t max_bytes) {
  const std::string json = llmdlq::serialize(e);
  if (json.size() > max_bytes) fail("the envelope is larger than max_envelope_bytes", json);
  llmdlq::parse_options limits;
  limits.max_size = json.size();
  llmdlq::json_parser parser(limits);
  const auto doc = parser.parse(json);
  if (!doc) fail("the envelope is not JSON", json);
  if (!envelope_schema().is_valid(*doc)) fail("the envelope does not validate against envelope-v1.json", json);
  const auto back = llmdlq::parse_envelope(json);
  if (!back) fail("the envelope cannot be read back", json);
  if (!(*back == e) || llmdlq::serialize(*back) != json) fail("the envelope changes in a round trip", json);
  const auto& redaction = llmdlq::redactor::standard();
  check_captured(e.raw_response, response, redaction.redact_document(response, receipt_schema().pii_paths()), json);
  if (e.original_input) {
    check_captured(*e.original_input, original_input, redaction.redact_text(original_input), json);
  } else if (!original_input.empty()) {
    fail("the original input is missing", json);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // 4 to 20 KiB: room for an envelope's identity, hashes and failure
  // summary, and small enough that long texts must be cut.
  const std::size_t max_envelope_bytes = 4096 + 64 * std::size_t{data[0]};
  const std::uint8_t flags = data[1];
  const std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const std::size_t nul = rest.find('\0');
  const std::string_view response = rest.substr(0, nul);
  const std::string_view original_input = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);

  llmdlq::process_options options;
  options.max_envelope_bytes = max_envelope_bytes;
  options.repair = (flags & strict_parsing) ? llmdlq::repair_mode::off : llmdlq::repair_mode::local;
  options.coerce = (flags & coercion) != 0;
  options.limits.max_size = 1u << 20;
  options.limits.max_depth = 64;
  options.clock = [] { return llmdlq::timestamp(std::chrono::milliseconds(1'790'000'000'000)); };
  llmdlq::request_context context;
  context.original_input = original_input;
  if (flags & input_as_identity) {
    context.idempotency_key = std::string(original_input);
    context.record_id = std::string(original_input);
  }
  if (flags & cut_off_by_length) context.finish_reason = "length";
  if (const int score = (flags & confidence_bits) >> 4; score != 0) {
    options.min_confidence = 0.5;
    context.confidence = score == 1 ? 0.3 : score == 2 ? std::numeric_limits<double>::quiet_NaN()
                                                       : std::numeric_limits<double>::infinity();
  }
  if (flags & no_errors_kept) options.max_errors = 0;

  const auto result = llmdlq::process_llm_response(response, receipt_schema(), context, options);
  if (result) {
    llmdlq::json_parser parser(options.limits);
    const auto doc = parser.parse(result->json);
    if (!doc || !receipt_schema().is_valid(*doc)) fail("an accepted document does not validate", result->json);
  } else {
    check_envelope(result.error(), response, original_input, max_envelope_bytes);
  }
  return 0;
}
