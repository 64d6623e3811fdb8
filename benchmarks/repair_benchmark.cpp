// SPDX-License-Identifier: MIT
// Broken LLM output in, strict JSON out: llmdlq::repair on invoices of ~300 B
// (the header alone), ~1 KB,
// ~16 KB and ~256 KB, one failure kind per input (repair_inputs.hpp), every
// tier allowed (lossless, syntactic, lossy).
//
// Before any timing, every repair is checked against the document the model
// meant (equal as parsed JSON values; the valid input must come back byte for
// byte). A repair that fails is not timed; one that gives another document is
// timed and reported, so the run says so rather than hide it.
//
// usage: repair_benchmark [--write-inputs=DIR] [BENCHMARK FLAGS...]
//   --write-inputs=DIR  write DIR/<kind>.<size>.input.txt and .expected.json
//                       (the inputs jsonrepair_bench.mjs times) and exit

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <llmdlq/repair.hpp>
#include <llmdlq/version.hpp>

#include "repair_inputs.hpp"

namespace {

namespace rb = llmdlq_bench::repair;

struct input {
  std::string name;  // <kind>/<size>
  rb::failure_kind kind;
  rb::generated doc;
};

llmdlq::repair_options all_tiers() {
  llmdlq::repair_options options;
  options.allowed = {llmdlq::repair_tier::lossless, llmdlq::repair_tier::syntactic, llmdlq::repair_tier::lossy};
  return options;
}

std::vector<input> make_inputs() {
  std::vector<input> inputs;
  for (const auto& size : rb::all_sizes) {
    for (const auto kind : rb::all_kinds) {
      inputs.push_back({std::string(rb::name(kind)) + "/" + std::string(size.name), kind, rb::make_input(kind, size.bytes)});
    }
  }
  return inputs;
}

bool write_inputs(const std::vector<input>& inputs, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const auto& in : inputs) {
    std::string stem = in.name;
    stem[stem.find('/')] = '.';
    for (const auto& [suffix, text] : {std::pair<const char*, const std::string*>{".input.txt", &in.doc.input},
                                       {".expected.json", &in.doc.expected}}) {
      std::ofstream out(dir / (stem + suffix), std::ios::binary);
      out << *text;
      if (!out) {
        std::fprintf(stderr, "cannot write %s\n", (dir / (stem + suffix)).c_str());
        return false;
      }
    }
  }
  std::fprintf(stderr, "wrote %zu inputs to %s\n", inputs.size(), dir.c_str());
  return true;
}

/// Whether llmdlq repairs `in` at all (timing an error path would say
/// nothing), after printing what it made of it.
bool check(const input& in) {
  const auto result = llmdlq::repair(in.doc.input, all_tiers());
  if (!result) {
    std::fprintf(stderr, "  FAIL %-30s %s at %zu: %s\n", in.name.c_str(), std::string(to_string(result.error().code)).c_str(),
                 result.error().offset, result.error().message.c_str());
    return false;
  }
  boost::system::error_code ec;
  const boost::json::value got = boost::json::parse(result->json, ec);
  const boost::json::value want = boost::json::parse(in.doc.expected);
  const bool same = !ec && got == want;
  const bool unchanged = result->json == in.doc.input;
  const char* verdict = !same ? "WRONG" : in.kind == rb::failure_kind::valid && !unchanged ? "CHANGED" : "ok";
  std::fprintf(stderr, "  %-7s %-30s %7zu B in, %7zu B out, %5zu actions%s\n", verdict, in.name.c_str(),
               in.doc.input.size(), result->json.size(), result->actions.size(), result->truncated ? ", truncated" : "");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  static const std::vector<input> inputs = make_inputs();  // outlives every registered benchmark

  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--write-inputs=")) return write_inputs(inputs, arg.substr(15)) ? EXIT_SUCCESS : EXIT_FAILURE;
    args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return EXIT_FAILURE;

  std::fprintf(stderr, "Checks (llmdlq::repair, all tiers, against the intended documents):\n");
  for (const auto& in : inputs) {
    const bool repaired = check(in);
    benchmark::RegisterBenchmark(("llmdlq_repair/" + in.name).c_str(), [&in, repaired](benchmark::State& state) {
      if (!repaired) state.SkipWithError("llmdlq::repair fails on this input");
      const auto options = all_tiers();
      for (auto _ : state) {
        auto result = llmdlq::repair(in.doc.input, options);
        benchmark::DoNotOptimize(result);
      }
      state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                              static_cast<std::int64_t>(in.doc.input.size()));
      state.counters["doc_bytes"] = static_cast<double>(in.doc.input.size());
    });
  }
  benchmark::AddCustomContext("llmdlq", LLMDLQ_VERSION_STRING);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return EXIT_SUCCESS;
}
