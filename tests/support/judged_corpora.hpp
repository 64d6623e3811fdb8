// SPDX-License-Identifier: MIT
// Every corpus the project has, as texts to judge, each with the schema,
// context and options it is judged under. In the tree: the fuzz corpora,
// the example receipts and responses, and tests/verdicts/coercions (orders
// with values of the wrong type, against their own schema). In the
// conformance folder, when one is given: JSONTestSuite's texts (against the
// receipt schema and against {}), and every instance of the five drafts'
// suites as an answer to its case's schema. verdict_digest hashes their
// verdicts and holds them to hand labels and to the suites' own verdicts;
// the stream judge's equivalence check feeds them in pieces.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/schema.hpp>

namespace llmdlq::test {

namespace fs = std::filesystem;

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<fs::path> files_in(const fs::path& dir, std::string_view extension = {}) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && (extension.empty() || entry.path().extension() == extension)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline timestamp corpus_now() { return timestamp(std::chrono::milliseconds(1'790'000'000'000)); }

/// One text to judge. `schema` is null when the case's schema does not
/// compile (`schema_error` says why).
struct judged_text {
  std::string_view corpus;  ///< e.g. `examples/responses/strict`, `json-schema-test-suite/draft7`
  std::string_view id;      ///< the file, line id or case#test within it
  std::string_view text;
  const llmdlq::schema* schema = nullptr;
  std::string_view schema_error;
  const request_context* context = nullptr;
  const process_options* options = nullptr;
  /// What the suite itself says of the text: JSON-Schema-Test-Suite's
  /// `valid` for the instance; JSONTestSuite's y_ (true: JSON) and n_
  /// (false: not JSON). Empty for its i_ files and the in-tree corpora.
  std::optional<bool> suite_says_valid;
};

/// Whether `corpus` is read from the conformance folder (a suite's) rather
/// than from the tree.
[[nodiscard]] inline bool is_suite_corpus(std::string_view corpus) noexcept {
  return corpus.starts_with("json-test-suite/") || corpus.starts_with("json-schema-test-suite/");
}

/// A conformance folder was given that lacks a suite: the corpora it should
/// hold cannot be judged, which is a failure, never a skip.
class missing_suites : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using judged_text_visitor = std::function<void(const judged_text&)>;

namespace detail_corpora {

// The option sets every plain text is judged under.
inline std::vector<std::pair<const char*, process_options>> option_sets() {
  std::vector<std::pair<const char*, process_options>> sets(3);
  for (auto& [name, options] : sets) options.clock = corpus_now;
  sets[0].first = "repair";
  sets[1].first = "strict";
  sets[1].second.repair = repair_mode::off;
  sets[2].first = "coerce";
  sets[2].second.coerce = true;
  return sets;
}

// `says_valid`, when given, reads the suite's verdict from a text's id.
inline void visit_texts(const std::string& name, const std::vector<std::pair<std::string, std::string>>& texts,
                        const schema& s, const judged_text_visitor& visit,
                        std::optional<bool> (*says_valid)(std::string_view id) = nullptr) {
  const request_context context;
  for (const auto& [set, options] : option_sets()) {
    const std::string corpus = name + "/" + set;
    for (const auto& [id, text] : texts) {
      visit({corpus, id, text, &s, {}, &context, &options, says_valid ? says_valid(id) : std::nullopt});
    }
  }
}

// JSONTestSuite names its files y_ (must parse), n_ (must not) and i_ (either).
inline std::optional<bool> json_test_suite_says(std::string_view id) {
  if (id.starts_with("y_")) return true;
  if (id.starts_with("n_")) return false;
  return std::nullopt;
}

inline std::vector<std::pair<std::string, std::string>> folder_texts(const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& file : files_in(dir)) texts.emplace_back(file.filename().string(), read_file(file));
  return texts;
}

// The fuzz_process harness's inputs, decoded as it decodes them.
inline void visit_fuzz_process(const fs::path& dir, const schema& receipt, const judged_text_visitor& visit) {
  for (const auto& file : files_in(dir)) {
    const std::string data = read_file(file);
    if (data.size() < 2) continue;
    const auto flags = static_cast<std::uint8_t>(data[1]);
    const std::string_view rest = std::string_view(data).substr(2);
    const std::size_t nul = rest.find('\0');
    const std::string_view response = rest.substr(0, nul);
    const std::string_view input = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
    process_options options;
    options.clock = corpus_now;
    options.max_envelope_bytes = 4096 + 64 * std::size_t{static_cast<std::uint8_t>(data[0])};
    options.repair = (flags & 1u) ? repair_mode::off : repair_mode::local;
    options.coerce = (flags & 2u) != 0;
    options.limits.max_size = 1u << 20;
    options.limits.max_depth = 64;
    request_context context;
    context.original_input = input;
    if (flags & 4u) context.idempotency_key = context.record_id = std::string(input);
    if (flags & 8u) context.finish_reason = "length";
    if (const int score = (flags >> 4) & 3; score != 0) {
      options.min_confidence = 0.5;
      context.confidence = score == 1 ? 0.3 : score == 2 ? std::numeric_limits<double>::quiet_NaN()
                                                         : std::numeric_limits<double>::infinity();
    }
    if (flags & 64u) options.max_errors = 0;
    const std::string id = file.filename().string();
    visit({"fuzz_process", id, response, &receipt, {}, &context, &options, std::nullopt});
  }
}

inline std::map<std::string, std::string, std::less<>> load_remotes(const fs::path& root) {
  std::map<std::string, std::string, std::less<>> remotes;
  for (const auto& entry : fs::recursive_directory_iterator(root / "remotes")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    remotes.emplace("http://localhost:1234/" + fs::relative(entry.path(), root / "remotes").generic_string(),
                    read_file(entry.path()));
  }
  return remotes;
}

// Every instance of one draft's files (required, optional, optional/format),
// as an answer to its case's schema.
inline void visit_draft(const fs::path& root, const std::string& folder, dialect draft,
                        const judged_text_visitor& visit) {
  compile_options compile;
  compile.remotes = load_remotes(root);
  compile.default_dialect = draft;
  process_options options;
  options.clock = corpus_now;
  options.limits.max_depth = 1024;
  const request_context context;
  const fs::path tests = root / "tests" / folder;
  const std::string corpus = "json-schema-test-suite/" + folder;
  for (const auto& [dir, format] : {std::pair{tests, false}, std::pair{tests / "optional", false},
                                    std::pair{tests / "optional" / "format", true}}) {
    compile.format_assertion = format;
    for (const auto& file : files_in(dir, ".json")) {
      const auto cases = boost::json::parse(read_file(file)).as_array();
      const std::string name = fs::relative(file, tests).generic_string();
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& test_case = cases[i].as_object();
        const auto compiled = schema::compile(test_case.at("schema"), compile);
        const std::string error = compiled ? std::string() : compiled.error().message;
        const auto& instances = test_case.at("tests").as_array();
        for (std::size_t j = 0; j < instances.size(); ++j) {
          const std::string id = name + "#" + std::to_string(i) + "." + std::to_string(j);
          const auto& instance = instances[j].as_object();
          const std::string text = boost::json::serialize(instance.at("data"));
          visit({corpus, id, text, compiled ? &*compiled : nullptr, error, &context, &options,
                 instance.at("valid").as_bool()});
        }
      }
    }
  }
}

}  // namespace detail_corpora

/// Why `conformance` cannot serve as the conformance folder (it lacks a
/// suite), naming it; empty when it holds both suites.
[[nodiscard]] inline std::string conformance_problem(const fs::path& conformance) {
  for (const char* suite : {"json-schema-test-suite", "json-test-suite/test_parsing"}) {
    if (!fs::is_directory(conformance / suite)) {
      return "the conformance folder \"" + conformance.string() + "\" has no " + suite +
             " (LLMDLQ_CONFORMANCE_DIR: empty to leave the suites out, else a folder holding "
             "json-schema-test-suite/ and json-test-suite/)";
    }
  }
  return {};
}

/// Which corpora for_each_judged_text visits.
enum class corpora : std::uint8_t {
  all,          ///< the tree's, then the suites' when a conformance folder is given
  suites_only,  ///< the suites' alone (a conformance folder must be given)
};

/// Visits the texts corpus by corpus (the texts of one corpus in a row):
/// the tree's always (unless `which` is suites_only), then, when
/// `conformance` is not empty, the suites'. A conformance folder that lacks
/// a suite throws missing_suites before anything is visited: a wrong folder
/// fails, it never passes for a missing one.
inline void for_each_judged_text(const fs::path& source, const fs::path& conformance,
                                 const judged_text_visitor& visit, corpora which = corpora::all) {
  using namespace detail_corpora;
  if (which == corpora::suites_only && conformance.empty()) {
    throw missing_suites("the suites alone were asked for, but no conformance folder was given");
  }
  if (!conformance.empty()) {
    if (auto problem = conformance_problem(conformance); !problem.empty()) throw missing_suites(problem);
  }
  compile_options with_formats;
  with_formats.format_assertion = true;
  const auto receipt = schema::compile(read_file(source / "examples/data/receipt.schema.json"), with_formats);
  if (!receipt) throw std::runtime_error("the receipt schema does not compile: " + receipt.error().message);

  if (which == corpora::all) {
    visit_fuzz_process(source / "tests/fuzz/corpus/fuzz_process", *receipt, visit);
    for (const char* name : {"fuzz_repair", "fuzz_redactor", "fuzz_json_parser", "fuzz_repair_prompt"}) {
      visit_texts(name, folder_texts(source / "tests/fuzz/corpus" / name), *receipt, visit);
    }
    visit_texts("examples/receipts", folder_texts(source / "examples/data/receipts"), *receipt, visit);
    {
      std::vector<std::pair<std::string, std::string>> texts;
      std::istringstream lines(read_file(source / "examples/data/responses.jsonl"));
      for (std::string line; std::getline(lines, line);) {
        if (line.empty()) continue;
        const auto record = boost::json::parse(line).as_object();
        texts.emplace_back(std::string(record.at("id").as_string()), std::string(record.at("response").as_string()));
      }
      visit_texts("examples/responses", texts, *receipt, visit);
    }
    // Wrong-typed values that coercion turns into what the schema asks for, and some it must not.
    const auto order = schema::compile(read_file(source / "tests/verdicts/coercions.schema.json"), with_formats);
    if (!order) throw std::runtime_error("tests/verdicts/coercions.schema.json does not compile: " + order.error().message);
    visit_texts("coercions", folder_texts(source / "tests/verdicts/coercions"), *order, visit);
  }
  if (conformance.empty()) return;

  const auto anything = schema::compile("{}");
  if (!anything) throw std::runtime_error("the schema {} does not compile");
  const auto parsing = folder_texts(conformance / "json-test-suite/test_parsing");
  visit_texts("json-test-suite/receipt", parsing, *receipt, visit, json_test_suite_says);
  visit_texts("json-test-suite/anything", parsing, *anything, visit, json_test_suite_says);
  const fs::path suite = conformance / "json-schema-test-suite";
  visit_draft(suite, "draft4", dialect::draft4, visit);
  visit_draft(suite, "draft6", dialect::draft6, visit);
  visit_draft(suite, "draft7", dialect::draft7, visit);
  visit_draft(suite, "draft2019-09", dialect::draft2019_09, visit);
  visit_draft(suite, "draft2020-12", dialect::draft2020_12, visit);
}

}  // namespace llmdlq::test
