// SPDX-License-Identifier: MIT
// The stream judge against the whole-text judgement, over every corpus the
// project has (support/judged_corpora.hpp), each text fed whole, a byte at a
// time and in random pieces of 1 to 64 bytes; the suites' instances also
// without local repair, where the schema is followed down the text. For
// every text and chunking:
//   - finish() is process_llm_response: the same accepted bytes and repairs,
//     or the same envelope, byte for byte;
//   - the verdict (dead or not, offset, category, message) is the same
//     whatever the chunking;
//   - a text the judge called dead is not accepted whole.
// Prints the counts per corpus; exits 1 at the first text that breaks one.
//
//   stream_equivalence SOURCE_DIR CONFORMANCE_DIR [--suites-only]
//
// CONFORMANCE_DIR empty: the in-tree corpora alone; given, the suites' too
// (--suites-only: theirs alone). A folder given without the suites exits 1
// naming it: a wrong folder fails, it is never taken for a missing one.
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include <llmdlq/envelope.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/stream_judge.hpp>

#include "support/judged_corpora.hpp"

namespace {

struct tally {
  std::size_t texts = 0, feeds = 0, dead = 0, accepted = 0;
  std::size_t bytes = 0, bytes_before_death = 0;  // of the dead ones
};

std::string outcome(const llmdlq::expected<llmdlq::accepted, llmdlq::envelope>& r) {
  if (!r) return "dead " + llmdlq::serialize(r.error());
  std::string text = "accepted " + r->json;
  for (const auto& a : r->repairs) text += " " + std::string(a.code);
  return text;
}

std::string describe(const llmdlq::stream_verdict& v) {
  if (!v.dead) return "viable";
  return "dead at " + std::to_string(v.offset) + " (" + std::string(llmdlq::to_string(v.category)) + "): " + v.message;
}

// One text under one set of options; false (with a report) when a property breaks.
bool check(const llmdlq::test::judged_text& t, const llmdlq::process_options& options, tally& counts,
           std::mt19937_64& random) {
  const auto expected = llmdlq::process_llm_response(t.text, *t.schema, *t.context, options);
  const std::string want = outcome(expected);
  std::optional<llmdlq::stream_verdict> first;
  for (int chunking = 0; chunking < 3; ++chunking) {
    llmdlq::stream_judge judge(*t.schema, *t.context, options);
    std::uniform_int_distribution<std::size_t> piece(1, 64);
    for (std::size_t at = 0; at < t.text.size();) {
      const std::size_t n = chunking == 0 ? t.text.size() : chunking == 1 ? 1 : piece(random);
      judge.feed(t.text.substr(at, n));
      at += n;
    }
    ++counts.feeds;
    const auto got = outcome(judge.finish());
    if (got != want) {
      std::cerr << t.corpus << " " << t.id << ": finish() differs from process_llm_response\n  finish:  "
                << got.substr(0, 400) << "\n  process: " << want.substr(0, 400) << "\n";
      return false;
    }
    const auto& v = judge.verdict();
    if (!first) {
      first = v;
    } else if (describe(v) != describe(*first)) {
      std::cerr << t.corpus << " " << t.id << ": the verdict depends on the chunking\n  whole: " << describe(*first)
                << "\n  now:   " << describe(v) << "\n";
      return false;
    }
    if (v.dead && expected) {
      std::cerr << t.corpus << " " << t.id << ": " << describe(v) << ", but the whole text is accepted\n  text: "
                << std::string(t.text.substr(0, 400)) << "\n";
      return false;
    }
  }
  ++counts.texts;
  counts.accepted += expected.has_value();
  if (first->dead) {
    ++counts.dead;
    counts.bytes += t.text.size();
    counts.bytes_before_death += first->offset + 1;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const bool suites_only = argc == 4 && std::string_view(argv[3]) == "--suites-only";
  if (argc < 3 || (argc > 3 && !suites_only) || (suites_only && argv[2][0] == '\0')) {
    std::fprintf(stderr,
                 "usage: stream_equivalence SOURCE_DIR CONFORMANCE_DIR [--suites-only]\n"
                 "  CONFORMANCE_DIR empty: the in-tree corpora alone\n");
    return 2;
  }
  std::map<std::string, tally> by_corpus;
  std::mt19937_64 random(20261205);
  bool ok = true;
  try {
    llmdlq::test::for_each_judged_text(
        argv[1], argv[2],
        [&](const llmdlq::test::judged_text& t) {
          if (!ok || !t.schema) return;
          ok = check(t, *t.options, by_corpus[std::string(t.corpus)], random);
          // The suites' instances without repair too: there the schema is followed down the text.
          if (ok && t.corpus.starts_with("json-schema-test-suite/")) {
            auto strict = *t.options;
            strict.repair = llmdlq::repair_mode::off;
            ok = check(t, strict, by_corpus[std::string(t.corpus) + "/strict"], random);
          }
        },
        suites_only ? llmdlq::test::corpora::suites_only : llmdlq::test::corpora::all);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stream_equivalence: %s\n", e.what());
    return 1;
  }
  if (!ok) return 1;
  if (by_corpus.empty()) {
    std::fprintf(stderr, "stream_equivalence: no text was judged\n");
    return 1;
  }
  tally total;
  std::printf("%-44s %7s %7s %7s %7s %s\n", "corpus", "texts", "feeds", "dead", "whole", "read before death");
  for (const auto& [name, c] : by_corpus) {
    std::printf("%-44s %7zu %7zu %7zu %7zu %5.1f %%\n", name.c_str(), c.texts, c.feeds, c.dead, c.accepted,
                c.bytes == 0 ? 0.0 : 100.0 * static_cast<double>(c.bytes_before_death) / static_cast<double>(c.bytes));
    total.texts += c.texts;
    total.feeds += c.feeds;
    total.dead += c.dead;
  }
  std::printf("%zu texts fed %zu times (whole, a byte at a time, random pieces): finish() is process_llm_response "
              "for each, no verdict depends on the chunking, and none of the %zu dead is accepted whole\n",
              total.texts, total.feeds, total.dead);
  return 0;
}
