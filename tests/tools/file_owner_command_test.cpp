// SPDX-License-Identifier: MIT
// `llmdlq process` and `llmdlq replay --to`, run by root, never write into
// a DLQ file or a replay target another user owns: that user could read the
// letters and change them at will, whatever the file's mode. Nor do replay
// and deliver trust an allowlist another user could have written.
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/expiring_letters.hpp"
#include "support/other_user.hpp"
#include "support/replay_letters.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

namespace file_owner_command_test {

using llmdlq::test::named;
using llmdlq::test::run_llmdlq;
using llmdlq::test::run_llmdlq_reading;
using llmdlq::test::slurp;
using llmdlq::test::temp_dir;

namespace {

constexpr std::string_view schema_json = R"({"type": "object", "required": ["total"]})";

}  // namespace

TEST_CASE("process as root refuses a 0600 sqlite or jsonl DLQ that nobody owns and writes nothing to it",
          "[tools][process][sqlite][jsonl][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  temp_dir dir;
  const auto schema = dir.write("schema.json", schema_json);
  const std::string kind = GENERATE(std::string("sqlite"), std::string("jsonl"));
  CAPTURE(kind);
  const auto theirs = (dir.path() / ("theirs." + kind)).string();
  if (kind == "sqlite") {
    REQUIRE(llmdlq::sqlite_store::open(theirs).has_value());
  } else {
    REQUIRE(llmdlq::jsonl_file_sink::open(theirs).has_value());
  }
  llmdlq::test::give_to(nobody, theirs);
  const std::string before = slurp(theirs);

  const auto run = run_llmdlq("process --schema " + schema + " --sink " + kind + ":" + theirs,
                              R"({"id": 1, "response": "not json"})" "\n");
  INFO(run.err);
  CHECK(run.exit_code == 3);
  CHECK(run.out.empty());
  CHECK(run.err.find("cannot open the DLQ: ") != std::string::npos);
  CHECK(run.err.find(theirs + " belongs to " + named(nobody) + ", mode 0600") != std::string::npos);
  CHECK(slurp(theirs) == before);
  CHECK(llmdlq::test::owner_of(theirs) == static_cast<long>(nobody.uid));
}

TEST_CASE("replay: a jsonl target file nobody owns is refused before the model is asked",
          "[tools][replay][jsonl][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  temp_dir dir;
  const auto schema = dir.write("schema.json", llmdlq::test::replay_schema);
  const auto db = (dir.path() / "dlq.db").string();
  {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    for (const auto& letter : llmdlq::test::cut_off_letters(1)) REQUIRE(store->publish(letter).has_value());
  }
  const auto root = std::filesystem::canonical(dir.path());
  const auto out = (root / "out.jsonl").string();
  const auto allowed = dir.write("allowed.allow", "jsonl:" + out + "\n");
  dir.write("out.jsonl", "");
  REQUIRE(::chmod(out.c_str(), 0600) == 0);
  llmdlq::test::give_to(nobody, out);

  // Nothing listens on the discard port: a model asked would fail the run differently.
  const auto run = run_llmdlq_reading("replay sqlite:" + db + " --schema " + schema +
                                          " --execute --rate 0 --allowlist " + allowed +
                                          " --model-url http://127.0.0.1:9 --to jsonl:" + out,
                                      "/dev/null");
  INFO(run.err);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find(out + " belongs to " + named(nobody) + ", mode 0600") != std::string::npos);
  CHECK(slurp(out).empty());
}

namespace {

// How a replay or a delivery is pointed at its allowlist.
enum class named_by { option, environment };

// A DLQ with one cut-off letter, a target its allowlist would allow, and
// the allowlist: the command line of `command` (replay or deliver) with it.
struct allowlisted_run {
  temp_dir dir;
  std::string db = (dir.path() / "dlq.db").string();
  std::filesystem::path root = std::filesystem::canonical(dir.path());
  std::string target = (root / "out" / "payloads.jsonl").string();
  std::string list = (root / "targets.allow").string();

  allowlisted_run() {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    for (const auto& letter : llmdlq::test::cut_off_letters(1)) REQUIRE(store->publish(letter).has_value());
    std::filesystem::create_directory(root / "out");
    // What the issue's attacker wrote: every file under a prefix.
    dir.write("targets.allow", "jsonl:" + root.string() + "/*\n");
  }

  llmdlq::test::tool_run run(std::string_view command, named_by how) const {
    const std::string schema = dir.write("schema.json", llmdlq::test::replay_schema);
    std::string arguments = command == "replay" ? "replay sqlite:" + db + " --schema " + schema +
                                                      " --execute --rate 0 --model-url http://127.0.0.1:9"
                                                : "deliver sqlite:" + db;
    arguments += " --to jsonl:" + target;
    std::string launcher = "env -u LLMDLQ_REPLAY_ALLOWLIST";
    if (how == named_by::option) {
      arguments += " --allowlist " + list;
    } else {
      launcher = "env LLMDLQ_REPLAY_ALLOWLIST=" + list;
    }
    return run_llmdlq_reading(arguments, "/dev/null", launcher);
  }
};

}  // namespace

TEST_CASE("replay and deliver, run by root, refuse an allowlist nobody owns or may write, and write no target",
          "[tools][replay][deliver][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  const std::string command = GENERATE(std::string("replay"), std::string("deliver"));
  const auto how = GENERATE(named_by::option, named_by::environment);
  CAPTURE(command, how == named_by::option ? "--allowlist" : "$LLMDLQ_REPLAY_ALLOWLIST");
  allowlisted_run setup;

  SECTION("nobody's, mode 0666") {
    REQUIRE(::chmod(setup.list.c_str(), 0666) == 0);
    llmdlq::test::give_to(nobody, setup.list);
    const auto run = setup.run(command, how);
    INFO(run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("the allowlist is refused: " + setup.list + " belongs to " + named(nobody) + ", mode 0666") !=
          std::string::npos);
  }
  SECTION("nobody's, mode 0644") {
    llmdlq::test::give_to(nobody, setup.list);
    const auto run = setup.run(command, how);
    INFO(run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("the allowlist is refused: " + setup.list + " belongs to " + named(nobody) + ", mode 0644") !=
          std::string::npos);
  }
  SECTION("root's, but others may write it") {
    REQUIRE(::chmod(setup.list.c_str(), 0666) == 0);
    const auto run = setup.run(command, how);
    INFO(run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("the allowlist is refused: " + setup.list +
                       " has mode 0666: group or others can write it, so its entries cannot be trusted") !=
          std::string::npos);
  }
  SECTION("a link nobody made to root's") {
    const auto real = setup.root / "real.allow";
    std::filesystem::rename(setup.list, real);
    std::filesystem::create_symlink(real, setup.list);
    llmdlq::test::give_to(nobody, setup.list);
    const auto run = setup.run(command, how);
    INFO(run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("the allowlist is refused: " + setup.list +
                       " is a symbolic link: an allowlist is opened by its own path only") != std::string::npos);
  }
  SECTION("in a directory nobody owns") {
    const auto theirs = setup.root / "theirs";
    std::filesystem::create_directory(theirs);
    std::filesystem::rename(setup.list, theirs / "targets.allow");
    setup.list = (theirs / "targets.allow").string();
    llmdlq::test::give_to(nobody, theirs);
    const auto run = setup.run(command, how);
    INFO(run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("the allowlist is refused: " + setup.list + " is in " + theirs.string() + ", which belongs to " +
                       named(nobody)) != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(setup.target));
}

TEST_CASE("deliver: an allowlist that is root's and its owner's only lets the target be written",
          "[tools][deliver][owner]") {
  allowlisted_run setup;
  for (const auto how : {named_by::option, named_by::environment}) {
    const auto run = setup.run("deliver", how);
    INFO(run.err);
    CHECK(run.exit_code == 0);
    CHECK(std::filesystem::exists(setup.target));
    std::filesystem::remove(setup.target);
  }
}

TEST_CASE("purge, run by root in a directory anyone may write, removes only what its own purges left there",
          "[tools][purge][jsonl][owner]") {
  LLMDLQ_REQUIRE_ROOT();
  const auto nobody = llmdlq::test::nobody();
  temp_dir dir;
  const auto shared = dir.path() / "D";  // as /tmp is: mode 1777
  std::filesystem::create_directory(shared);
  std::filesystem::permissions(shared, std::filesystem::perms(01777), std::filesystem::perm_options::replace);
  const auto file = shared / "pj.jsonl";
  const llmdlq::test::expiring_letters letters;
  {
    auto sink = llmdlq::jsonl_file_sink::open(file);
    REQUIRE(sink.has_value());
    REQUIRE(sink->publish_batch(letters.all()).has_value());
  }
  // nobody's, named as a purge names its new file: a file, and links to root's file and to nobody's.
  const auto theirs = shared / "pj.jsonl.purge-ABCDEF";
  const auto link = shared / "pj.jsonl.purge-LINKED";
  const auto to_theirs = shared / "pj.jsonl.purge-THEIRS";
  const auto target = dir.write("root-file", "root's\n");
  REQUIRE(llmdlq::test::run_as(nobody, [&] {
    std::ofstream(theirs) << "nobody's\n";
    return std::filesystem::exists(theirs) && ::symlink(target.c_str(), link.c_str()) == 0 &&
           ::symlink(theirs.c_str(), to_theirs.c_str()) == 0;
  }));
  // nobody's file marked as a purge marks its own: still not root's.
  REQUIRE(::lsetxattr(theirs.c_str(), llmdlq::detail::jsonl_compaction_attribute, "pj.jsonl", 8, 0) == 0);
  // root's: what a killed purge left (marked), and a file of the same shape that is not a purge's.
  const auto abandoned = shared / "pj.jsonl.purge-a1B2c3";
  const auto unmarked = shared / "pj.jsonl.purge-notes1";
  std::ofstream(abandoned) << "{\"envelope_version\":\"1\"";
  std::ofstream(unmarked) << "root's notes\n";
  REQUIRE(::setxattr(abandoned.c_str(), llmdlq::detail::jsonl_compaction_attribute, "pj.jsonl", 8, 0) == 0);

  const auto run = run_llmdlq("purge jsonl:" + file.string() + " --now 2026-06-01T00:00:00Z --operator alice");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.starts_with("purged 3 dead letters from jsonl:"));
  CHECK(slurp(theirs) == "nobody's\n");
  CHECK(llmdlq::test::owner_of(theirs) == static_cast<long>(nobody.uid));
  CHECK(std::filesystem::is_symlink(link));
  CHECK(std::filesystem::is_symlink(to_theirs));
  CHECK(slurp(target) == "root's\n");
  CHECK_FALSE(std::filesystem::exists(abandoned));
  CHECK(slurp(unmarked) == "root's notes\n");
  CHECK(llmdlq::read_jsonl_envelopes(file)->envelopes.size() == 3);
}

}  // namespace file_owner_command_test
