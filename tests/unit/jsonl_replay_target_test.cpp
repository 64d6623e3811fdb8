// SPDX-License-Identifier: MIT
// jsonl_replay_target: one line per payload, each key once across reopens,
// a torn last line cut off, a file only its owner can write, bounded reads,
// and the codes its failures carry.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <llmdlq/jsonl_replay_target.hpp>

#include "catch.hpp"
#include "support/file_mode.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

namespace jsonl_replay_target_test {

namespace {

using llmdlq::replay_errc;

llmdlq::ledger_entry entry(std::string key, std::string output = R"({"total": 2920.00})") {
  llmdlq::ledger_entry e;
  e.first = true;
  e.idempotency_key = std::move(key);
  e.source = "replay";
  e.dlq_id = "dlq-1";
  e.output = std::move(output);
  return e;
}

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("jsonl_replay_target writes each payload once as a line, across reopens", "[jsonl_replay_target]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "out.jsonl";
  {
    const llmdlq::test::scoped_umask open_to_all(0);
    auto target = llmdlq::jsonl_replay_target::open(path);
    REQUIRE(target.has_value());
    CHECK(target->path() == path);
    CHECK(llmdlq::test::mode_of(path) == 0600);  // whatever the umask
    auto correction = entry("k1", "{\"a\":\n1}");
    correction.resolved_by = "ana";
    correction.note = "fixed";
    REQUIRE(target->deliver(entry("k0")).has_value());
    REQUIRE(target->deliver(correction).has_value());
    REQUIRE(target->deliver(entry("k0")).has_value());  // seen: not written again
  }
  auto reopened = llmdlq::jsonl_replay_target::open(path);
  REQUIRE(reopened.has_value());
  REQUIRE(reopened->deliver(entry("k1")).has_value());  // in the file already
  REQUIRE(reopened->deliver(entry("k2")).has_value());
  const auto lines = lines_of(path);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == R"({"idempotency_key":"k0","source":"replay","dlq_id":"dlq-1","output":{"total": 2920.00}})");
  const auto second = boost::json::parse(lines[1]).as_object();
  CHECK(second.at("resolved_by") == "ana");
  CHECK(second.at("note") == "fixed");
  CHECK(second.at("output").at("a") == 1);
  CHECK(boost::json::parse(lines[2]).at("idempotency_key") == "k2");
}

TEST_CASE("jsonl_replay_target cuts a torn last line off before it appends", "[jsonl_replay_target]") {
  llmdlq::test::temp_dir dir;
  const std::string earlier = std::string(R"({"idempotency_key":"earlier","source":"replay","output":{}})") + "\n";
  const auto path = dir.write("out.jsonl", earlier + R"({"idempotency_key":"k0","source":"rep)");
  std::filesystem::permissions(path, std::filesystem::perms(0600), std::filesystem::perm_options::replace);
  auto target = llmdlq::jsonl_replay_target::open(path);
  REQUIRE(target.has_value());
  REQUIRE(target->deliver(entry("earlier")).has_value());  // whole in the file: not written again
  REQUIRE(target->deliver(entry("k0")).has_value());       // its torn line was cut: written whole
  const auto lines = lines_of(path);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] + "\n" == earlier);
  CHECK(boost::json::parse(lines[1]).at("idempotency_key") == "k0");
}

TEST_CASE("jsonl_replay_target refuses a file it must not use, and leaves it unchanged", "[jsonl_replay_target]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.write("out.jsonl", "");

  SECTION("group or others can write it") {
    std::filesystem::permissions(path, std::filesystem::perms(0646), std::filesystem::perm_options::replace);
    auto target = llmdlq::jsonl_replay_target::open(path);
    REQUIRE_FALSE(target.has_value());
    CHECK(target.error().code == replay_errc::target_refused);
    CHECK(llmdlq::is_permanent(target.error().code));
    CHECK(target.error().message.find(path + " has mode 0646: group or others can write it") != std::string::npos);
    CHECK(llmdlq::test::mode_of(path) == 0646);
  }
  SECTION("a symbolic link to a file") {
    std::filesystem::permissions(path, std::filesystem::perms(0600), std::filesystem::perm_options::replace);
    const auto link = dir.path() / "link.jsonl";
    std::filesystem::create_symlink(path, link);
    auto target = llmdlq::jsonl_replay_target::open(link);
    REQUIRE_FALSE(target.has_value());
    CHECK(target.error().code == replay_errc::target_refused);
    CHECK(target.error().message.find("is a symbolic link") != std::string::npos);
  }
  SECTION("larger than a JSON Lines file is read") {
    std::filesystem::permissions(path, std::filesystem::perms(0600), std::filesystem::perm_options::replace);
    std::filesystem::resize_file(path, (std::uintmax_t{1} << 30) + 1);  // sparse: nothing is written
    auto target = llmdlq::jsonl_replay_target::open(path);
    REQUIRE_FALSE(target.has_value());
    CHECK(target.error().code == replay_errc::target_refused);
    CHECK(target.error().message.find("is larger than the limit of 1 GiB") != std::string::npos);
    CHECK(std::filesystem::file_size(path) == (std::uintmax_t{1} << 30) + 1);
  }
  SECTION("in a folder that is not there") {
    auto target = llmdlq::jsonl_replay_target::open(dir.path() / "missing" / "out.jsonl");
    REQUIRE_FALSE(target.has_value());
    CHECK(target.error().code == replay_errc::target_unavailable);
    CHECK_FALSE(llmdlq::is_permanent(target.error().code));
  }
}

TEST_CASE("jsonl_replay_target's delivery failures: an output that is not JSON, a write that fails",
          "[jsonl_replay_target]") {
  llmdlq::test::temp_dir dir;
  auto target = llmdlq::jsonl_replay_target::open(dir.path() / "out.jsonl");
  REQUIRE(target.has_value());
  auto refused = target->deliver(entry("k0", "{oops"));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == replay_errc::target_refused);
  CHECK(refused.error().message.starts_with("the recorded output is not JSON: "));
  CHECK(lines_of(dir.path() / "out.jsonl").empty());

  if (!std::filesystem::exists("/dev/full")) return;
  auto full = llmdlq::jsonl_replay_target::open("/dev/full");  // a device: written as is, never read
  REQUIRE(full.has_value());
  auto failed = full->deliver(entry("k0"));
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().code == replay_errc::target_unavailable);
  CHECK(failed.error().message.starts_with("writing /dev/full: "));
}

}  // namespace jsonl_replay_target_test
