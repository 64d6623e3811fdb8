// SPDX-License-Identifier: MIT
// Dead letters for the tests of `llmdlq replay`, whatever store holds them:
// cut-off answers that a re-ask recovers, and a schema failure that the
// ladder holds without a call. Each letter's text names it ("letter-N"), so
// a test can tell from a request body which letter a model was asked about.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <llmdlq/moderation.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"

namespace llmdlq::test {

inline constexpr std::string_view replay_schema = R"({
  "type": "object", "required": ["name", "total"],
  "properties": {"name": {"type": "string"}, "total": {"type": "number"}}
})";

/// An answer the schema accepts, for letter `n`.
inline std::string recovered_answer(int n) { return R"({"name": "letter-)" + std::to_string(n) + R"(", "total": 1})"; }

/// An answer the schema refuses (no total), for letter `n`.
inline std::string failing_answer(int n) { return R"({"name": "letter-)" + std::to_string(n) + R"("})"; }

/// The n of the first `letter-n` in `text` (a prompt quoting a letter's
/// response, or a request's body); -1 when there is none.
inline int letter_of(std::string_view text) {
  const auto at = text.find("letter-");
  if (at == std::string_view::npos) return -1;
  int n = -1;
  for (std::size_t i = at + 7; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    n = (n < 0 ? 0 : n * 10) + (text[i] - '0');
  }
  return n;
}

/// What a letter's stored response was.
enum class stored_failure {
  cut_off,         ///< cut at max_tokens: the ladder re-asks the model
  schema_failure,  ///< deterministic under today's schema: held, no call
};

/// Letters 0..failures.size()-1 (keys key-N) of model m (version
/// m-2026-11) under schema version receipt-1, one second apart from
/// 2026-12-01T10:00:00Z, so that every store lists them in that order.
inline std::vector<envelope> replay_letters(const std::vector<stored_failure>& failures) {
  auto compiled = schema::compile(replay_schema);
  REQUIRE(compiled.has_value());
  timestamp at = parse_rfc3339("2026-12-01T10:00:00Z").value();
  std::vector<envelope> letters;
  for (std::size_t n = 0; n < failures.size(); ++n) {
    request_context ctx;
    ctx.idempotency_key = "key-" + std::to_string(n);
    ctx.model.name = "m";
    ctx.model.max_tokens = 100;
    ctx.versions.schema = "receipt-1";
    ctx.versions.model = "m-2026-11";
    std::string text;
    if (failures[n] == stored_failure::cut_off) {
      ctx.finish_reason = "length";
      text = R"({"name": "letter-)" + std::to_string(n);
    } else {
      text = failing_answer(static_cast<int>(n));
    }
    process_options options;
    options.clock = [at] { return at; };
    auto judged = process_llm_response(text, *compiled, ctx, options);
    REQUIRE_FALSE(judged.has_value());
    letters.push_back(std::move(judged.error()));
    at += std::chrono::seconds(1);
  }
  return letters;
}

/// `n` cut-off letters.
inline std::vector<envelope> cut_off_letters(std::size_t n) {
  return replay_letters(std::vector<stored_failure>(n, stored_failure::cut_off));
}

/// The status of each letter in `store` (of at most `most` letters), by idempotency key.
inline std::map<std::string, moderation_status> statuses_by_key(moderation_store& store, std::size_t most = 100) {
  std::map<std::string, moderation_status> found;
  for (const auto status : all_moderation_statuses) {
    auto records = store.list(status, most);
    REQUIRE(records.has_value());
    for (const auto& record : *records) {
      auto letter = parse_envelope(record.envelope_json);
      REQUIRE(letter.has_value());
      found[letter->idempotency_key] = status;
    }
  }
  return found;
}

}  // namespace llmdlq::test
