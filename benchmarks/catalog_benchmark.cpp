// SPDX-License-Identifier: MIT
// llmdlq on catalogue-shaped cases (catalog_cases.hpp): per case, one schema
// and its hundreds to thousands of instances, timed as a service holding the
// compiled schema sees them: the schema's compile, validation from text
// (json_parser + is_valid, and is_valid_text) and validation of documents
// already parsed. Each iteration is one pass over every instance of the case,
// so MB/s are over all of its instances. Blaze runs the same inputs in its
// own runner (benchmarks/peers/blaze_runner.cpp, built by scripts/bench).
//
// Before any timing, every instance's verdict on both text paths must be the
// one the generator built it for, and each case's counts the ones it claims:
// the run stops otherwise. `format` is an annotation (the compile default),
// as it is to the peer.
//
// usage: catalog_benchmark [--write-inputs=DIR] [BENCHMARK FLAGS...]
//   --write-inputs=DIR  write each case's schema (DIR/<case>.schema.json),
//                       instances (DIR/<case>.instances.jsonl, one per line)
//                       and expected verdicts (DIR/<case>.verdicts, a line of
//                       1s and 0s), with DIR/manifest.json listing
//                       [{"name", "dialect", "shape", "schema", "instances",
//                       "verdicts", "count", "valid", "invalid", "bytes"}],
//                       and exit

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <simdjson.h>

#include <llmdlq/json_parser.hpp>
#include <llmdlq/schema.hpp>
#include <llmdlq/version.hpp>

#include "catalog_cases.hpp"
#include "receipt_schema.hpp"

namespace {

using llmdlq_bench::catalog::catalog_case;

/// A case ready to time: the compiled schema and the instances in simdjson's padded form.
struct prepared {
  const catalog_case* source;
  llmdlq::schema schema;
  std::vector<simdjson::padded_string> padded;
  std::size_t bytes;
};

std::vector<catalog_case>& cases() {
  static std::vector<catalog_case> all = llmdlq_bench::catalog::make_cases(llmdlq_bench::receipt_schema_text());
  return all;
}

/// Compiles the case's schema and checks every verdict on both text paths;
/// false (with what disagreed) when anything differs from the generator's claim.
std::unique_ptr<prepared> prepare(const catalog_case& c) {
  auto schema = llmdlq::schema::compile(c.schema);
  if (!schema) {
    std::fprintf(stderr, "FAIL: %s: llmdlq cannot compile the schema: %s at %s\n", c.name.c_str(),
                 schema.error().message.c_str(), schema.error().location.c_str());
    return nullptr;
  }
  auto p = std::make_unique<prepared>(prepared{&c, *std::move(schema), {}, c.bytes()});
  llmdlq::json_parser parser;
  std::size_t valid = 0, wrong = 0;
  for (std::size_t i = 0; i < c.instances.size(); ++i) {
    const auto& inst = c.instances[i];
    p->padded.emplace_back(inst.text);
    auto doc = parser.parse(simdjson::padded_string_view(p->padded.back()));
    const bool tape = doc && p->schema.is_valid(*doc);
    const bool forward = p->schema.is_valid_text(simdjson::padded_string_view(p->padded.back()));
    valid += tape ? 1 : 0;
    if (tape != inst.valid || forward != inst.valid) {
      if (++wrong <= 5) {
        std::fprintf(stderr, "FAIL: %s instance %zu is %s, but parse + is_valid says %s and is_valid_text %s: %.300s\n",
                     c.name.c_str(), i, inst.valid ? "valid" : "invalid", tape ? "valid" : "invalid",
                     forward ? "valid" : "invalid", inst.text.c_str());
      }
    }
  }
  const std::size_t invalid = c.instances.size() - valid;
  std::fprintf(stderr, "  %-18s %-8s %5zu instances (%zu valid, %zu invalid), %8zu B of instances, schema %zu B%s\n",
               c.name.c_str(), c.dialect.c_str(), c.instances.size(), valid, invalid, p->bytes, c.schema.size(),
               wrong ? "" : ": llmdlq agrees");
  if (wrong || valid != c.expected_valid || invalid != c.expected_invalid) {
    std::fprintf(stderr, "FAIL: %s: %zu verdicts differ from the generator's; it claims %zu valid and %zu invalid\n",
                 c.name.c_str(), wrong, c.expected_valid, c.expected_invalid);
    return nullptr;
  }
  return p;
}

bool write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) std::fprintf(stderr, "cannot write %s\n", path.c_str());
  return static_cast<bool>(out);
}

/// Writes every case's schema, instances and expected verdicts to `dir`, for peers timed elsewhere.
bool write_inputs(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  boost::json::array manifest;
  for (const auto& c : cases()) {
    std::string instances, verdicts;
    for (const auto& inst : c.instances) {
      instances += inst.text;
      instances += '\n';
      verdicts += inst.valid ? '1' : '0';
    }
    verdicts += '\n';
    const std::string schema_file = c.name + ".schema.json";
    const std::string instances_file = c.name + ".instances.jsonl";
    const std::string verdicts_file = c.name + ".verdicts";
    if (!write_file(dir / schema_file, c.schema + "\n") || !write_file(dir / instances_file, instances) ||
        !write_file(dir / verdicts_file, verdicts)) {
      return false;
    }
    manifest.push_back(boost::json::object{{"name", c.name},
                                           {"dialect", c.dialect},
                                           {"shape", c.shape},
                                           {"schema", schema_file},
                                           {"instances", instances_file},
                                           {"verdicts", verdicts_file},
                                           {"count", c.instances.size()},
                                           {"valid", c.expected_valid},
                                           {"invalid", c.expected_invalid},
                                           {"bytes", c.bytes()}});
  }
  if (!write_file(dir / "manifest.json", boost::json::serialize(manifest) + "\n")) return false;
  std::fprintf(stderr, "wrote %zu cases and %s\n", cases().size(), (dir / "manifest.json").c_str());
  return true;
}

// ---------------------------------------------------------------------------
// Scenarios: one iteration is a pass over every instance of the case.

/// Counts the instances `valid_one` accepts in a pass, and fails the run if a
/// pass does not accept exactly the valid ones.
template <class Pass>
void add_pass(const std::string& scenario, const prepared& p, Pass pass) {
  benchmark::RegisterBenchmark((scenario + "/" + p.source->name).c_str(), [&p, pass](benchmark::State& state) mutable {
    auto run = pass(p);  // set-up outside the timing (the pre-parsed documents)
    for (auto _ : state) {
      const std::size_t valid = run();
      benchmark::DoNotOptimize(valid);
      if (valid != p.source->expected_valid) {
        state.SkipWithError("a pass accepted other instances than the valid ones");
        break;
      }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(p.bytes));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(p.source->instances.size()));
    state.counters["instances"] = static_cast<double>(p.source->instances.size());
    state.counters["instance_bytes"] = static_cast<double>(p.bytes);
    state.counters["schema_bytes"] = static_cast<double>(p.source->schema.size());
  });
}

void register_benchmarks(const std::vector<std::unique_ptr<prepared>>& all) {
  for (const auto& owned : all) {
    const prepared& p = *owned;
    benchmark::RegisterBenchmark(("llmdlq_compile/" + p.source->name).c_str(), [&p](benchmark::State& state) {
      for (auto _ : state) {
        auto schema = llmdlq::schema::compile(p.source->schema);
        benchmark::DoNotOptimize(schema);
        if (!schema) {
          state.SkipWithError("the schema did not compile");
          break;
        }
      }
      state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                              static_cast<std::int64_t>(p.source->schema.size()));
      state.counters["schema_bytes"] = static_cast<double>(p.source->schema.size());
    });
    // The text as it arrives: parse into the tape, then the yes/no walk.
    add_pass("llmdlq_parse_is_valid", p, [](const prepared& q) {
      return [&q, parser = std::make_shared<llmdlq::json_parser>()] {
        std::size_t valid = 0;
        for (const auto& text : q.padded) {
          auto doc = parser->parse(simdjson::padded_string_view(text));
          valid += doc && q.schema.is_valid(*doc) ? 1 : 0;
        }
        return valid;
      };
    });
    // Validation while parsing.
    add_pass("llmdlq_is_valid_text", p, [](const prepared& q) {
      return [&q] {
        std::size_t valid = 0;
        for (const auto& text : q.padded) valid += q.schema.is_valid_text(simdjson::padded_string_view(text)) ? 1 : 0;
        return valid;
      };
    });
    // Documents parsed once beforehand, each kept by its own parser: the walk alone.
    add_pass("llmdlq_pre_parsed", p, [](const prepared& q) {
      auto parsers = std::make_shared<std::vector<std::unique_ptr<llmdlq::json_parser>>>();
      auto documents = std::make_shared<std::vector<llmdlq::json_document>>();
      for (const auto& text : q.padded) {
        parsers->push_back(std::make_unique<llmdlq::json_parser>());
        auto doc = parsers->back()->parse(simdjson::padded_string_view(text));
        if (!doc) std::abort();  // prepare() parsed every instance already
        documents->push_back(*doc);
      }
      return [&q, parsers, documents] {
        std::size_t valid = 0;
        for (const auto& doc : *documents) valid += q.schema.is_valid(doc) ? 1 : 0;
        return valid;
      };
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--write-inputs=")) {
      return write_inputs(std::filesystem::path(arg.substr(15))) ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return EXIT_FAILURE;

  std::fprintf(stderr, "Cases (every verdict checked on both text paths before timing):\n");
  static std::vector<std::unique_ptr<prepared>> all;  // outlives every registered benchmark
  bool ok = true;
  for (const auto& c : cases()) {
    auto p = prepare(c);
    ok = ok && p != nullptr;
    if (p) all.push_back(std::move(p));
  }
  if (!ok) {
    std::fprintf(stderr, "Not timing: llmdlq's verdicts are not the generator's (see above).\n");
    return EXIT_FAILURE;
  }
  benchmark::AddCustomContext("llmdlq", LLMDLQ_VERSION_STRING);
  std::string order;  // the cases in the corpus' order, which the interleaved runs do not keep
  for (const auto& p : all) order += (order.empty() ? "" : ",") + p->source->name;
  benchmark::AddCustomContext("cases", order);
  for (const auto& p : all) {
    benchmark::AddCustomContext("case_" + p->source->name,
                                p->source->dialect + ", " + std::to_string(p->source->instances.size()) +
                                    " instances, " + std::to_string(p->bytes) + " B; " + p->source->shape);
  }
  register_benchmarks(all);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return EXIT_SUCCESS;
}
