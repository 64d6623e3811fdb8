// SPDX-License-Identifier: MIT
// Schema compilation and uniqueItems: compiling a ~50 KB recursive schema
// (30 definitions of tasks that contain tasks, referring to each other and
// to themselves) and the ~2.7 KB receipt schema, and lowering both for a
// provider's structured outputs; and `uniqueItems` over a
// ~1 MB array of 70,000 distinct strings (every item hashed) and the same
// array with its last item equal to its first (the duplicate found once).
//
// Each input is first checked to compile, or to get the verdict it must;
// the run stops before any timing if one does not.
//
// usage: schema_benchmark [BENCHMARK FLAGS...]

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <llmdlq/json_parser.hpp>
#include <llmdlq/provider_schema.hpp>
#include <llmdlq/schema.hpp>
#include <llmdlq/version.hpp>

#include "documents.hpp"

#ifndef LLMDLQ_BENCH_DATA_DIR
#define LLMDLQ_BENCH_DATA_DIR "examples/data"
#endif

namespace {

constexpr int task_definitions = 30;

std::string task(int i) { return "\"#/$defs/task_" + std::to_string(i) + "\""; }

/// One definition: a task whose owner, parent, subtasks and blockers are
/// tasks (itself or others), with constrained string and number leaves.
std::string task_definition(int i) {
  const std::string self = task(i);
  std::string d = "\"task_" + std::to_string(i) + "\":{\"type\":\"object\",\"title\":\"Task kind " + std::to_string(i) +
                  "\",\"required\":[\"id\",\"title\",\"status\"],\"additionalProperties\":false,\"properties\":{"
                  "\"id\":{\"type\":\"string\",\"pattern\":\"^T[0-9]{4,8}$\",\"minLength\":5,\"maxLength\":9},"
                  "\"title\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200},"
                  "\"status\":{\"enum\":[\"todo\",\"doing\",\"review\",\"done\",\"blocked\"]},"
                  "\"priority\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":9},"
                  "\"estimate_hours\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"maximum\":1000,"
                  "\"multipleOf\":0.25},"
                  "\"due\":{\"type\":\"string\",\"format\":\"date\"},"
                  "\"owner\":{\"$ref\":" +
                  task((i + 1) % task_definitions) +
                  "},"
                  "\"parent\":{\"$ref\":" +
                  self +
                  "},"
                  "\"subtasks\":{\"type\":\"array\",\"maxItems\":100,\"items\":{\"$ref\":" +
                  self +
                  "}},"
                  "\"blocked_by\":{\"type\":\"array\",\"items\":{\"$ref\":" +
                  task((i * 7 + 3) % task_definitions) +
                  "}},"
                  "\"related\":{\"type\":\"array\",\"items\":{\"anyOf\":[{\"$ref\":" +
                  task((i + 5) % task_definitions) + "},{\"$ref\":" + task((i + 11) % task_definitions) +
                  "}]}},"
                  "\"tags\":{\"type\":\"array\",\"uniqueItems\":true,\"items\":{\"type\":\"string\","
                  "\"pattern\":\"^[a-z][a-z0-9-]*$\",\"maxLength\":32}}";
  // Leaves of every kind, to bring each definition to ~1.6 KB.
  for (int k = 0; k < 4; ++k) {
    const std::string n = std::to_string(k);
    d += ",\"note_" + n + "\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":" + std::to_string(500 + k) +
         ",\"description\":\"free text, kind " + std::to_string(i) + " field " + n + "\"}";
    d += ",\"metric_" + n + "\":{\"type\":\"number\",\"minimum\":-" + n +
         ",\"maximum\":" + std::to_string(1000 * (k + 1)) + ",\"multipleOf\":0.01}";
  }
  return d + "}}";
}

/// The recursive schema: the root is task_0, and every definition reaches
/// every other through owner, blockers and related tasks.
std::string make_tasks_schema() {
  std::string s = "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
                  "\"$id\":\"https://example.com/schemas/tasks.json\",\"$ref\":" +
                  task(0) + ",\"$defs\":{";
  for (int i = 0; i < task_definitions; ++i) {
    if (i) s += ',';
    s += task_definition(i);
  }
  return s + "}}";
}

/// `count` distinct strings of 12 characters, ~15 bytes an item; with
/// `last_repeats_first`, the last item is the first again.
std::string make_string_array(std::size_t count, bool last_repeats_first) {
  std::string a = "[";
  char item[32];
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t n = last_repeats_first && i + 1 == count ? 0 : i;
    std::snprintf(item, sizeof item, "%s\"item-%07zu\"", i ? "," : "", n);
    a += item;
  }
  return a + "]";
}

llmdlq::compile_options with_formats() {
  llmdlq::compile_options options;
  options.format_assertion = true;  // as receipt_schema.hpp compiles the receipts' schema
  return options;
}

struct fixture {
  std::string tasks_schema = make_tasks_schema();
  std::string receipt_schema;
  std::string distinct = make_string_array(70'000, false);
  std::string last_repeats_first = make_string_array(70'000, true);
  llmdlq::schema unique_items = *llmdlq::schema::compile(R"({"type":"array","uniqueItems":true})");
};

/// A task tree three levels deep, and one whose grandchild breaks a leaf.
constexpr const char* valid_task =
    R"({"id":"T0001","title":"root","status":"doing","priority":3,"estimate_hours":2.5,"due":"2026-03-01",
        "tags":["a","b-2"],"subtasks":[{"id":"T0002","title":"child","status":"todo",
        "subtasks":[{"id":"T0003","title":"grandchild","status":"done","metric_0":12.34}]}],
        "owner":{"id":"T0100","title":"owner","status":"review"}})";
constexpr const char* invalid_task =
    R"({"id":"T0001","title":"root","status":"doing","subtasks":[{"id":"T0002","title":"child",
        "status":"todo","subtasks":[{"id":"T0003","title":"grandchild","status":"lost"}]}]})";

bool check(const fixture& f) {
  bool ok = true;
  auto tasks = llmdlq::schema::compile(f.tasks_schema, with_formats());
  auto receipts = llmdlq::schema::compile(f.receipt_schema, with_formats());
  if (!tasks) std::fprintf(stderr, "FAIL: the tasks schema: %s\n", tasks.error().message.c_str());
  if (!receipts) std::fprintf(stderr, "FAIL: the receipt schema: %s\n", receipts.error().message.c_str());
  if (!tasks || !receipts) return false;
  llmdlq::json_parser parser;
  if (auto doc = parser.parse(valid_task); !doc || !tasks->is_valid(*doc)) {
    std::fprintf(stderr, "FAIL: the tasks schema rejects a valid task tree\n");
    ok = false;
  }
  if (auto doc = parser.parse(invalid_task); !doc || tasks->is_valid(*doc)) {
    std::fprintf(stderr, "FAIL: the tasks schema accepts a grandchild with an unknown status\n");
    ok = false;
  }
  std::fprintf(stderr, "Schemas: tasks %zu B (%d definitions), receipt %zu B; arrays %zu B and %zu B\n",
               f.tasks_schema.size(), task_definitions, f.receipt_schema.size(), f.distinct.size(),
               f.last_repeats_first.size());
  return ok;
}

// ---------------------------------------------------------------------------
// Scenarios.

void add_compile(const std::string& scenario, const std::string& schema_text) {
  benchmark::RegisterBenchmark(scenario.c_str(), [&schema_text](benchmark::State& state) {
    for (auto _ : state) {
      auto schema = llmdlq::schema::compile(schema_text, with_formats());
      benchmark::DoNotOptimize(schema);
      if (!schema) {
        state.SkipWithError("the schema did not compile");
        break;
      }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(schema_text.size()));
    state.counters["schema_bytes"] = static_cast<double>(schema_text.size());
  });
}

/// Lowering a schema for a provider's structured outputs, from its text,
/// as a host does once per schema (or per call, at worst).
void add_lowering(const std::string& scenario, const std::string& schema_text, llmdlq::provider_profile profile) {
  benchmark::RegisterBenchmark(scenario.c_str(), [&schema_text, profile](benchmark::State& state) {
    for (auto _ : state) {
      auto lowered = llmdlq::lower_schema(schema_text, profile);
      benchmark::DoNotOptimize(lowered);
      if (!lowered || !lowered->strict) {
        static std::string why;  // SkipWithError keeps the pointer
        why = "the schema did not lower for strict mode: " + (lowered ? lowered->reason : lowered.error().message);
        state.SkipWithError(why.c_str());
        break;
      }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(schema_text.size()));
  });
}

/// Times `run(schema, document)`, the number of errors it finds, on a
/// document parsed once, before the loop; `expected` is the number it must
/// find (none, or the one duplicate).
template <class Run>
void add_unique_items(const std::string& scenario, const fixture& f, const std::string& text, std::size_t expected,
                      Run run) {
  benchmark::RegisterBenchmark(scenario.c_str(), [&f, &text, expected, run](benchmark::State& state) {
    const simdjson::padded_string padded(text);
    llmdlq::json_parser parser;
    auto doc = parser.parse(simdjson::padded_string_view(padded));
    if (!doc) {
      state.SkipWithError("the array did not parse");
      return;
    }
    for (auto _ : state) {
      const std::size_t errors = run(f.unique_items, *doc);
      benchmark::DoNotOptimize(errors);
      if (errors != expected) {
        state.SkipWithError("the verdict is wrong");
        break;
      }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(text.size()));
    state.counters["doc_bytes"] = static_cast<double>(text.size());
  });
}

std::size_t is_valid(const llmdlq::schema& s, const llmdlq::json_document& doc) { return s.is_valid(doc) ? 0 : 1; }
std::size_t validate(const llmdlq::schema& s, const llmdlq::json_document& doc) { return s.validate(doc).size(); }

void register_benchmarks(const fixture& f) {
  add_compile("compile/tasks_50KB", f.tasks_schema);
  add_compile("compile/receipt", f.receipt_schema);
  add_lowering("lower/receipt/openai_strict", f.receipt_schema, llmdlq::provider_profile::openai_strict);
  add_lowering("lower/receipt/anthropic", f.receipt_schema, llmdlq::provider_profile::anthropic);
  // The tasks schema's root is a $ref, which OpenAI's strict mode refuses (its root must be an object).
  add_lowering("lower/tasks_50KB/gemini", f.tasks_schema, llmdlq::provider_profile::gemini);
  add_unique_items("unique_items_is_valid/distinct_1MB", f, f.distinct, 0, is_valid);
  add_unique_items("unique_items_is_valid/last_repeats_first_1MB", f, f.last_repeats_first, 1, is_valid);
  add_unique_items("unique_items_validate/distinct_1MB", f, f.distinct, 0, validate);
  add_unique_items("unique_items_validate/last_repeats_first_1MB", f, f.last_repeats_first, 1, validate);
}

}  // namespace

int main(int argc, char** argv) {
  static fixture f;  // outlives every registered benchmark
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return EXIT_FAILURE;

  auto receipt = llmdlq_bench::read_file(LLMDLQ_BENCH_DATA_DIR "/receipt.schema.json");
  if (!receipt) {
    std::fprintf(stderr, "cannot read %s\n", LLMDLQ_BENCH_DATA_DIR "/receipt.schema.json");
    return EXIT_FAILURE;
  }
  f.receipt_schema = *std::move(receipt);
  if (!check(f)) {
    std::fprintf(stderr, "Not timing: an input does not get the verdict it must (see above).\n");
    return EXIT_FAILURE;
  }
  benchmark::AddCustomContext("llmdlq", LLMDLQ_VERSION_STRING);
  benchmark::AddCustomContext("tasks_schema", std::to_string(f.tasks_schema.size()) + " B");
  benchmark::AddCustomContext("unique_items_array", std::to_string(f.distinct.size()) + " B");

  register_benchmarks(f);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return EXIT_SUCCESS;
}
