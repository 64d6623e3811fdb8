// SPDX-License-Identifier: MIT
// The verdicts of every corpus the project has (support/judged_corpora.hpp),
// as one digest per corpus, and their check: each text judged by
// process_llm_response (under the repairing, strict and coercing options),
// and each result written down whole (the accepted bytes and repairs, or the
// envelope's JSON).
//
//   verdict_digest SOURCE_DIR CONFORMANCE_DIR [--suites-only] [--each | --check]
//
// CONFORMANCE_DIR empty: the in-tree corpora alone; given, the suites' too
// (--suites-only: theirs alone). A folder given without the suites exits 1
// naming it: a wrong folder fails, it is never taken for a missing one.
// Without a flag it prints one digest line per corpus; --each, one line per
// text. --check holds the verdicts to three things, and exits 1 when one
// disagrees:
//   1. tests/verdicts/labels.txt: texts of every in-tree corpus and mode,
//      each with the verdict a person expects from reading it and its
//      schema, written without running the judge (the file says how);
//   2. the suites' own verdicts, for every text of their corpora: an
//      instance JSON-Schema-Test-Suite calls valid is accepted as it is and
//      one it calls invalid is a schema or semantic dead letter; a y_ text
//      of JSONTestSuite is JSON (accepted against {}, a schema failure
//      against the receipt schema), an n_ text is never accepted as it
//      stands (and strict reading never gets as far as the schema). The
//      disagreements allowed are those suite_disagreements.txt lists, each
//      with its reason, and every one it lists must still occur;
//   3. tests/verdicts/digests.txt: any change at all, also to texts no label
//      names. It only says "unchanged", so on a change it names the corpora
//      and how to list their texts, and writes no new digests: digests.txt
//      is edited by hand, when the labels and the suites agree with the
//      new verdicts.
// 1 and 2 come from outside the implementation; 3 catches the rest.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>
#include <llmdlq/detail/identifiers.hpp>
#include <llmdlq/envelope.hpp>
#include <llmdlq/process.hpp>

#include "support/judged_corpora.hpp"

namespace {

namespace fs = std::filesystem;
using verdict = llmdlq::expected<llmdlq::accepted, llmdlq::envelope>;

constexpr std::string_view usage =
    "usage: verdict_digest SOURCE_DIR CONFORMANCE_DIR [--suites-only] [--each | --check]\n"
    "  CONFORMANCE_DIR empty: the in-tree corpora alone\n";

// What digests.txt hashes of one verdict.
std::string digest_line(const verdict& result) {
  if (result) {
    std::string line = "accepted " + llmdlq::detail::sha256_hex(result->json).substr(0, 16);
    for (const auto& r : result->repairs) line += " " + std::string(r.code);
    return line;
  }
  const auto& e = result.error();
  return std::string("dead ") + std::string(llmdlq::to_string(e.failure.category)) + " " +
         llmdlq::detail::sha256_hex(llmdlq::serialize(e)).substr(0, 16) + " " + e.failure.message;
}

bool is_coercion(const llmdlq::repair_action& a) { return a.tier == llmdlq::repair_tier::coercion; }

// A repair as labels.txt names it: its code, and a coercion's value.
std::string label_code(const llmdlq::repair_action& a) {
  return is_coercion(a) ? std::string(a.code) + "@" + a.path : std::string(a.code);
}

// A verdict in labels.txt's words.
std::string describe(const verdict& result) {
  if (!result) {
    const auto& f = result.error().failure;
    return "dead " + std::string(llmdlq::to_string(f.category)) + " (" + f.message + ")";
  }
  if (result->repairs.empty()) return "accepted";
  std::string text = std::any_of(result->repairs.begin(), result->repairs.end(), is_coercion) ? "coerced " : "repaired ";
  std::set<std::string> seen;
  for (const auto& a : result->repairs) {
    if (seen.insert(label_code(a)).second) text += (seen.size() > 1 ? "," : "") + label_code(a);
  }
  return text;
}

// ---------------------------------------------------------------- digests

struct corpus_digest {
  std::string name;
  std::size_t count = 0;
  std::string lines;

  [[nodiscard]] std::string line() const {
    return name + " " + std::to_string(count) + " " + llmdlq::detail::sha256_hex(lines);
  }
};

// ---------------------------------------------------------------- hand labels

struct label {
  enum class kind { accepted, repaired, coerced, dead };
  std::string where;  // labels.txt:LINE
  std::string as_written;
  kind expected = kind::accepted;
  std::set<std::string> codes;  // repaired, coerced
  std::string category;         // dead
  std::optional<std::string> at;
  std::optional<boost::json::value> document;
  bool judged = false;
};

struct labels {
  std::map<std::string, std::map<std::string, label>> by_corpus;  // corpus/mode -> id -> label
  std::vector<std::string> errors;
};

std::set<std::string> split_codes(std::string_view list) {
  std::set<std::string> codes;
  while (!list.empty()) {
    const auto comma = list.find(',');
    codes.emplace(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return codes;
}

labels read_labels(const fs::path& file) {
  labels all;
  std::istringstream in(llmdlq::test::read_file(file));
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    label l;
    l.where = "labels.txt:" + std::to_string(number);
    l.as_written = line;
    auto bad = [&](const std::string& why) { all.errors.push_back(l.where + ": " + why + ": " + line); };
    std::string rest = line;
    if (const auto arrow = rest.find(" => "); arrow != std::string::npos) {
      boost::system::error_code ec;
      l.document = boost::json::parse(rest.substr(arrow + 4), ec);
      if (ec) {
        bad("the document after => is not JSON");
        continue;
      }
      rest.resize(arrow);
    }
    std::istringstream words(rest);
    std::string corpus, id, kind, detail, at_word, at;
    words >> corpus >> id >> kind >> detail >> at_word >> at;
    if (kind == "accepted" && detail.empty()) {
      l.expected = label::kind::accepted;
    } else if ((kind == "repaired" || kind == "coerced") && !detail.empty() && at_word.empty()) {
      l.expected = kind == "repaired" ? label::kind::repaired : label::kind::coerced;
      l.codes = split_codes(detail);
    } else if (kind == "dead" && !detail.empty() && (at_word.empty() || (at_word == "at" && !at.empty()))) {
      l.expected = label::kind::dead;
      l.category = detail;
      if (!at.empty()) l.at = at;
    } else {
      bad("not CORPUS ID accepted|repaired CODES|coerced CODES|dead CATEGORY [at POINTER]");
      continue;
    }
    if (l.document && l.expected == label::kind::dead) {
      bad("a dead letter yields no document");
      continue;
    }
    if (llmdlq::test::is_suite_corpus(corpus)) {
      bad("the suites' corpora are held to the suites' own verdicts, not labelled here");
      continue;
    }
    if (!all.by_corpus[corpus].emplace(id, std::move(l)).second) bad("labelled twice");
  }
  // A text labelled under one mode is labelled under the other two.
  for (const auto& [corpus, texts] : all.by_corpus) {
    const auto slash = corpus.rfind('/');
    if (slash == std::string::npos) continue;
    const std::string base = corpus.substr(0, slash);
    for (const auto& [id, l] : texts) {
      for (const char* mode : {"repair", "strict", "coerce"}) {
        const auto other = all.by_corpus.find(base + "/" + mode);
        if (other == all.by_corpus.end() || !other->second.count(id)) {
          all.errors.push_back(l.where + ": " + id + " has no label under " + base + "/" + mode);
        }
      }
    }
  }
  return all;
}

// Why `result` is not what `l` says, or nothing when it is.
std::optional<std::string> disagreement(const label& l, const verdict& result) {
  const std::string got = describe(result);
  const auto differs = [&] { return std::optional<std::string>(got); };
  if (l.expected == label::kind::dead) {
    if (result || llmdlq::to_string(result.error().failure.category) != l.category) return differs();
    if (l.at) {
      const auto& errors = result.error().failure.errors;
      const bool found = std::any_of(errors.begin(), errors.end(), [&](const auto& e) { return e.instance_path == *l.at; });
      if (!found) {
        std::string paths;
        for (const auto& e : errors) paths += " " + (e.instance_path.empty() ? std::string("\"\"") : e.instance_path);
        return got + ", with no error at " + *l.at + " (errors at:" + (paths.empty() ? " none" : paths) + ")";
      }
    }
    return std::nullopt;
  }
  if (!result) return differs();
  const auto& repairs = result->repairs;
  const bool coerced = std::any_of(repairs.begin(), repairs.end(), is_coercion);
  switch (l.expected) {
    case label::kind::accepted:
      if (!repairs.empty()) return differs();
      break;
    case label::kind::repaired:
    case label::kind::coerced: {
      if (repairs.empty() || coerced != (l.expected == label::kind::coerced)) return differs();
      std::set<std::string> codes;
      for (const auto& a : repairs) codes.insert(label_code(a));
      if (codes != l.codes) return differs();
      break;
    }
    case label::kind::dead:
      break;
  }
  if (l.document && boost::json::parse(result->json) != *l.document) return got + " => " + result->json;
  return std::nullopt;
}

// ---------------------------------------------------------------- the suites' verdicts

bool is_category(const verdict& result, std::initializer_list<llmdlq::failure_category> categories) {
  return !result && std::find(categories.begin(), categories.end(), result.error().failure.category) != categories.end();
}

// Whether the verdict is what the suite says of the text.
bool agrees_with_suite(const llmdlq::test::judged_text& t, const verdict& result) {
  using llmdlq::failure_category;
  const bool valid = *t.suite_says_valid;
  if (t.corpus.starts_with("json-schema-test-suite/")) {
    if (valid) return result && result->repairs.empty();
    return is_category(result, {failure_category::schema, failure_category::semantic});
  }
  // JSONTestSuite: y_ is JSON, n_ is not.
  if (valid) {
    if (t.corpus.starts_with("json-test-suite/anything/")) return result && result->repairs.empty();
    return is_category(result, {failure_category::schema});
  }
  if (t.corpus.ends_with("/strict")) {
    return !result && !is_category(result, {failure_category::schema, failure_category::semantic,
                                             failure_category::low_confidence});
  }
  return !result || !result->repairs.empty();
}

struct suite_tally {
  std::size_t texts = 0, agree = 0, known = 0, undecided = 0;
};

// suite_disagreements.txt: "CORPUS ID -- reason" per line.
std::map<std::string, std::string> read_known_disagreements(const fs::path& file, std::vector<std::string>& errors) {
  std::map<std::string, std::string> known;
  std::istringstream in(llmdlq::test::read_file(file));
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    const auto dashes = line.find(" -- ");
    std::istringstream words(line.substr(0, dashes));
    std::string corpus, id, extra;
    words >> corpus >> id >> extra;
    if (dashes == std::string::npos || id.empty() || !extra.empty() || !llmdlq::test::is_suite_corpus(corpus)) {
      errors.push_back("suite_disagreements.txt:" + std::to_string(number) + ": not SUITE-CORPUS ID -- REASON: " + line);
      continue;
    }
    known.emplace(corpus + " " + id, line.substr(dashes + 4));
  }
  return known;
}

std::map<std::string, std::string> read_digests(const fs::path& file) {
  std::map<std::string, std::string> lines;
  std::istringstream in(llmdlq::test::read_file(file));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') lines.emplace(line.substr(0, line.find(' ')), line);
  }
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fputs(usage.data(), stderr);
    return 2;
  }
  const fs::path source = argv[1];
  const fs::path conformance = argv[2];
  bool each = false, check = false, suites_only = false;
  for (int i = 3; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--each") {
      each = true;
    } else if (flag == "--check") {
      check = true;
    } else if (flag == "--suites-only") {
      suites_only = true;
    } else {
      std::fputs(usage.data(), stderr);
      return 2;
    }
  }
  if ((each && check) || (suites_only && conformance.empty())) {
    std::fputs(usage.data(), stderr);
    return 2;
  }
  const fs::path verdicts = source / "tests" / "verdicts";
  std::vector<std::string> failures;
  labels hand;
  std::map<std::string, std::string> known;
  if (check) {
    hand = read_labels(verdicts / "labels.txt");
    failures = hand.errors;
    known = read_known_disagreements(verdicts / "suite_disagreements.txt", failures);
  }
  std::set<std::string> known_seen;
  std::map<std::string, suite_tally> suites;
  std::vector<corpus_digest> digests;
  std::size_t labelled = 0;

  try {
    llmdlq::test::for_each_judged_text(
        source, conformance,
        [&](const llmdlq::test::judged_text& t) {
          if (digests.empty() || digests.back().name != t.corpus) digests.push_back({std::string(t.corpus)});
          auto& digest = digests.back();
          std::optional<verdict> result;
          std::string line;
          if (t.schema) {
            result = llmdlq::process_llm_response(t.text, *t.schema, *t.context, *t.options);
            line = digest_line(*result);
          } else {
            line = "schema does not compile: " + std::string(t.schema_error);
          }
          digest.lines.append(line).push_back('\n');
          ++digest.count;
          if (each) std::cout << t.corpus << " " << t.id << ": " << line << "\n";
          if (!check) return;

          if (const auto corpus = hand.by_corpus.find(std::string(t.corpus)); corpus != hand.by_corpus.end()) {
            if (const auto it = corpus->second.find(std::string(t.id)); it != corpus->second.end()) {
              label& l = it->second;
              l.judged = true;
              ++labelled;
              const auto why = result ? disagreement(l, *result) : std::optional<std::string>(line);
              if (why) failures.push_back(l.where + ": labelled `" + l.as_written + "`, judged " + *why);
            }
          }
          if (llmdlq::test::is_suite_corpus(t.corpus)) {
            auto& tally = suites[std::string(t.corpus)];
            ++tally.texts;
            if (!t.suite_says_valid) {
              ++tally.undecided;
              return;
            }
            const std::string key = std::string(t.corpus) + " " + std::string(t.id);
            if (result && agrees_with_suite(t, *result)) {
              ++tally.agree;
              return;
            }
            if (known.count(key)) {
              known_seen.insert(key);
              ++tally.known;
              return;
            }
            failures.push_back(key + ": the suite says " + (*t.suite_says_valid ? "valid" : "invalid") + ", judged " +
                               (result ? describe(*result) : line) + "\n    text: " + std::string(t.text.substr(0, 300)));
          }
        },
        suites_only ? llmdlq::test::corpora::suites_only : llmdlq::test::corpora::all);
  } catch (const llmdlq::test::missing_suites& e) {
    std::fprintf(stderr, "verdict_digest: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "verdict_digest: %s\n", e.what());
    return 1;
  }

  if (!check) {
    if (!each) {
      for (const auto& d : digests) std::cout << d.line() << "\n";
    }
    return 0;
  }

  std::set<std::string> judged;
  for (const auto& d : digests) judged.insert(d.name);
  const bool in_tree = !suites_only;
  const bool with_suites = !conformance.empty();

  // 1. Hand labels: each labelled text judged, and every in-tree corpus labelled.
  if (in_tree) {
    for (const auto& [corpus, texts] : hand.by_corpus) {
      for (const auto& [id, l] : texts) {
        if (!l.judged) failures.push_back(l.where + ": no text " + id + " in corpus " + corpus);
      }
    }
    for (const auto& name : judged) {
      if (!llmdlq::test::is_suite_corpus(name) && !hand.by_corpus.count(name)) {
        failures.push_back("labels.txt labels no text of the corpus " + name);
      }
    }
    std::cout << "hand labels: " << labelled << " labelled texts judged in " << hand.by_corpus.size() << " corpora\n";
  }

  // 2. The suites' own verdicts.
  if (with_suites) {
    for (const auto& [key, reason] : known) {
      if (!known_seen.count(key)) {
        failures.push_back("suite_disagreements.txt lists " + key + ", which now agrees with the suite (or is gone): "
                           "take it out");
      }
    }
    for (const auto& [name, t] : suites) {
      std::printf("%-40s %5zu texts: %5zu as the suite says, %3zu listed disagreements, %3zu the suite leaves open\n",
                  name.c_str(), t.texts, t.agree, t.known, t.undecided);
      if (t.agree == 0) failures.push_back(name + ": no text agrees with the suite");
    }
  }

  // 3. Any change of any verdict.
  const auto expected = read_digests(verdicts / "digests.txt");
  std::vector<std::string> changed;
  for (const auto& d : digests) {
    const auto it = expected.find(d.name);
    if (it == expected.end()) {
      changed.push_back(d.name + ": " + std::to_string(d.count) + " texts, not in digests.txt");
    } else if (it->second != d.line()) {
      changed.push_back(d.name + ": " + std::to_string(d.count) + " texts (digests.txt: " +
                        it->second.substr(d.name.size() + 1, it->second.rfind(' ') - d.name.size() - 1) + ")");
    }
  }
  for (const auto& [name, line] : expected) {
    const bool of_this_run = llmdlq::test::is_suite_corpus(name) ? with_suites : in_tree;
    if (of_this_run && !judged.count(name)) changed.push_back(name + ": in digests.txt, but no longer judged");
  }
  if (!changed.empty()) {
    std::string text = "the verdicts changed in " + std::to_string(changed.size()) + " corpora:\n";
    for (const auto& c : changed) text += "    " + c + "\n";
    text += "  Which texts: `verdict_digest SOURCE_DIR CONFORMANCE_DIR --each`, built at the last commit that passed "
            "and at this one, diffed. digests.txt is edited by hand, and only for verdicts labels.txt and the "
            "suites agree with.";
    failures.push_back(text);
  } else {
    std::cout << "digests: the verdicts of " << digests.size() << " corpora are those digests.txt holds\n";
  }

  for (const auto& f : failures) std::cerr << "FAILED " << f << "\n";
  if (!failures.empty()) {
    std::cerr << failures.size() << " failure" << (failures.size() == 1 ? "" : "s") << "\n";
    return 1;
  }
  return 0;
}
