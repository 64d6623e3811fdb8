// SPDX-License-Identifier: MIT
// Fuzzing strict parsing: json_parser, parse_value and check_syntax must
// accept the same inputs and report the same error, inside the input.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <llmdlq/json_parser.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  llmdlq::parse_options options;
  options.max_depth = 32;
  options.max_size = 1 << 20;
  static llmdlq::json_parser parser(options);
  const auto fast = parser.parse(json);
  const auto dom = llmdlq::parse_value(json, options);
  if (fast.has_value() != dom.has_value()) std::abort();
  // check_syntax is the same verdict without a document.
  const auto checked = llmdlq::check_syntax(json, options);
  if (checked.has_value() == fast.has_value()) std::abort();
  if (checked && !(*checked == fast.error())) std::abort();
  if (!fast) {
    const auto& e = fast.error();
    if (!(e == dom.error())) std::abort();
    if (e.offset > size || e.line == 0 || e.column == 0 || e.message.empty()) std::abort();
    if (e.code == llmdlq::json_errc::unexpected_end && e.offset != size) std::abort();
  }
  return 0;
}
