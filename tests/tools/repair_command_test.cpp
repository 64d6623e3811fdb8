// SPDX-License-Identifier: MIT
// `llmdlq repair` as an operator runs it on a stored LLM answer.
#include <boost/json/parse.hpp>

#include "catch.hpp"
#include "tools/run_tool.hpp"

namespace repair_command_test {

using llmdlq::test::run_llmdlq;
using llmdlq::test::temp_dir;

TEST_CASE("repair: prints the repaired JSON, or the error and where", "[tools][repair]") {
  auto run = run_llmdlq("repair", "Sure!\n```json\n{'total': 3, paid: True,}\n```");
  CHECK(run.exit_code == 0);
  CHECK(run.out == "{\"total\": 3, \"paid\": true}\n");

  run = run_llmdlq("repair", "{\"status\": paid}");
  CHECK(run.exit_code == 1);
  CHECK(run.out.empty());
  CHECK(run.err.find("offset 11 (line 1, column 12)") != std::string::npos);

  temp_dir dir;
  const auto file = dir.write("answer.txt", "[1, 2");
  run = run_llmdlq("repair " + file, "");
  CHECK(run.exit_code == 1);  // closing a cut-off document is lossy, not allowed by default
  CHECK(run.err.find("lossy") != std::string::npos);
  run = run_llmdlq("repair --allow lossless,syntactic,lossy " + file, "");
  CHECK(run.exit_code == 0);
  CHECK(run.out == "[1 ]\n");  // the last number may itself be cut: dropped, not guessed
}

TEST_CASE("repair --json: the actions and the truncation flag", "[tools][repair]") {
  auto run = run_llmdlq("repair --json", "[1 2]");
  CHECK(run.exit_code == 0);
  auto out = boost::json::parse(run.out).as_object();
  CHECK(out.at("ok") == true);
  CHECK(out.at("json") == "[1, 2]");
  CHECK(out.at("truncated") == false);
  const auto& action = out.at("actions").as_array().at(0).as_object();
  CHECK(action.at("code") == "missing_comma");
  CHECK(action.at("tier") == "syntactic");
  CHECK(action.at("begin") == 2);

  run = run_llmdlq("repair --json", "{\"a\": \"cut");
  CHECK(run.exit_code == 1);
  out = boost::json::parse(run.out).as_object();
  CHECK(out.at("ok") == false);
  CHECK(out.at("truncated") == true);
  CHECK(out.at("error").at("code") == "tier_not_allowed");

  run = run_llmdlq("repair --allow bogus", "[]");
  CHECK(run.exit_code == 2);
}

TEST_CASE("repair --max-bytes: larger input is refused before it is read whole", "[tools][repair]") {
  temp_dir dir;
  const auto file = dir.write("answer.txt", "{\"a\": [" + std::string(4096, ' ') + "1]}");
  auto run = run_llmdlq("repair --max-bytes 1K " + file);
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK(run.err.find("the document " + file + " is larger than the limit of 1 KiB") != std::string::npos);
  run = run_llmdlq("repair --max-bytes 1K", "{'a': [" + std::string(4096, ' ') + "1]}");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("the document on standard input is larger than the limit of 1 KiB") != std::string::npos);
  run = run_llmdlq("repair --max-bytes 8K " + file);
  CHECK(run.exit_code == 0);
  // The default is 16 MiB.
  run = run_llmdlq("repair", std::string((16u << 20) + 1, ' '));
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("the document on standard input is larger than the limit of 16 MiB") != std::string::npos);
  CHECK(run_llmdlq("repair --max-bytes 0 " + file).exit_code == 2);
  CHECK(run_llmdlq("repair --max-bytes 2X " + file).exit_code == 2);
}

TEST_CASE("repair: a read error on standard input exits 2", "[tools][repair]") {
  temp_dir dir;
  const auto run = llmdlq::test::run_llmdlq_reading("repair", dir.path().string());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("Is a directory") != std::string::npos);
}

}  // namespace repair_command_test
