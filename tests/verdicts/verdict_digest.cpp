// SPDX-License-Identifier: MIT
// The verdicts of every corpus the project has, as one digest per corpus:
// each text judged by process_llm_response (under the strict, repairing and
// coercing options), and each result written down whole (the accepted bytes
// and repairs, or the envelope's JSON). A refactoring of the judgement must
// leave every line of digests.txt as it is.
//
//   verdict_digest SOURCE_DIR CONFORMANCE_DIR        one line per corpus
//   verdict_digest SOURCE_DIR CONFORMANCE_DIR --each  one line per text
//
// Exits 77 (skipped) when the conformance folder is missing.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>
#include <llmdlq/detail/identifiers.hpp>
#include <llmdlq/envelope.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/schema.hpp>

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<fs::path> files_in(const fs::path& dir, std::string_view extension = {}) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && (extension.empty() || entry.path().extension() == extension)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

llmdlq::timestamp fixed_now() { return llmdlq::timestamp(std::chrono::milliseconds(1'790'000'000'000)); }

// One corpus: its texts' verdicts, hashed in order.
class corpus {
 public:
  corpus(std::string name, bool each) : name_(std::move(name)), each_(each) {}

  void add(std::string_view id, const llmdlq::expected<llmdlq::accepted, llmdlq::envelope>& result) {
    std::string line;
    if (result) {
      line = "accepted " + llmdlq::detail::sha256_hex(result->json).substr(0, 16);
      for (const auto& r : result->repairs) line += " " + std::string(r.code);
    } else {
      const auto& e = result.error();
      line = std::string("dead ") + std::string(llmdlq::to_string(e.failure.category)) + " " +
             llmdlq::detail::sha256_hex(llmdlq::serialize(e)).substr(0, 16) + " " + e.failure.message;
    }
    add_line(id, line);
  }

  void add_line(std::string_view id, std::string_view line) {
    all_.append(line).push_back('\n');
    ++count_;
    if (each_) std::cout << name_ << " " << id << ": " << line << "\n";
  }

  ~corpus() {
    if (!each_) std::cout << name_ << " " << count_ << " " << llmdlq::detail::sha256_hex(all_) << "\n";
  }

 private:
  std::string name_;
  bool each_;
  std::string all_;
  std::size_t count_ = 0;
};

// The option sets every plain text is judged under.
struct option_set {
  const char* name;
  llmdlq::process_options options;
};

std::vector<option_set> option_sets() {
  std::vector<option_set> sets(3);
  for (auto& s : sets) s.options.clock = fixed_now;
  sets[0].name = "repair";
  sets[1].name = "strict";
  sets[1].options.repair = llmdlq::repair_mode::off;
  sets[2].name = "coerce";
  sets[2].options.coerce = true;
  return sets;
}

void judge_texts(const std::string& name, const std::vector<std::pair<std::string, std::string>>& texts,
                 const llmdlq::schema& schema, bool each) {
  for (const auto& set : option_sets()) {
    corpus c(name + "/" + set.name, each);
    llmdlq::request_context context;
    for (const auto& [id, text] : texts) c.add(id, llmdlq::process_llm_response(text, schema, context, set.options));
  }
}

std::vector<std::pair<std::string, std::string>> folder_texts(const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& file : files_in(dir)) texts.emplace_back(file.filename().string(), read_file(file));
  return texts;
}

// The fuzz_process harness's inputs, decoded as it decodes them.
void judge_fuzz_process(const fs::path& dir, const llmdlq::schema& receipt, bool each) {
  corpus c("fuzz_process", each);
  for (const auto& file : files_in(dir)) {
    const std::string data = read_file(file);
    if (data.size() < 2) continue;
    const auto flags = static_cast<std::uint8_t>(data[1]);
    const std::string_view rest = std::string_view(data).substr(2);
    const std::size_t nul = rest.find('\0');
    const std::string_view response = rest.substr(0, nul);
    const std::string_view input = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
    llmdlq::process_options options;
    options.clock = fixed_now;
    options.max_envelope_bytes = 4096 + 64 * std::size_t{static_cast<std::uint8_t>(data[0])};
    options.repair = (flags & 1u) ? llmdlq::repair_mode::off : llmdlq::repair_mode::local;
    options.coerce = (flags & 2u) != 0;
    options.limits.max_size = 1u << 20;
    options.limits.max_depth = 64;
    llmdlq::request_context context;
    context.original_input = input;
    if (flags & 4u) context.idempotency_key = context.record_id = std::string(input);
    if (flags & 8u) context.finish_reason = "length";
    if (const int score = (flags >> 4) & 3; score != 0) {
      options.min_confidence = 0.5;
      context.confidence = score == 1 ? 0.3 : score == 2 ? std::numeric_limits<double>::quiet_NaN()
                                                         : std::numeric_limits<double>::infinity();
    }
    if (flags & 64u) options.max_errors = 0;
    c.add(file.filename().string(), llmdlq::process_llm_response(response, receipt, context, options));
  }
}

std::map<std::string, std::string, std::less<>> load_remotes(const fs::path& root) {
  std::map<std::string, std::string, std::less<>> remotes;
  for (const auto& entry : fs::recursive_directory_iterator(root / "remotes")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    remotes.emplace("http://localhost:1234/" + fs::relative(entry.path(), root / "remotes").generic_string(),
                    read_file(entry.path()));
  }
  return remotes;
}

// Every instance of one draft's files (required, optional, optional/format),
// judged as an answer to its case's schema.
void judge_draft(const fs::path& root, const std::string& folder, llmdlq::dialect draft, bool each) {
  llmdlq::compile_options compile;
  compile.remotes = load_remotes(root);
  compile.default_dialect = draft;
  llmdlq::process_options options;
  options.clock = fixed_now;
  options.limits.max_depth = 1024;
  const fs::path tests = root / "tests" / folder;
  corpus c("json-schema-test-suite/" + folder, each);
  for (const auto& [dir, format] : {std::pair{tests, false}, std::pair{tests / "optional", false},
                                    std::pair{tests / "optional" / "format", true}}) {
    compile.format_assertion = format;
    for (const auto& file : files_in(dir, ".json")) {
      const auto cases = boost::json::parse(read_file(file)).as_array();
      const std::string name = fs::relative(file, tests).generic_string();
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& test_case = cases[i].as_object();
        const auto schema = llmdlq::schema::compile(test_case.at("schema"), compile);
        const auto& instances = test_case.at("tests").as_array();
        for (std::size_t j = 0; j < instances.size(); ++j) {
          const std::string id = name + "#" + std::to_string(i) + "." + std::to_string(j);
          if (!schema) {
            c.add_line(id, "schema does not compile: " + schema.error().message);
            continue;
          }
          const std::string text = boost::json::serialize(instances[j].as_object().at("data"));
          c.add(id, llmdlq::process_llm_response(text, *schema, {}, options));
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: verdict_digest SOURCE_DIR CONFORMANCE_DIR [--each]\n");
    return 2;
  }
  const fs::path source = argv[1];
  const fs::path conformance = argv[2];
  const bool each = argc > 3 && std::string_view(argv[3]) == "--each";
  if (!fs::is_directory(conformance / "json-schema-test-suite") || !fs::is_directory(conformance / "json-test-suite")) {
    std::fprintf(stderr, "verdict_digest: no conformance suites in %s\n", conformance.c_str());
    return 77;
  }
  llmdlq::compile_options with_formats;
  with_formats.format_assertion = true;
  const auto receipt = llmdlq::schema::compile(read_file(source / "examples/data/receipt.schema.json"), with_formats);
  const auto anything = llmdlq::schema::compile("{}");
  if (!receipt || !anything) return 1;

  judge_fuzz_process(source / "tests/fuzz/corpus/fuzz_process", *receipt, each);
  for (const char* name : {"fuzz_repair", "fuzz_redactor", "fuzz_json_parser", "fuzz_repair_prompt"}) {
    judge_texts(name, folder_texts(source / "tests/fuzz/corpus" / name), *receipt, each);
  }
  judge_texts("examples/receipts", folder_texts(source / "examples/data/receipts"), *receipt, each);
  {
    std::vector<std::pair<std::string, std::string>> texts;
    std::istringstream lines(read_file(source / "examples/data/responses.jsonl"));
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) continue;
      const auto record = boost::json::parse(line).as_object();
      texts.emplace_back(std::string(record.at("id").as_string()), std::string(record.at("response").as_string()));
    }
    judge_texts("examples/responses", texts, *receipt, each);
  }
  const auto parsing = folder_texts(conformance / "json-test-suite/test_parsing");
  judge_texts("json-test-suite/receipt", parsing, *receipt, each);
  judge_texts("json-test-suite/anything", parsing, *anything, each);
  const fs::path suite = conformance / "json-schema-test-suite";
  judge_draft(suite, "draft4", llmdlq::dialect::draft4, each);
  judge_draft(suite, "draft6", llmdlq::dialect::draft6, each);
  judge_draft(suite, "draft7", llmdlq::dialect::draft7, each);
  judge_draft(suite, "draft2019-09", llmdlq::dialect::draft2019_09, each);
  judge_draft(suite, "draft2020-12", llmdlq::dialect::draft2020_12, each);
  return 0;
}
