// SPDX-License-Identifier: MIT
// The redactor's throughput (target: >= 500 MB/s on a 4 KB response with
// every detector on): receipts with an IBAN, an e-mail, a VAT id and card
// digits, as text and as a document with pointer-chosen values; the same
// at 256 KB to show the pass is linear; and hostile texts built to make a
// detector look far (runs of `@`, digits and IBAN-shaped groups). Beside
// them (target: >= 300 MB/s) a 4 KB JSON reply of escaped multi-line
// strings, the shape a failed answer has, read through its escapes; and
// hostile texts for the decoding and the newer detectors. That reply has a
// value after nearly every line break; the escaped prose beside it has one
// in a kilobyte, as answers mostly do.
#include <string>

#include <benchmark/benchmark.h>
#include <llmdlq/llmdlq.hpp>

#include "documents.hpp"

namespace {

llmdlq::redaction_options every_detector() {
  llmdlq::redaction_options o;
  o.national_ids = {llmdlq::national_ids::nl_bsn(), llmdlq::national_ids::ru_inn(), llmdlq::national_ids::ru_snils(),
                    llmdlq::national_ids::lk_nic()};
  o.key = llmdlq::redaction_key{"bench", std::string(32, 'k')};
  return o;
}

const llmdlq::redactor& redactor_with_tokens() {
  static const llmdlq::redactor r = *llmdlq::redactor::create(every_detector());
  return r;
}

const llmdlq::redactor& redactor_removing() {
  static const llmdlq::redactor r = [] {
    auto o = every_detector();
    o.key.reset();
    return *llmdlq::redactor::create(o);
  }();
  return r;
}

void report(benchmark::State& state, std::size_t bytes) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void text(benchmark::State& state, const llmdlq::redactor& r, const std::string& input) {
  for (auto _ : state) {
    auto out = r.redact_text(input, "raw_response");
    benchmark::DoNotOptimize(out);
  }
  report(state, input.size());
}

void document(benchmark::State& state, const std::string& input) {
  auto o = every_detector();
  o.pointers = {"/merchant/name", "/items/*/description"};
  const auto r = *llmdlq::redactor::create(o);
  for (auto _ : state) {
    auto out = r.redact_document(input);
    benchmark::DoNotOptimize(out);
  }
  report(state, input.size());
}

std::string repeated(std::string_view unit, std::size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += unit;
  return s;
}

// A model's JSON answer whose strings run over lines, values after the
// line breaks: every `\n` is decoded before the detectors read on.
std::string escaped_reply(std::size_t bytes) {
  std::string s = "{\"notes\": [";
  static constexpr std::string_view lines[] = {
      R"("Dear team,\n\nthe invoice below was paid by card:\n4111 1111 1111 1111\nfrom account:\nNL91 ABNA 0417 1643 00.\n")",
      R"("Contact:\n  \"Anna Petrova\" <anna.petrova@example.ru>\n  tel:\n+31 6 1234 5678\n\tRef: 2026-12-02/\u00e9t\u00e9\n")",
      R"("Items:\n- 3 \u00d7 paper A4 (\u20ac 12,50)\n- 1 \u00d7 toner\nTotal:\n\u20ac 48,70\n")"};
  for (std::size_t i = 0; s.size() < bytes; ++i) {
    if (i) s += ", ";
    s += lines[i % 3];
  }
  return s + "]}";
}

// The same shape as a model writes it most days: paragraphs over escaped
// line breaks, and one value in about every kilobyte.
std::string escaped_prose(std::size_t bytes) {
  std::string s = "{\"answer\": \"";
  static constexpr std::string_view lines[] = {
      R"(Thank you for the scan.\nThe receipt is from Albert Heijn, dated 2026-12-02, and lists 14 items.\n\n)",
      R"(- The total is \u20ac 48,70 including 9% VAT;\n- two items were sold by weight (0.734 kg and 1.2 kg).\n)",
      R"(I could not read the third line:\n  \"Pol\u00f6 t\u00e9a 2x\" is cut off at the fold.\n\n)",
      R"(If you need the card used, it is printed as:\n4111 1111 1111 1111\nPlease check it against the statement.\n)",
      R"(Questions can go to the store at:\nklantenservice@ah.example.nl\nor by phone on weekdays.\n\n)",
      R"(The remaining fields (store number, till, cashier) were read as printed.\n\tNothing else was changed.\n)"};
  for (std::size_t i = 0; s.size() < bytes; ++i) s += lines[i % 6];
  return s + "\"}";
}

const std::string receipt_4k = llmdlq_bench::make_receipt(4096);
const std::string prose_4k = escaped_prose(4096);
const std::string reply_4k = escaped_reply(4096);
const std::string receipt_256k = llmdlq_bench::make_receipt(256 << 10);

}  // namespace

BENCHMARK_CAPTURE(text, receipt_4k_tokens, redactor_with_tokens(), receipt_4k);
BENCHMARK_CAPTURE(text, receipt_4k_remove, redactor_removing(), receipt_4k);
BENCHMARK_CAPTURE(text, receipt_256k_tokens, redactor_with_tokens(), receipt_256k);
BENCHMARK_CAPTURE(document, receipt_4k_pointers, receipt_4k);
BENCHMARK_CAPTURE(text, reply_4k_escaped_multiline, redactor_with_tokens(), reply_4k);
BENCHMARK_CAPTURE(text, reply_4k_escaped_multiline_remove, redactor_removing(), reply_4k);
BENCHMARK_CAPTURE(text, reply_4k_escaped_prose, redactor_with_tokens(), prose_4k);
BENCHMARK_CAPTURE(text, hostile_4k_at_signs, redactor_with_tokens(), repeated("a.b-c@", 4096));
BENCHMARK_CAPTURE(text, hostile_4k_digit_groups, redactor_with_tokens(), repeated("4111 ", 4096));
BENCHMARK_CAPTURE(text, hostile_4k_iban_groups, redactor_with_tokens(), repeated("NL91 ABNA ", 4096));
BENCHMARK_CAPTURE(text, hostile_4k_values, redactor_with_tokens(),
                  repeated("a@example.org 4111111111111111 NL91ABNA0417164300 10.0.0.1 ", 4096));
BENCHMARK_CAPTURE(text, hostile_4k_backslash_runs, redactor_with_tokens(), repeated("\\\\\\\\x\\u00", 4096));
BENCHMARK_CAPTURE(text, hostile_4k_references, redactor_with_tokens(), repeated("&#64;%40~1&commat", 4096));
BENCHMARK_CAPTURE(text, hostile_4k_pem_headers, redactor_with_tokens(), repeated("-----BEGIN PRIVATE KEY-----", 4096));
BENCHMARK_CAPTURE(text, hostile_4k_url_authorities, redactor_with_tokens(), repeated("s://a:b", 4096));

BENCHMARK_MAIN();
