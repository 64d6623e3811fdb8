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
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

#include <llmdlq/detail/identifiers.hpp>
#include <llmdlq/envelope.hpp>
#include <llmdlq/process.hpp>

#include "support/judged_corpora.hpp"

namespace {

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

  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  ~corpus() {
    if (!each_) std::cout << name_ << " " << count_ << " " << llmdlq::detail::sha256_hex(all_) << "\n";
  }

 private:
  std::string name_;
  bool each_;
  std::string all_;
  std::size_t count_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: verdict_digest SOURCE_DIR CONFORMANCE_DIR [--each]\n");
    return 2;
  }
  const bool each = argc > 3 && std::string_view(argv[3]) == "--each";
  std::unique_ptr<corpus> current;
  const bool found = llmdlq::test::for_each_judged_text(argv[1], argv[2], [&](const llmdlq::test::judged_text& t) {
    if (!current || current->name() != t.corpus) {
      current.reset();  // prints the finished corpus's digest
      current = std::make_unique<corpus>(std::string(t.corpus), each);
    }
    if (!t.schema) return current->add_line(t.id, "schema does not compile: " + std::string(t.schema_error));
    current->add(t.id, llmdlq::process_llm_response(t.text, *t.schema, *t.context, *t.options));
  });
  current.reset();
  if (!found) {
    std::fprintf(stderr, "verdict_digest: no conformance suites in %s\n", argv[2]);
    return 77;
  }
  return 0;
}
