// SPDX-License-Identifier: MIT
// Fuzzes pattern compilation and search: the input is a pattern, a newline,
// and a subject. Nothing may crash or run away; errors carry an offset inside
// the pattern.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <simdjson.h>
#include <llmdlq/regex.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto newline = input.find('\n');
  const std::string_view pattern = input.substr(0, newline);
  const auto regex = llmdlq::ecma_regex::compile(pattern);
  if (!regex) {
    if (regex.error().offset > pattern.size() || regex.error().message.empty()) std::abort();
    return 0;
  }
  if (newline == std::string_view::npos) return 0;
  const std::string_view subject = input.substr(newline + 1);
  // Subjects are UTF-8 validated strings from parsed JSON.
  if (!simdjson::validate_utf8(subject.data(), subject.size())) return 0;
  (void)regex->search(subject);
  return 0;
}
