// SPDX-License-Identifier: MIT
// Parses a document with the packaged llmdlq, and opens a SQLite
// dead-letter queue when the package has one.
#include <cstdio>

#include <llmdlq/json_parser.hpp>
#include <llmdlq/version.hpp>
#ifdef TEST_PACKAGE_SQLITE
#  include <llmdlq/sqlite/store.hpp>
#endif

int main() {
  llmdlq::json_parser parser;
  if (!parser.parse(R"({"total": 1})")) return 1;
#ifdef TEST_PACKAGE_SQLITE
  if (!llmdlq::sqlite_store::open("test_package-dlq.db")) return 2;
#endif
  std::printf("llmdlq %s package works\n", llmdlq::version_string);
  return 0;
}
