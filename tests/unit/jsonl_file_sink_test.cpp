// SPDX-License-Identifier: MIT
// The JSON Lines sink: one writer per file, torn and foreign files, and
// re-published envelopes.
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <llmdlq/detail/identifiers.hpp>
#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"
#include "support/temp_dir.hpp"

namespace {

using llmdlq::jsonl_file_options;
using llmdlq::jsonl_file_sink;
using llmdlq::sink_errc;
using llmdlq::test::slurp;

// An envelope whose dlq_id is a UUIDv7 made from `n` alone: the same `n`
// gives the same id, different ones never collide.
llmdlq::envelope numbered(std::uint64_t n, std::string_view raw = "not json") {
  llmdlq::request_context context;
  context.idempotency_key = "key-" + std::to_string(n);
  auto e = llmdlq::make_envelope(llmdlq::failure_category::syntax, "not JSON", raw, context);
  e.created_at = llmdlq::timestamp{std::chrono::milliseconds{1'767'225'600'000}};
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < 6; ++i) bytes[10 + i] = static_cast<unsigned char>(n >> (8 * i));
  e.dlq_id = llmdlq::detail::format_uuid_v7(e.created_at, bytes);
  return e;
}

std::string line_of(const llmdlq::envelope& e) { return llmdlq::serialize(e) + '\n'; }

void write_file(const std::filesystem::path& path, std::string_view content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// The dlq_ids in a file, in line order; every line must be a whole envelope.
std::vector<std::string> stored_ids(const std::filesystem::path& path) {
  auto contents = llmdlq::read_jsonl_envelopes(path);
  REQUIRE(contents.has_value());
  for (const auto& skipped : contents->skipped) UNSCOPED_INFO("line " << skipped.line << " " << skipped.reason);
  CHECK(contents->skipped.empty());
  const std::string text = slurp(path);
  CHECK((text.empty() || text.back() == '\n'));
  std::vector<std::string> ids;
  for (const auto& e : contents->envelopes) ids.push_back(e.dlq_id);
  return ids;
}

std::size_t count_duplicates(const std::vector<std::string>& ids) {
  return ids.size() - std::set<std::string>(ids.begin(), ids.end()).size();
}

bool says_locked(const llmdlq::sink_error& error) {
  return error.code == sink_errc::unavailable && error.message.find("locked by another writer") != std::string::npos;
}

}  // namespace

TEST_CASE("jsonl_file_sink: a second writer is refused while the first holds the file", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  std::optional<jsonl_file_sink> moved;
  {
    auto first = jsonl_file_sink::open(path);
    REQUIRE(first.has_value());
    REQUIRE(first->publish(numbered(1)).has_value());

    auto second = jsonl_file_sink::open(path);
    REQUIRE_FALSE(second.has_value());
    CHECK(second.error().code == sink_errc::unavailable);
    CHECK(second.error().message.find("locked by another writer") != std::string::npos);
    CHECK(second.error().message.find(path.string()) != std::string::npos);
    moved.emplace(std::move(*first));
  }
  // The lock moved with the sink: destroying the moved-from one kept it.
  auto third = jsonl_file_sink::open(path);
  REQUIRE_FALSE(third.has_value());
  CHECK(says_locked(third.error()));
  moved.reset();

  auto after = jsonl_file_sink::open(path);
  REQUIRE(after.has_value());
  auto r = after->publish(numbered(2));
  REQUIRE(r.has_value());
  CHECK(r->location == path.string() + ":2");
}

TEST_CASE("jsonl_file_sink: open cuts off the start of an envelope a crash left, and keeps a whole one",
          "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  const auto kept = numbered(1);
  const auto torn = numbered(2, "Gr\xC3\xBC\xC3\x9F" "e");  // "Grüße": a cut can fall inside a character
  const std::string torn_text = llmdlq::serialize(torn);

  SECTION("a half-written envelope is cut off") {
    std::size_t cut = 0;
    SECTION("in the middle") { cut = torn_text.size() / 2; }
    SECTION("inside a UTF-8 sequence") { cut = torn_text.find('\xC3') + 1; }
    SECTION("within its first bytes") { cut = 5; }
    SECTION("after its opening brace") { cut = 1; }
    SECTION("before its closing brace") { cut = torn_text.size() - 1; }
    write_file(path, line_of(kept) + torn_text.substr(0, cut));
    auto sink = jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    CHECK(sink->recovered_bytes() == cut);
    CHECK(slurp(path) == line_of(kept));
    auto r = sink->publish(torn);  // the host publishes it again
    REQUIRE(r.has_value());
    CHECK_FALSE(r->duplicate);
    CHECK(r->location == path.string() + ":2");
    CHECK(stored_ids(path) == std::vector{kept.dlq_id, torn.dlq_id});
  }

  SECTION("a whole envelope without its newline is kept") {
    write_file(path, line_of(kept) + torn_text);
    auto sink = jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    CHECK(sink->recovered_bytes() == 0);
    CHECK(slurp(path) == line_of(kept) + torn_text + "\n");
    auto again = sink->publish(torn);
    REQUIRE(again.has_value());
    CHECK(again->duplicate);
    CHECK(again->location == path.string() + ":2");
    auto next = sink->publish(numbered(3));
    REQUIRE(next.has_value());
    CHECK(next->location == path.string() + ":3");
  }
}

TEST_CASE("jsonl_file_sink: a last line that is not the start of an envelope is refused, not cut", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  const std::string tail = GENERATE(as<std::string>{}, "a line another program is writing",
                                    R"({"envelope_version":"1"})",                 // whole JSON, not an envelope
                                    R"({"envelope_version":"1","dlq_id":"x"])",    // not JSON
                                    R"({"envelope_version":"2","dlq_id":"x",)",    // another version
                                    R"({"envelope_version":"1","dlq_id":"x"}})",   // more than one value
                                    std::string(R"({"envelope_version":"1","dlq_id":")") + '\0');
  const std::string before = line_of(numbered(1)) + tail;
  write_file(path, before);
  auto sink = jsonl_file_sink::open(path);
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == sink_errc::rejected);
  CHECK(sink.error().message.find("line 2") != std::string::npos);
  CHECK(slurp(path) == before);
}

TEST_CASE("jsonl_file_sink: a file that is not JSON Lines of envelopes is refused and left unchanged",
          "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  std::string before;
  std::string line = "line 1";
  jsonl_file_options options;

  SECTION("a SQLite database (jsonl:dlq.db for sqlite:dlq.db)") {
    before = std::string("SQLite format 3\0\x10\0\x02\x02\0@  \0\0\0\x05", 24);
    std::mt19937 bytes(7);
    while (before.size() < 8192) before.push_back(static_cast<char>(bytes() & 0xFF));  // holds '\n' bytes
    REQUIRE(before.find('\n') != std::string::npos);
  }
  SECTION("a SQLite database with no newline at all") {
    before = std::string("SQLite format 3\0", 16) + std::string(4080, '\0');
  }
  SECTION("JSON Lines of something else") { before = "{\"id\": 1}\n{\"id\": 2}\n"; }
  SECTION("an envelope file with a foreign line in the middle") {
    before = line_of(numbered(1)) + "{\"id\": 2}\n" + line_of(numbered(3));
    line = "line 2";
  }
  SECTION("an envelope file with an empty line") {
    before = line_of(numbered(1)) + "\n" + line_of(numbered(3));
    line = "line 2";
  }
  SECTION("a line longer than max_line_bytes") {
    options.max_line_bytes = 1000;
    before = line_of(numbered(1, std::string(2000, 'x')));
  }
  write_file(path, before);
  auto sink = jsonl_file_sink::open(path, options);
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == sink_errc::rejected);
  CHECK(sink.error().message.find(line) != std::string::npos);
  CHECK(slurp(path) == before);
}

TEST_CASE("jsonl_file_sink: a new file is readable by its owner only", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  {
    auto sink = jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
  }
  struct stat info;
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);

  // An existing file keeps the mode its owner gave it.
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  REQUIRE(jsonl_file_sink::open(path).has_value());
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0640);
}

TEST_CASE("jsonl_file_sink stores each dlq_id once, across publishes, batches and re-opens", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  const auto at = [&](int line) { return path.string() + ":" + std::to_string(line); };
  const auto a = numbered(1), b = numbered(2), c = numbered(3), d = numbered(4), e = numbered(5);
  llmdlq::test::check_envelope(a);  // the ids made here are valid UUIDv7 text
  {
    auto sink = jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    CHECK(sink->publish(a) == llmdlq::receipt{a.dlq_id, false, at(1)});
    CHECK(sink->publish(a) == llmdlq::receipt{a.dlq_id, true, at(1)});
    auto changed = a;  // same identity, other content: the stored record wins
    changed.failure.message = "something else";
    CHECK(sink->publish(changed) == llmdlq::receipt{a.dlq_id, true, at(1)});
    CHECK(sink->publish(b) == llmdlq::receipt{b.dlq_id, false, at(2)});

    const std::vector batch{c, a, c, d};
    auto receipts = sink->publish_batch(batch);
    REQUIRE(receipts.has_value());
    CHECK(*receipts == std::vector<llmdlq::receipt>{
                           {c.dlq_id, false, at(3)}, {a.dlq_id, true, at(1)}, {c.dlq_id, true, at(3)},
                           {d.dlq_id, false, at(4)}});
    auto all_stored = sink->publish_batch(std::vector{b, d});
    REQUIRE(all_stored.has_value());
    CHECK(*all_stored == std::vector<llmdlq::receipt>{{b.dlq_id, true, at(2)}, {d.dlq_id, true, at(4)}});
  }
  CHECK(stored_ids(path) == std::vector{a.dlq_id, b.dlq_id, c.dlq_id, d.dlq_id});
  CHECK(llmdlq::read_jsonl_envelopes(path)->envelopes.front() == a);

  // Opening the file indexes what it holds.
  auto sink = jsonl_file_sink::open(path);
  REQUIRE(sink.has_value());
  CHECK(sink->publish(d) == llmdlq::receipt{d.dlq_id, true, at(4)});
  auto receipts = sink->publish_batch(std::vector{a, e});
  REQUIRE(receipts.has_value());
  CHECK(*receipts == std::vector<llmdlq::receipt>{{a.dlq_id, true, at(1)}, {e.dlq_id, false, at(5)}});
  CHECK(stored_ids(path) == std::vector{a.dlq_id, b.dlq_id, c.dlq_id, d.dlq_id, e.dlq_id});
}

TEST_CASE("jsonl_file_sink: a file already holding an id twice answers with its first line", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  write_file(path, line_of(numbered(1)) + line_of(numbered(2)) + line_of(numbered(1)));
  auto sink = jsonl_file_sink::open(path);
  REQUIRE(sink.has_value());
  CHECK(sink->publish(numbered(1)) == llmdlq::receipt{numbered(1).dlq_id, true, path.string() + ":1"});
  CHECK(sink->publish(numbered(3))->location == path.string() + ":4");
}

TEST_CASE("jsonl_file_sink: threads publishing the same envelopes store each once", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  std::vector<llmdlq::envelope> envelopes;
  for (std::uint64_t n = 0; n < 60; ++n) envelopes.push_back(numbered(n));
  auto sink = jsonl_file_sink::open(path, {.sync = false});
  REQUIRE(sink.has_value());
  // Catch2's assertions are not thread-safe: the threads only collect.
  std::vector<std::vector<llmdlq::receipt>> receipts(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < receipts.size(); ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < envelopes.size(); i += 3) {
        const std::size_t at = (i + 15 * t) % envelopes.size();  // each thread starts elsewhere
        if (t % 2 == 0) {
          for (std::size_t k = 0; k < 3; ++k) {
            if (auto r = sink->publish(envelopes[(at + k) % envelopes.size()])) receipts[t].push_back(*r);
          }
        } else {
          std::vector batch{envelopes[at], envelopes[(at + 1) % envelopes.size()],
                            envelopes[(at + 2) % envelopes.size()]};
          if (auto r = sink->publish_batch(batch)) receipts[t].insert(receipts[t].end(), r->begin(), r->end());
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();

  std::map<std::string, std::set<std::string>> locations;
  std::size_t stored = 0;
  for (const auto& per_thread : receipts) {
    CHECK(per_thread.size() == envelopes.size());
    for (const auto& r : per_thread) {
      locations[r.dlq_id].insert(r.location);
      if (!r.duplicate) ++stored;
    }
  }
  CHECK(stored == envelopes.size());
  CHECK(locations.size() == envelopes.size());
  for (const auto& [id, where] : locations) CHECK(where.size() == 1);
  const auto ids = stored_ids(path);
  CHECK(ids.size() == envelopes.size());
  CHECK(count_duplicates(ids) == 0);
}

TEST_CASE("jsonl_file_sink refuses an envelope the file could not give back, writing nothing", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  auto sink = jsonl_file_sink::open(path, {.max_line_bytes = 4096});
  REQUIRE(sink.has_value());
  auto no_id = numbered(1);
  no_id.dlq_id.clear();
  auto other_version = numbered(2);
  other_version.envelope_version = "2";
  const auto too_long = numbered(3, std::string(5000, 'x'));
  for (const auto& e : {no_id, other_version, too_long}) {
    auto r = sink->publish(e);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == sink_errc::rejected);
    auto batch = sink->publish_batch(std::vector{numbered(4), e});
    REQUIRE_FALSE(batch.has_value());
    CHECK(batch.error().code == sink_errc::rejected);
  }
  CHECK(slurp(path).empty());
  auto r = sink->publish(numbered(4));
  REQUIRE(r.has_value());
  CHECK(r->location == path.string() + ":1");
}

TEST_CASE("read_jsonl_envelopes names every line it skipped, and why", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  const auto one = numbered(1), three = numbered(3), five = numbered(5);
  const std::string torn = llmdlq::serialize(numbered(6));
  write_file(path, line_of(one) + "garbage\n" + line_of(three) + line_of(numbered(4, std::string(3000, 'x'))) +
                       llmdlq::serialize(five) + "\n" + torn.substr(0, 40));
  auto contents = llmdlq::read_jsonl_envelopes(path, 2000);
  REQUIRE(contents.has_value());
  CHECK(contents->envelopes == std::vector{one, three, five});
  REQUIRE(contents->skipped.size() == 3);
  CHECK(contents->skipped_lines == 3);
  CHECK(contents->skipped[0].line == 2);
  CHECK(contents->skipped[0].reason.find("does not start like an envelope") != std::string::npos);
  CHECK(contents->skipped[1].line == 4);
  CHECK(contents->skipped[1].reason.find("longer than 2000 bytes") != std::string::npos);
  CHECK(contents->skipped[2].line == 6);
  CHECK(contents->skipped[2].reason.find("has no newline") != std::string::npos);

  // A whole last envelope without its newline is one of the envelopes, as the sink keeps it.
  write_file(path, line_of(one) + llmdlq::serialize(three));
  contents = llmdlq::read_jsonl_envelopes(path);
  REQUIRE(contents.has_value());
  CHECK(contents->envelopes == std::vector{one, three});
  CHECK(contents->skipped.empty());
}
