// SPDX-License-Identifier: MIT
// Differential fuzzing of strict parsing: the simdjson path and the Boost.JSON
// path must accept the same inputs and report the same error, inside the input.
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
  if (!fast) {
    const auto& e = fast.error();
    if (!(e == dom.error())) std::abort();
    if (e.offset > size || e.line == 0 || e.column == 0 || e.message.empty()) std::abort();
    if (e.code == llmdlq::json_errc::unexpected_end && e.offset != size) std::abort();
  }
  return 0;
}
