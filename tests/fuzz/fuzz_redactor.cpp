// SPDX-License-Identifier: MIT
// Fuzzing the redactor: nothing it detects survives (a second pass over its
// output finds nothing and changes nothing), the output stays within a
// constant factor of the input, summaries describe spans of the input, and
// a document keeps its values' places whatever its syntax.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <llmdlq/envelope.hpp>
#include <llmdlq/redaction.hpp>

namespace {

const llmdlq::redactor& with_tokens() {
  static const llmdlq::redactor r = [] {
    llmdlq::redaction_options o;
    o.national_ids = {llmdlq::national_ids::nl_bsn(), llmdlq::national_ids::ru_inn(),
                      llmdlq::national_ids::ru_snils(), llmdlq::national_ids::lk_nic()};
    o.pointers = {"/a", "/*/b", "/c/*"};
    o.key = llmdlq::redaction_key{"fuzz", std::string(32, 'f')};
    return *llmdlq::redactor::create(o);
  }();
  return r;
}

const llmdlq::redactor& masking() {
  static const llmdlq::redactor r = [] {
    llmdlq::redaction_options o;
    o.action = llmdlq::redaction_action::mask;
    o.mask_keep = 6;
    return *llmdlq::redactor::create(o);
  }();
  return r;
}

void check(const llmdlq::redactor& r, std::string_view input, bool document) {
  std::vector<llmdlq::redaction_summary> report;
  const std::vector<llmdlq::pii_path> schema_paths = {{"/d", "name"}};
  const std::string once = document ? r.redact_document(input, schema_paths, "raw_response", &report)
                                    : r.redact_text(input, "raw_response", &report);
  // Placeholders are at most ~40 bytes, and a value takes at least 2.
  if (once.size() > 24 * input.size() + 64) std::abort();
  for (const auto& s : report) {
    if (s.count == 0 || s.spans.empty() || s.spans.size() > llmdlq::redaction_summary::max_spans) std::abort();
    for (const auto& [offset, length] : s.spans) {
      if (length == 0 || offset + length > input.size()) std::abort();
    }
  }
  std::vector<llmdlq::redaction_summary> again;
  const std::string twice = document ? r.redact_document(once, schema_paths, "raw_response", &again)
                                     : r.redact_text(once, "raw_response", &again);
  if (twice != once || !again.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check(with_tokens(), input, false);
  check(with_tokens(), input, true);
  check(masking(), input, false);
  check(llmdlq::redactor::standard(), input, true);
  return 0;
}
