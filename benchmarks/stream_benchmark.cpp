// SPDX-License-Identifier: MIT
// The stream judge on streamed answers of its own (benchmarks/README.md,
// "Streaming"): for answers that die early (a wrong type, a forbidden name,
// an enum value, maxItems, an injection marker, prose before strict JSON)
// at 1 KB, 16 KB and 256 KB, the share of the answer read before the
// verdict (whole-text judging reads all of it); and for an answer that
// stays viable to its end, the judge's throughput fed in 16-byte pieces
// and whole, beside process_llm_response on the same text, with the
// allocations per piece after the first; each under repair off, local
// repair (the default) and local repair with the lossy tier accepted.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <llmdlq/process.hpp>
#include <llmdlq/stream_judge.hpp>

namespace {

std::atomic<std::size_t> allocations{0};

}  // namespace

// The global allocation functions, replaced to count: GCC cannot see that
// this operator delete frees what this operator new took from malloc.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

const char* const schema_text = R"({
  "type": "object", "additionalProperties": false, "required": ["merchant", "total", "currency", "lines"],
  "properties": {
    "merchant": {"type": "string", "maxLength": 80},
    "total": {"type": "number", "minimum": 0},
    "currency": {"enum": ["EUR", "USD", "RUB", "LKR"]},
    "note": {"type": "string"},
    "lines": {"type": "array", "maxItems": 100000, "items": {"type": "object", "additionalProperties": false,
              "properties": {"name": {"type": "string"}, "qty": {"type": "integer"}, "price": {"type": "number"}}}},
    "few": {"type": "array", "maxItems": 3}
  }
})";

const llmdlq::schema& receipt() {
  static const auto s = llmdlq::schema::compile(schema_text).value();
  return s;
}

llmdlq::process_config strict() {
  llmdlq::process_config config;
  config.judging.repair = llmdlq::repair_mode::off;
  config.judging.limits.max_size = std::size_t{1} << 24;
  return config;
}

// The judging policies timed: strict JSON (repair off); local repair (the
// default), under which the judge follows the schema as it does without
// repair; and local repair with the lossy tier accepted, under which it
// reads only the byte screens (which is what the default did before).
const char* const policy_names[] = {"repair_off", "repair_local", "repair_lossy"};

llmdlq::process_config policy(std::int64_t p) {
  llmdlq::process_config config = strict();
  if (p >= 1) config.judging.repair = llmdlq::repair_mode::local;
  if (p == 2) {
    config.judging.accept_repairs = {llmdlq::repair_tier::lossless, llmdlq::repair_tier::syntactic,
                                     llmdlq::repair_tier::lossy};
  }
  return config;
}

// `lines` receipt lines, a valid answer of about 30 bytes each.
std::string lines_of(std::size_t bytes) {
  std::string out;
  for (int i = 0; out.size() < bytes; ++i) {
    if (i) out += ", ";
    out += R"({"name": "item )" + std::to_string(i) + R"(", "qty": 2, "price": 1.25})";
  }
  return out;
}

struct answer_kind {
  const char* name;
  std::string (*make)(std::size_t bytes);
};

// Each opens with its fault and goes on with valid lines to the size.
const answer_kind early_deaths[] = {
    {"wrong_type",
     [](std::size_t n) { return R"({"total": "12.50", "merchant": "A", "lines": [)" + lines_of(n) + "]}"; }},
    {"forbidden_key", [](std::size_t n) { return R"({"merchant": "A", "tip": 2, "lines": [)" + lines_of(n) + "]}"; }},
    {"enum", [](std::size_t n) { return R"({"currency": "GBP", "lines": [)" + lines_of(n) + "]}"; }},
    {"max_items", [](std::size_t n) { return R"({"few": [1, 2, 3, 4], "lines": [)" + lines_of(n) + "]}"; }},
    {"injection",
     [](std::size_t n) { return R"({"merchant": "<|im_start|>system", "lines": [)" + lines_of(n) + "]}"; }},
    {"prose", [](std::size_t n) { return "Sure! Here is the receipt: {\"lines\": [" + lines_of(n) + "]}"; }},
};

// Viable to its end, where `required` fails: judged whole only at finish().
std::string viable(std::size_t n) { return R"({"merchant": "A", "total": 12.5, "lines": [)" + lines_of(n) + "]}"; }

const std::size_t sizes[] = {1 << 10, 16 << 10, 256 << 10};

// The share of the answer fed before the verdict, fed in 16-byte pieces.
void BM_bytes_before_verdict(benchmark::State& state) {
  const auto& kind = early_deaths[state.range(0)];
  const std::string text = kind.make(static_cast<std::size_t>(state.range(1)));
  std::size_t fed = 0;
  for (auto _ : state) {
    llmdlq::stream_judge judge(receipt(), {}, policy(state.range(2)));
    fed = 0;
    for (; fed < text.size() && !judge.verdict().dead; fed += 16) judge.feed(std::string_view(text).substr(fed, 16));
    benchmark::DoNotOptimize(judge.verdict());
  }
  state.SetLabel(std::string(kind.name) + " " + policy_names[state.range(2)]);
  state.counters["read_pct"] = 100.0 * static_cast<double>(std::min(fed, text.size())) /
                               static_cast<double>(text.size());
  state.counters["bytes"] = static_cast<double>(text.size());
}

void early_death_args(benchmark::internal::Benchmark* b) {
  for (int k = 0; k < static_cast<int>(std::size(early_deaths)); ++k) {
    for (const auto n : sizes) {
      for (const std::int64_t p : {0, 1}) b->Args({k, static_cast<std::int64_t>(n), p});
    }
  }
}

// The judge over a viable answer: fed in pieces of range(1) bytes (0: whole).
void BM_judge_viable(benchmark::State& state) {
  const std::string text = viable(static_cast<std::size_t>(state.range(0)));
  const std::size_t piece = state.range(1) == 0 ? text.size() : static_cast<std::size_t>(state.range(1));
  const auto config = policy(state.range(2));
  std::size_t allocations_after_first = 0, pieces = 0;
  for (auto _ : state) {
    llmdlq::stream_judge judge(receipt(), {}, config);
    judge.feed(std::string_view(text).substr(0, piece));
    const std::size_t before = allocations.load(std::memory_order_relaxed);
    for (std::size_t at = piece; at < text.size(); at += piece) judge.feed(std::string_view(text).substr(at, piece));
    allocations_after_first += allocations.load(std::memory_order_relaxed) - before;
    pieces += (text.size() + piece - 1) / piece;
    if (judge.verdict().dead) state.SkipWithError("a viable answer was called dead");
  }
  state.SetLabel(policy_names[state.range(2)]);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
  state.counters["allocs_per_piece"] = static_cast<double>(allocations_after_first) / static_cast<double>(pieces);
}

// process_llm_response on the same whole text: what whole-text judging costs.
void BM_process_viable(benchmark::State& state) {
  const std::string text = viable(static_cast<std::size_t>(state.range(0)));
  const auto options = strict();
  for (auto _ : state) benchmark::DoNotOptimize(llmdlq::process_llm_response(text, receipt(), {}, options));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

}  // namespace

BENCHMARK(BM_bytes_before_verdict)->Apply(early_death_args);
BENCHMARK(BM_judge_viable)->ArgsProduct({{1 << 10, 16 << 10, 256 << 10}, {16, 0}, {0, 1, 2}});
BENCHMARK(BM_process_viable)->Arg(1 << 10)->Arg(16 << 10)->Arg(256 << 10);
BENCHMARK_MAIN();
