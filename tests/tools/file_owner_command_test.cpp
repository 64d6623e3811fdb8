// SPDX-License-Identifier: MIT
// `llmdlq process` and `llmdlq replay --to`, run by root, never write into
// a DLQ file or a replay target another user owns: that user could read the
// letters and change them at will, whatever the file's mode.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
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

}  // namespace file_owner_command_test
