// SPDX-License-Identifier: MIT
// purge_jsonl_file: compaction keeps exactly the unexpired lines, byte for
// byte, in a file that replaces the old one atomically; it refuses while a
// sink holds the file; each purge appends one audit line.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <llmdlq/jsonl_file_sink.hpp>

#include "catch.hpp"
#include "support/children.hpp"
#include "support/expiring_letters.hpp"
#include "support/temp_dir.hpp"

namespace jsonl_purge_test {

namespace {

std::string lines_of(const std::vector<llmdlq::envelope>& letters) {
  std::string text;
  for (const auto& e : letters) text += llmdlq::serialize(e) + "\n";
  return text;
}

unsigned mode_of(const std::filesystem::path& file) {
  struct stat info {};
  REQUIRE(::stat(file.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

}  // namespace

TEST_CASE("a JSONL purge keeps exactly the unexpired lines and audits each purge", "[jsonl][purge]") {
  const llmdlq::test::temp_dir dir;
  const llmdlq::test::expiring_letters letters;
  const auto all = letters.all();
  const auto path = dir.write("dlq.jsonl", lines_of(all));
  ::chmod(path.c_str(), 0640);
  const auto audit = llmdlq::jsonl_purge_audit_path(path);

  SECTION("a dry run counts and changes nothing") {
    auto report = llmdlq::purge_jsonl_file(path, letters.request(true));
    REQUIRE(report.has_value());
    CHECK(*report == letters.expected_report(true));
    CHECK(llmdlq::test::slurp(path) == lines_of(all));
    CHECK_FALSE(std::filesystem::exists(audit));
  }

  SECTION("a purge removes them, keeps the mode, and a second purge removes nothing") {
    auto report = llmdlq::purge_jsonl_file(path, letters.request());
    REQUIRE(report.has_value());
    CHECK(*report == letters.expected_report());
    CHECK(llmdlq::test::slurp(path) == lines_of(letters.kept));
    CHECK(mode_of(path) == 0640);
    CHECK(mode_of(audit) == 0600);
    const std::string report_text =
        R"({"count":3,"oldest_expires_at":"2026-05-30T00:00:00.000Z","newest_expires_at":"2026-06-01T00:00:00.000Z",)"
        R"("operator":"alice","at":"2026-06-01T00:00:00.000Z","dry_run":false)";
    CHECK(llmdlq::test::slurp(audit) == report_text +
                                            R"(,"phase":"intent"})"
                                            "\n" +
                                            report_text +
                                            R"(,"phase":"done"})"
                                            "\n");
    auto again = llmdlq::purge_jsonl_file(path, letters.request());
    REQUIRE(again.has_value());
    CHECK(again->count == 0);
    CHECK(llmdlq::test::slurp(path) == lines_of(letters.kept));
    CHECK(llmdlq::test::slurp(audit).ends_with(
        R"({"count":0,"operator":"alice","at":"2026-06-01T00:00:00.000Z","dry_run":false,"phase":"done"})"
        "\n"));
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      CHECK(entry.path().string().find(".purge-") == std::string::npos);  // no temporary file left
    }
    // A sink opened afterwards reads the compacted file and appends to it.
    auto sink = llmdlq::jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    auto stored = sink->publish(letters.expired.front());
    REQUIRE(stored.has_value());
    CHECK_FALSE(stored->duplicate);
    CHECK(llmdlq::test::slurp(path) == lines_of(letters.kept) + lines_of({letters.expired.front()}));
  }

  SECTION("a new file a killed purge left beside the old one is removed by the next purge, and nothing else") {
    // Marked as a purge marks its new file, for this DLQ: the purge's own.
    const auto attribute = llmdlq::detail::jsonl_compaction_attribute;
    const auto abandoned = dir.write("dlq.jsonl.purge-a1B2c3", "{\"envelope_version\":\"1\"");
    REQUIRE(::setxattr(abandoned.c_str(), attribute, "dlq.jsonl", 9, 0) == 0);
    // Named like one but not marked, or marked for another file: not known to be a purge's.
    const auto unmarked = dir.write("dlq.jsonl.purge-b2C3d4", "{\"envelope_version\":\"1\"");
    const auto elsewhere = dir.write("dlq.jsonl.purge-c3D4e5", "{\"envelope_version\":\"1\"");
    REQUIRE(::setxattr(elsewhere.c_str(), attribute, "old.jsonl", 9, 0) == 0);
    const auto other = dir.write("dlq.jsonl.purge-notes", "not a purge's");
    REQUIRE(llmdlq::purge_jsonl_file(path, letters.request()).has_value());
    CHECK_FALSE(std::filesystem::exists(abandoned));
    CHECK(std::filesystem::exists(unmarked));
    CHECK(std::filesystem::exists(elsewhere));
    CHECK(std::filesystem::exists(other));
    CHECK(llmdlq::test::slurp(path) == lines_of(letters.kept));
  }

  SECTION("an audit that cannot be written deletes nothing") {
    std::filesystem::create_directory(audit);  // no line can be appended to it
    auto refused = llmdlq::purge_jsonl_file(path, letters.request());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message.find(audit.string()) != std::string::npos);
    CHECK(llmdlq::test::slurp(path) == lines_of(all));
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      CHECK(entry.path().string().find(".purge-") == std::string::npos);  // no temporary file left
    }
  }

  SECTION("an audit others could rewrite deletes nothing: the file is held to the DLQ's own rules") {
    dir.write("dlq.jsonl.audit.jsonl", "");
    std::filesystem::permissions(audit, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                            std::filesystem::perms::others_write);
    auto refused = llmdlq::purge_jsonl_file(path, letters.request());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == llmdlq::sink_errc::unsafe_file);
    CHECK(refused.error().message.find(audit.string() + " has mode 0602") != std::string::npos);
    CHECK(llmdlq::test::slurp(path) == lines_of(all));
    CHECK(llmdlq::test::slurp(audit).empty());
  }

  SECTION("an audit that is a symbolic link deletes nothing and writes nowhere") {
    const auto elsewhere = dir.write("elsewhere", "");
    std::filesystem::create_symlink(elsewhere, audit);
    auto refused = llmdlq::purge_jsonl_file(path, letters.request());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == llmdlq::sink_errc::unsafe_file);
    CHECK(refused.error().message.find(audit.string() + " is a symbolic link") != std::string::npos);
    CHECK(llmdlq::test::slurp(path) == lines_of(all));
    CHECK(llmdlq::test::slurp(elsewhere).empty());
  }

  SECTION("a line that is not an envelope makes it refuse, changing nothing") {
    const auto text = lines_of(all) + "not an envelope\n";
    dir.write("dlq.jsonl", text);
    auto refused = llmdlq::purge_jsonl_file(path, letters.request());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == llmdlq::sink_errc::rejected);
    CHECK(llmdlq::test::slurp(path) == text);
    CHECK_FALSE(std::filesystem::exists(audit));
  }

  SECTION("the start of an envelope on the last line, a publish that never returned, is dropped") {
    const auto torn = llmdlq::serialize(all.front()).substr(0, 60);
    dir.write("dlq.jsonl", lines_of(all) + torn);
    auto report = llmdlq::purge_jsonl_file(path, letters.request());
    REQUIRE(report.has_value());
    CHECK(report->count == 3);
    CHECK(llmdlq::test::slurp(path) == lines_of(letters.kept));
  }

  SECTION("a file others can write, or a link to one, is refused as the sink refuses it") {
    ::chmod(path.c_str(), 0666);
    auto exposed = llmdlq::purge_jsonl_file(path, letters.request());
    REQUIRE_FALSE(exposed.has_value());
    CHECK(exposed.error().code == llmdlq::sink_errc::unsafe_file);
    ::chmod(path.c_str(), 0600);
    const auto link = dir.path() / "link.jsonl";
    std::filesystem::create_symlink(path, link);
    auto linked = llmdlq::purge_jsonl_file(link, letters.request());
    REQUIRE_FALSE(linked.has_value());
    CHECK(linked.error().code == llmdlq::sink_errc::unsafe_file);
    CHECK(llmdlq::test::slurp(path) == lines_of(all));
  }

  SECTION("a purge needs an operator name") {
    auto nameless = letters.request();
    nameless.operator_name.clear();
    auto refused = llmdlq::purge_jsonl_file(path, nameless);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == llmdlq::sink_errc::rejected);
  }
}

TEST_CASE("a JSONL purge refuses while a sink holds the file, its dry run does not", "[jsonl][purge]") {
  const llmdlq::test::temp_dir dir;
  const llmdlq::test::expiring_letters letters;
  const auto path = dir.path() / "dlq.jsonl";
  {
    auto sink = llmdlq::jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    REQUIRE(sink->publish_batch(letters.all()).has_value());
    auto refused = llmdlq::purge_jsonl_file(path, letters.request());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == llmdlq::sink_errc::unavailable);
    CHECK(refused.error().message.find("locked") != std::string::npos);
    CHECK(llmdlq::test::slurp(path) == lines_of(letters.all()));
    CHECK_FALSE(std::filesystem::exists(llmdlq::jsonl_purge_audit_path(path)));
    auto counted = llmdlq::purge_jsonl_file(path, letters.request(true));
    REQUIRE(counted.has_value());
    CHECK(counted->count == 3);
  }
  auto report = llmdlq::purge_jsonl_file(path, letters.request());  // the sink is closed
  REQUIRE(report.has_value());
  CHECK(report->count == 3);
}

TEST_CASE("a JSONL purge killed at any moment leaves the old file or the new one, never a mix", "[jsonl][purge]") {
  const llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  // Enough lines that the compaction takes a while: every other one expired.
  const llmdlq::test::expiring_letters letters;
  std::string before, after;
  for (int i = 0; i < 4000; ++i) {
    llmdlq::envelope e = i % 2 ? letters.expired[1] : letters.kept[1];
    char id[40];
    std::snprintf(id, sizeof id, "%08x-0000-8000-8000-000000000000", static_cast<unsigned>(i));
    e.dlq_id = id;
    e.raw_response = llmdlq::captured_text::of(std::string(400, 'x'));
    const auto line = llmdlq::serialize(e) + "\n";
    before += line;
    if (i % 2 == 0) after += line;
  }
  // The kills spread over twice the time an uninterrupted purge takes (a forked child is slower).
  dir.write("dlq.jsonl", before);
  const auto started = std::chrono::steady_clock::now();
  REQUIRE(llmdlq::purge_jsonl_file(path, letters.request()).has_value());
  const auto took = std::chrono::steady_clock::now() - started;
  REQUIRE(llmdlq::test::slurp(path) == after);
  // Each round is counted by how the child ended (killed, or done) and the
  // file it left (the old one, or the purged one).
  int killed_old = 0, killed_new = 0, finished = 0, abandoned = 0;
  for (int round = 0; round < 24; ++round) {
    dir.write("dlq.jsonl", before);
    int purge_began[2];
    REQUIRE(::pipe(purge_began) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(purge_began[0]);
      if (::write(purge_began[1], "P", 1) != 1) ::_exit(2);
      auto report = llmdlq::purge_jsonl_file(path, letters.request());
      ::_exit(report ? 0 : 1);
    }
    ::close(purge_began[1]);
    char byte = 0;
    const bool purging = ::read(purge_began[0], &byte, 1) == 1;  // the delay counts from the purge's start
    ::close(purge_began[0]);
    std::this_thread::sleep_for(took * round / 10);
    ::kill(child, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    const auto content = llmdlq::test::slurp(path);
    INFO("round " << round << ", wait status " << status);
    REQUIRE(purging);
    const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    const bool done = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    REQUIRE((killed || done));
    CHECK((content == before || content == after));
    if (done) {
      CHECK(content == after);
      ++finished;
    } else {
      (content == before ? killed_old : killed_new) += 1;
    }
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      abandoned += entry.path().filename().string().find(".purge-") != std::string::npos;
    }
  }
  // What a killed purge left beside the file, the next purge removes.
  REQUIRE(llmdlq::purge_jsonl_file(path, letters.request()).has_value());
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    CHECK(entry.path().filename().string().find(".purge-") == std::string::npos);
  }
  INFO("purges killed before their rename left " << abandoned << " new files behind");
  INFO("took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms; killed with the old "
               << "file " << killed_old << " times, with the new one " << killed_new << " times; finished " << finished
               << " times");
  // The kills landed before the rename, and the purges got past it: a
  // child that never purged, or a kill that never came, fails here.
  CHECK(killed_old > 0);
  CHECK(killed_new + finished > 0);
}

TEST_CASE("JSONL purges racing a sink that opens, publishes and closes lose no publish", "[jsonl][purge]") {
  const llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  const llmdlq::test::expiring_letters letters;
  constexpr int rounds = 150;
  // Each round publishes one letter that expires (so that purges keep
  // replacing the file) and one that does not, which must survive.
  const auto letter = [&](int round, bool expiring) {
    llmdlq::envelope e = expiring ? letters.expired[0] : letters.kept[1];
    char id[40];
    std::snprintf(id, sizeof id, "%08x-0000-8000-8000-%012x", static_cast<unsigned>(round), expiring ? 1u : 0u);
    e.dlq_id = id;
    return e;
  };
  const auto codes = llmdlq::test::in_children(2, [&](int child) {
    if (child == 0) {
      for (int round = 0; round < rounds; ++round) {
        for (int tries = 0;; ++tries) {  // a purge holds the lock for a moment: open again
          auto sink = llmdlq::jsonl_file_sink::open(path);
          if (sink) {
            if (!sink->publish(letter(round, true)) || !sink->publish(letter(round, false))) return 1;
            break;
          }
          if (sink.error().code != llmdlq::sink_errc::unavailable || tries > 100000) return 2;
        }
      }
      return 0;
    }
    for (int round = 0; round < rounds * 4; ++round) {
      if (!std::filesystem::exists(path)) continue;
      auto report = llmdlq::purge_jsonl_file(path, letters.request());
      if (!report && report.error().code != llmdlq::sink_errc::unavailable) return 3;
    }
    return 0;
  });
  CHECK(codes == std::vector<int>{0, 0});
  REQUIRE(llmdlq::purge_jsonl_file(path, letters.request()).has_value());
  auto contents = llmdlq::read_jsonl_envelopes(path);
  REQUIRE(contents.has_value());
  CHECK(contents->skipped_lines == 0);
  std::vector<std::string> ids;
  for (const auto& e : contents->envelopes) ids.push_back(e.dlq_id);
  std::vector<std::string> expected_ids;
  for (int round = 0; round < rounds; ++round) expected_ids.push_back(letter(round, false).dlq_id);
  CHECK(ids == expected_ids);
}

}  // namespace jsonl_purge_test
