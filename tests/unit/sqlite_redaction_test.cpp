// SPDX-License-Identifier: MIT
// The SQLite store's files (the database and its write-ahead log) hold no
// detected value: every byte on disk is read back raw.
#include <filesystem>
#include <string>

#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/pii_sample.hpp"
#include "support/temp_dir.hpp"

namespace sqlite_redaction_test {

TEST_CASE("sqlite_store: no byte of its files holds a detected value", "[sqlite][redaction]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  auto store = llmdlq::sqlite_store::open(path);
  REQUIRE(store.has_value());
  REQUIRE(store->publish(llmdlq::test::pii_envelope("pii:1")).has_value());
  REQUIRE(store->publish(llmdlq::test::pii_envelope("pii:2")).has_value());

  std::string on_disk;
  for (const auto& file : std::filesystem::directory_iterator(dir.path())) on_disk += llmdlq::test::slurp(file.path());
  llmdlq::test::check_no_pii(on_disk);
}

}  // namespace sqlite_redaction_test
