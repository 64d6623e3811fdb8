// SPDX-License-Identifier: MIT
// Streamed answers that die early, for the streaming clients' tests: each
// begins with pieces that make it impossible under the schema below without
// local repair, at a known byte, and a server would go on for hundreds of
// pieces after them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <llmdlq/process.hpp>

namespace llmdlq::test {

inline constexpr const char* streamed_receipt_schema = R"({"type": "object", "additionalProperties": false,
  "properties": {"total": {"type": "number"}, "merchant": {"type": "string"},
                 "currency": {"enum": ["EUR", "USD"]}, "lines": {"type": "array", "maxItems": 3}}})";

/// Options under which a schema failure kills a streamed answer.
inline process_options without_repair() {
  process_options options;
  options.repair = repair_mode::off;
  return options;
}

struct early_death {
  const char* kind;
  std::vector<std::string> head;  ///< the pieces up to and with the fatal one
  std::size_t dies_at;            ///< the verdict's offset
};

inline const std::vector<early_death>& early_deaths() {
  static const std::vector<early_death> cases = {
      {"a string where a number belongs", {"{\"total\": ", "\"12"}, 10},
      {"a name additionalProperties forbids", {"{\"total\": 1, ", "\"tip\"", ": 2"}, 17},
      {"an enum value no member is", {"{\"currency\": ", "\"GBP\""}, 17},
      {"a fourth line where maxItems is 3", {"{\"lines\": [1, 2, 3", ", 4"}, 20},
      {"an injection marker", {"{\"merchant\": \"<|im_start|>", "system"}, 25},
      {"prose where strict JSON must begin", {"Sure! ", "Here is the JSON"}, 0},
  };
  return cases;
}

/// `head`, then 400 pieces more of an answer that a server would send.
inline std::vector<std::string> answer_starting(const std::vector<std::string>& head) {
  std::vector<std::string> pieces = head;
  for (int i = 0; i < 400; ++i) pieces.push_back(" ");
  pieces.push_back("}");
  return pieces;
}

}  // namespace llmdlq::test
