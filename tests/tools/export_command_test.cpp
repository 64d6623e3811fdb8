// SPDX-License-Identifier: MIT
// `llmdlq export` over a DLQ that `llmdlq process` filled and an operator
// acted on: every line validates against schemas/export-v1.json with
// llmdlq's own validator, holds what the letter stored (redacted as
// stored), the correction when there is one, follows list's filters, and
// opens sealed originals only with --keys and --unseal.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <llmdlq/schema.hpp>

#include "catch.hpp"
#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

namespace export_command_test {

using llmdlq::test::run_llmdlq;
using llmdlq::test::temp_dir;

constexpr std::string_view schema_text =
    R"({"type": "object", "required": ["total", "email"], "properties": {"total": {"type": "number"},)"
    R"( "email": {"type": "string"}}})";

// A schema failure whose answer and input name a person, a syntax failure and a cut-off answer.
std::string responses() {
  std::string lines;
  const auto line = [&](int id, std::string_view response, std::string_view input) {
    boost::json::object o{{"id", id}, {"response", response}};
    if (!input.empty()) o.emplace("input", input);
    lines += boost::json::serialize(o) + "\n";
  };
  line(1, R"({"total": "12", "email": "ann@example.com"})", "Receipt of ann@example.com: 12.00 EUR");
  line(2, R"({"total": 3 "email": "x"})", "");
  line(3, R"({"total": [1)", "");
  return lines;
}

// A DLQ of responses(), processed with `process_flags`.
struct filled_dlq {
  temp_dir dir;
  std::string schema = dir.write("schema.json", schema_text);
  std::string store = "sqlite:" + (dir.path() / "dlq.db").string();
  std::string keys = (dir.path() / "keys").string();

  explicit filled_dlq(const std::string& process_flags = {}) {
    const auto run = run_llmdlq("process --repair off --schema-version receipt-2 --schema " + schema + " --sink " +
                                    store + " " + process_flags,
                                responses());
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
  }

  std::string id_of(std::string_view category) const {
    const auto rows = llmdlq::test::lines_of(
        run_llmdlq("list " + store + " --json --category " + std::string(category)).out);
    REQUIRE(rows.size() == 1);
    return std::string(rows[0].at("dlq_id").as_string());
  }
};

std::vector<boost::json::object> exported(const llmdlq::test::tool_run& run) {
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  return llmdlq::test::lines_of(run.out);
}

// The export schema, compiled by llmdlq itself.
const llmdlq::schema& export_schema() {
  static const auto compiled = [] {
    const auto text = llmdlq::test::slurp(std::filesystem::path(LLMDLQ_SOURCE_DIR) / "schemas" / "export-v1.json");
    auto s = llmdlq::schema::compile(text);
    REQUIRE(s.has_value());
    return *s;
  }();
  return compiled;
}

void check_valid(const std::vector<boost::json::object>& lines) {
  for (const auto& line : lines) {
    INFO(boost::json::serialize(line));
    CHECK(export_schema().is_valid(boost::json::value(line)));
  }
}

boost::json::object by_category(const std::vector<boost::json::object>& lines, std::string_view category) {
  for (const auto& line : lines) {
    if (line.at("category").as_string() == category) return line;
  }
  FAIL("no exported letter of category " << category);
  return {};
}

}  // namespace export_command_test

using namespace export_command_test;

TEST_CASE("export writes one record per letter that validates against schemas/export-v1.json", "[tools][export]") {
  filled_dlq dlq;
  const auto id = dlq.id_of("schema");
  const auto corrected = dlq.dir.write("corrected.json", R"({"total": 12, "email": "ann@example.com"})");
  REQUIRE(run_llmdlq("claim " + dlq.store + " " + id + " --operator ann").exit_code == 0);
  REQUIRE(run_llmdlq("resolve " + dlq.store + " " + id + " --operator ann --schema " + dlq.schema + " --corrected " +
                     corrected)
              .exit_code == 0);

  const auto run = run_llmdlq("export " + dlq.store);
  const auto lines = exported(run);
  REQUIRE(lines.size() == 3);
  check_valid(lines);
  CHECK(run.err.find("3 letters exported, 1 of them with an output") != std::string::npos);

  const auto resolved = by_category(lines, "schema");
  CHECK(resolved.at("dlq_id").as_string() == id);
  CHECK(resolved.at("status").as_string() == "resolved");
  CHECK(resolved.at("versions").at("schema").as_string() == "receipt-2");
  CHECK(resolved.at("output").at("source").as_string() == "operator");
  CHECK(resolved.at("output").at("value").at("total") == 12);
  CHECK_FALSE(resolved.at("failure").at("errors").as_array().empty());
  // Redacted as stored: the person's address is in neither text.
  const auto& answer = resolved.at("failed_output").as_object();
  CHECK(answer.at("redacted") == true);
  CHECK(std::string(answer.at("text").as_string()).find("ann@example.com") == std::string::npos);
  const auto& input = resolved.at("input").at("stored").as_object();
  CHECK(input.at("redacted") == true);
  CHECK(std::string(input.at("text").as_string()).find("ann@example.com") == std::string::npos);
  CHECK(input.at("length") == std::string_view("Receipt of ann@example.com: 12.00 EUR").size());

  const auto cut = by_category(lines, "truncated");
  CHECK(cut.at("status").as_string() == "pending");
  CHECK_FALSE(cut.contains("output"));
  CHECK(cut.at("failed_output").at("text").as_string() == R"({"total": [1)");
  CHECK_FALSE(cut.at("input").as_object().contains("stored"));
}

TEST_CASE("export takes the letters list's filters take", "[tools][export]") {
  filled_dlq dlq;
  REQUIRE(run_llmdlq("discard " + dlq.store + " " + dlq.id_of("syntax") + " --operator ann").exit_code == 0);
  CHECK(exported(run_llmdlq("export " + dlq.store + " --status discarded")).size() == 1);
  CHECK(exported(run_llmdlq("export " + dlq.store + " --status pending")).size() == 2);
  CHECK(exported(run_llmdlq("export " + dlq.store + " --category truncated --category schema")).size() == 2);
  CHECK(exported(run_llmdlq("export " + dlq.store + " --schema-version receipt-2 --since 1d")).size() == 3);
  CHECK(exported(run_llmdlq("export " + dlq.store + " --schema-version receipt-1")).empty());
  CHECK(exported(run_llmdlq("export " + dlq.store + " --limit 2")).size() == 2);
  CHECK(run_llmdlq("export " + dlq.store + " --status lost").exit_code == 2);
  CHECK(run_llmdlq("export sqlite:" + (dlq.dir.path() / "none.db").string()).exit_code == 2);
}

TEST_CASE("export opens sealed originals only with --keys and --unseal", "[tools][export]") {
  temp_dir probe;
  if (run_llmdlq("keys generate k1 --keys " + (probe.path() / "keys").string()).exit_code != 0) {
    SUCCEED("this llmdlq seals no originals");
    return;
  }
  filled_dlq dlq("--keys " + (probe.path() / "keys").string());
  const auto sealed = by_category(exported(run_llmdlq("export " + dlq.store)), "schema");
  CHECK(sealed.at("failed_output").at("sealed_with").as_string() == "k1");
  CHECK(std::string(sealed.at("failed_output").at("text").as_string()).find("ann@example.com") == std::string::npos);

  const auto lines = exported(run_llmdlq("export " + dlq.store + " --unseal --keys " +
                                         (probe.path() / "keys").string()));
  check_valid(lines);
  const auto opened = by_category(lines, "schema");
  CHECK(opened.at("failed_output").at("unsealed") == true);
  CHECK_FALSE(opened.at("failed_output").as_object().contains("redacted"));
  CHECK(opened.at("failed_output").at("text").as_string() == R"({"total": "12", "email": "ann@example.com"})");
  CHECK(opened.at("input").at("stored").at("text").as_string() == "Receipt of ann@example.com: 12.00 EUR");

  CHECK(run_llmdlq("export " + dlq.store + " --unseal").exit_code == 2);
  CHECK(run_llmdlq("export " + dlq.store + " --keys " + (probe.path() / "keys").string()).exit_code == 2);
}
