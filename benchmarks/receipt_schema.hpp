// SPDX-License-Identifier: MIT
// The receipt schema of examples/data, compiled once with format assertion,
// as the benchmarks of the worker's path use it.
#pragma once

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include <llmdlq/schema.hpp>

namespace llmdlq_bench {

// The schema's text.
inline const std::string& receipt_schema_text() {
  static const std::string text = [] {
    std::ifstream in(LLMDLQ_BENCH_DATA_DIR "/receipt.schema.json");
    return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }();
  return text;
}

inline const llmdlq::schema& receipt_schema() {
  static const llmdlq::schema schema = [] {
    llmdlq::compile_options options;
    options.format_assertion = true;
    auto compiled = llmdlq::schema::compile(receipt_schema_text(), options);
    if (!compiled) std::abort();
    return *std::move(compiled);
  }();
  return schema;
}

}  // namespace llmdlq_bench
