// SPDX-License-Identifier: MIT
// A failed response and input full of personal data and secrets, the
// envelope process_llm_response makes of them, and the check that a store's
// raw bytes hold none of the values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "catch.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/schema.hpp"

namespace llmdlq::test {

/// The values, exactly as the response and the input spell them.
inline const std::vector<std::string>& pii_values() {
  static const std::vector<std::string> values = {
      "Anna Petrova",  // a name: only the schema's x-llmdlq-pii finds it
      "NL91ABNA0417164300", "NL91 ABNA 0417 1643 00", "anna.petrova@example.ru", "4111111111111111",
      "5500 0000 0000 0004", "+31 6 1234 5678", "192.168.10.254", "sk-proj-abcdefghijklmnopqrstuvwx1234",
      "123456782",  // a BSN
  };
  return values;
}

/// A schema failure (the total is a string) whose every text holds personal data.
inline envelope pii_envelope(std::string key = "pii:1") {
  static const auto schema = schema::compile(R"({
    "type": "object", "required": ["total"],
    "properties": {"total": {"type": "number"}, "customer": {"type": "string", "x-llmdlq-pii": "name"}}
  })");
  REQUIRE(schema.has_value());
  request_context context;
  context.idempotency_key = std::move(key);
  context.original_input =
      "Factuur, BSN 123456782, betaald met 5500 0000 0000 0004, IBAN NL91 ABNA 0417 1643 00, tel +31 6 1234 5678";
  context.extensions["client_ip"] = "192.168.10.254";
  process_options options;
  options.redaction = *redactor::create({.national_ids = {national_ids::nl_bsn()}});
  const auto judged = process_llm_response(
      R"({"customer": "Anna Petrova", "iban": "NL91ABNA0417164300", "email": "anna.petrova@example.ru", )"
      R"("card": "4111111111111111", "note": "key sk-proj-abcdefghijklmnopqrstuvwx1234", "total": "12,50"})",
      *schema, context, options);
  REQUIRE_FALSE(judged.has_value());
  return judged.error();
}

/// Every byte a store wrote holds none of the values, and the redacted
/// texts are there (the record was stored, not dropped).
inline void check_no_pii(std::string_view stored) {
  for (const auto& value : pii_values()) {
    INFO("the store holds " << value);
    CHECK(stored.find(value) == std::string_view::npos);
  }
  CHECK(stored.find("<iban>") != std::string_view::npos);
  CHECK(stored.find("<name>") != std::string_view::npos);
}

}  // namespace llmdlq::test
