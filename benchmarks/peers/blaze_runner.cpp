// SPDX-License-Identifier: MIT
// Times Blaze (sourcemeta/blaze, its fastest mode) on the cases
// catalog_benchmark writes with --write-inputs=DIR, as llmdlq is timed there:
// per case the schema's compile, validation from text (parse_json + validate,
// per instance) and validation of documents parsed once beforehand. This
// file is llmdlq's; Blaze is not. scripts/bench compiles it with clang and
// libc++ against a Blaze it built outside the project tree; nothing of llmdlq
// links Blaze.
//
// Before timing a case, every instance's verdict (from text and pre-parsed)
// must be the one catalog_benchmark expects (DIR/<case>.verdicts); a case
// whose verdicts differ is not timed and reports an error row naming the
// instances. Measurements are CPU time of the process, repeated until
// --min-time, in rounds that visit every case in turn (the cases alternate,
// so a slow moment of the machine is shared); the median of the rounds is
// kept. The output is shaped as Google Benchmark's JSON (aggregate rows named
// blaze_compile/<case>, blaze_from_text/<case>, blaze_pre_parsed/<case>),
// plus "verdicts": each case's verdict string beside the expected one.
//
// usage: blaze_runner --inputs=DIR [--repetitions=N] [--min-time=SECONDS]
//                     [--out=FILE.json] [--filter=SUBSTRING]

#include <sourcemeta/blaze/compiler.h>
#include <sourcemeta/blaze/evaluator.h>
#include <sourcemeta/blaze/foundation.h>
#include <sourcemeta/core/json.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifndef LLMDLQ_BLAZE_COMMIT
#define LLMDLQ_BLAZE_COMMIT "unknown"
#endif

namespace {

using sourcemeta::core::JSON;

struct options {
  std::filesystem::path inputs = "build/bench/catalog_inputs";
  int repetitions = 5;
  double min_time = 0.1;
  std::string out;
  std::string filter;
};

/// One case: its texts, the compiled template and the pre-parsed documents.
struct blaze_case {
  std::string name;
  std::string schema_text;
  std::vector<std::string> instances;
  std::string expected;  ///< '1' valid, '0' invalid, per instance
  std::size_t bytes = 0;
  std::string verdicts_text;    ///< Blaze's from text
  std::string verdicts_parsed;  ///< Blaze's on the pre-parsed documents
  std::string error;            ///< why the case is not timed
  std::optional<sourcemeta::blaze::Template> schema;
  std::vector<JSON> documents;
  std::vector<double> compile_ns, text_ns, parsed_ns;  ///< one per round
  std::size_t compile_iterations = 0, text_iterations = 0, parsed_iterations = 0;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

double cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

sourcemeta::blaze::Template compile(const JSON& schema) {
  return sourcemeta::blaze::compile(schema, sourcemeta::blaze::schema_walker, sourcemeta::blaze::schema_resolver,
                                    sourcemeta::blaze::default_schema_compiler,
                                    sourcemeta::blaze::Mode::FastValidation);
}

/// Calls `pass` until `min_time` seconds of CPU have gone; nanoseconds per call, and the calls made.
template <class Pass>
std::pair<double, std::size_t> measure(Pass pass, double min_time) {
  std::size_t iterations = 0;
  const double start = cpu_ns();
  double elapsed = 0;
  do {
    pass();
    ++iterations;
    elapsed = cpu_ns() - start;
  } while (elapsed < min_time * 1e9);
  return {elapsed / static_cast<double>(iterations), iterations};
}

std::size_t from_text(const blaze_case& c, sourcemeta::blaze::Evaluator& evaluator) {
  std::size_t valid = 0;
  for (const auto& text : c.instances) {
    const JSON instance = sourcemeta::core::parse_json(text);
    valid += evaluator.validate(*c.schema, instance) ? 1 : 0;
  }
  return valid;
}

std::size_t pre_parsed(const blaze_case& c, sourcemeta::blaze::Evaluator& evaluator) {
  std::size_t valid = 0;
  for (const auto& instance : c.documents) valid += evaluator.validate(*c.schema, instance) ? 1 : 0;
  return valid;
}

/// Loads the case, compiles its schema, parses its instances and checks every verdict.
void set_up(blaze_case& c, const std::filesystem::path& dir, const JSON& entry) {
  c.schema_text = read_file(dir / entry.at("schema").to_string());
  std::istringstream lines(read_file(dir / entry.at("instances").to_string()));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    c.bytes += line.size();
    c.instances.push_back(std::move(line));
  }
  c.expected = read_file(dir / entry.at("verdicts").to_string());
  while (!c.expected.empty() && (c.expected.back() == '\n' || c.expected.back() == '\r')) c.expected.pop_back();
  if (c.expected.size() != c.instances.size()) {
    c.error = "the inputs hold " + std::to_string(c.instances.size()) + " instances and " +
              std::to_string(c.expected.size()) + " verdicts";
    return;
  }
  try {
    c.schema.emplace(compile(sourcemeta::core::parse_json(c.schema_text)));
  } catch (const std::exception& e) {
    c.error = std::string("Blaze cannot compile the schema: ") + e.what();
    return;
  }
  sourcemeta::blaze::Evaluator evaluator;
  try {
    for (const auto& text : c.instances) {
      const JSON instance = sourcemeta::core::parse_json(text);
      c.verdicts_text += evaluator.validate(*c.schema, instance) ? '1' : '0';
      c.documents.push_back(instance);
    }
  } catch (const std::exception& e) {
    c.error = std::string("Blaze cannot parse an instance: ") + e.what();
    return;
  }
  for (const auto& instance : c.documents) c.verdicts_parsed += evaluator.validate(*c.schema, instance) ? '1' : '0';
  std::string differ;
  std::size_t count = 0;
  for (std::size_t i = 0; i < c.expected.size(); ++i) {
    if (c.verdicts_text[i] == c.expected[i] && c.verdicts_parsed[i] == c.expected[i]) continue;
    if (++count <= 10) {
      differ += (differ.empty() ? "" : ", ") + std::to_string(i) + " (expected " +
                (c.expected[i] == '1' ? "valid" : "invalid") + ")";
    }
  }
  if (count) {
    c.error = "Blaze's verdicts differ from llmdlq's on " + std::to_string(count) + " of " +
              std::to_string(c.expected.size()) + " instances: " + differ + (count > 10 ? ", ..." : "");
  }
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const std::size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string row(const std::string& scenario, const blaze_case& c, const std::vector<double>& ns, std::size_t iterations,
                std::size_t bytes, std::size_t items, int repetitions) {
  const std::string name = json_string(scenario + "/" + c.name);
  if (!c.error.empty()) {
    return "{\"name\": " + name + ", \"run_name\": " + name + ", \"run_type\": \"aggregate\", " +
           "\"aggregate_name\": \"median\", \"error_occurred\": true, \"error_message\": " + json_string(c.error) + "}";
  }
  const double t = median(ns);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"name\": %s, \"run_name\": %s, \"run_type\": \"aggregate\", \"aggregate_name\": \"median\", "
                "\"repetitions\": %d, \"iterations\": %zu, \"real_time\": %.3f, \"cpu_time\": %.3f, "
                "\"time_unit\": \"ns\", \"bytes_per_second\": %.3f, \"items_per_second\": %.3f, "
                "\"instances\": %zu, \"instance_bytes\": %zu}",
                name.c_str(), name.c_str(), repetitions, iterations, t, t, static_cast<double>(bytes) * 1e9 / t,
                static_cast<double>(items) * 1e9 / t, c.instances.size(), c.bytes);
  return buf;
}

options parse_options(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&arg](std::string_view flag) -> std::optional<std::string> {
      if (!arg.starts_with(flag)) return std::nullopt;
      return std::string(arg.substr(flag.size()));
    };
    if (auto v = value("--inputs=")) {
      o.inputs = *v;
    } else if (auto v = value("--repetitions=")) {
      o.repetitions = std::max(1, std::atoi(v->c_str()));
    } else if (auto v = value("--min-time=")) {
      o.min_time = std::atof(v->c_str());
    } else if (auto v = value("--out=")) {
      o.out = *v;
    } else if (auto v = value("--filter=")) {
      o.filter = *v;
    } else {
      std::fprintf(stderr, "usage: blaze_runner --inputs=DIR [--repetitions=N] [--min-time=SECONDS] "
                           "[--out=FILE.json] [--filter=SUBSTRING]\n");
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse_options(argc, argv);
  std::vector<blaze_case> cases;
  try {
    const JSON manifest = sourcemeta::core::parse_json(read_file(o.inputs / "manifest.json"));
    for (const auto& entry : manifest.as_array()) {
      const std::string name{entry.at("name").to_string()};
      if (!o.filter.empty() && name.find(o.filter) == std::string::npos) continue;
      blaze_case& c = cases.emplace_back();
      c.name = name;
      set_up(c, o.inputs, entry);
      std::fprintf(stderr, "  %-18s %5zu instances, %8zu B: %s\n", c.name.c_str(), c.instances.size(), c.bytes,
                   c.error.empty() ? "Blaze agrees with every verdict" : c.error.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return EXIT_FAILURE;
  }

  // Rounds: each visits every case in turn, in the other direction every other round.
  sourcemeta::blaze::Evaluator evaluator;
  for (int round = 0; round < o.repetitions; ++round) {
    for (std::size_t k = 0; k < cases.size(); ++k) {
      blaze_case& c = cases[round % 2 ? cases.size() - 1 - k : k];
      if (!c.error.empty()) continue;
      std::size_t sink = 0;
      auto [compile_ns, compile_iterations] = measure(
          [&] {
            // From the schema's text, as llmdlq's compile is timed.
            const auto compiled = compile(sourcemeta::core::parse_json(c.schema_text));
            sink += compiled.targets.size();
          },
          o.min_time);
      auto [text_ns, text_iterations] = measure([&] { sink += from_text(c, evaluator); }, o.min_time);
      auto [parsed_ns, parsed_iterations] = measure([&] { sink += pre_parsed(c, evaluator); }, o.min_time);
      c.compile_ns.push_back(compile_ns);
      c.text_ns.push_back(text_ns);
      c.parsed_ns.push_back(parsed_ns);
      c.compile_iterations = compile_iterations;
      c.text_iterations = text_iterations;
      c.parsed_iterations = parsed_iterations;
      if (sink == 0) std::fprintf(stderr, "(no instance was valid)\n");
    }
  }

  std::string rows;
  std::string verdicts;
  for (const auto& c : cases) {
    if (!c.error.empty()) {
      std::fprintf(stderr, "ERROR: %s: %s\n", c.name.c_str(), c.error.c_str());
    } else {
      std::fprintf(stderr, "%-18s compile %10.1f us   from text %8.1f MB/s   pre-parsed %8.1f MB/s\n", c.name.c_str(),
                   median(c.compile_ns) / 1e3, static_cast<double>(c.bytes) * 1e3 / median(c.text_ns),
                   static_cast<double>(c.bytes) * 1e3 / median(c.parsed_ns));
    }
    for (const auto& r :
         {row("blaze_compile", c, c.compile_ns, c.compile_iterations, c.schema_text.size(), 1, o.repetitions),
          row("blaze_from_text", c, c.text_ns, c.text_iterations, c.bytes, c.instances.size(), o.repetitions),
          row("blaze_pre_parsed", c, c.parsed_ns, c.parsed_iterations, c.bytes, c.instances.size(), o.repetitions)}) {
      rows += (rows.empty() ? "    " : ",\n    ") + r;
    }
    verdicts += (verdicts.empty() ? "    " : ",\n    ") + json_string(c.name) +
                ": {\"expected\": " + json_string(c.expected) + ", \"from_text\": " + json_string(c.verdicts_text) +
                ", \"pre_parsed\": " + json_string(c.verdicts_parsed) +
                ", \"agree\": " + (c.error.empty() ? "true" : "false") + "}";
  }
  const std::string report =
      std::string("{\n  \"context\": {\"blaze\": ") + json_string(LLMDLQ_BLAZE_COMMIT) +
      ", \"compiler\": " + json_string(__VERSION__) +
      ", \"mode\": \"FastValidation\", \"repetitions\": " + std::to_string(o.repetitions) +
      ", \"min_time_s\": " + std::to_string(o.min_time) +
      ", \"time\": \"CPU time of the process per pass over the case's instances (per compile), median of the "
      "rounds\"},\n  \"benchmarks\": [\n" +
      rows + "\n  ],\n  \"verdicts\": {\n" + verdicts + "\n  }\n}\n";
  if (!o.out.empty()) {
    std::ofstream out(o.out, std::ios::binary);
    out << report;
    if (!out) {
      std::fprintf(stderr, "error: cannot write %s\n", o.out.c_str());
      return EXIT_FAILURE;
    }
  }
  bool all_agree = true;
  for (const auto& c : cases) all_agree = all_agree && c.error.empty();
  return all_agree ? EXIT_SUCCESS : 3;
}
