// SPDX-License-Identifier: MIT
// A worker's first line of defence: check each LLM receipt extraction in a
// folder against the receipt schema, and say what a worker would do with it.
//
//   check_receipts examples/data/receipt.schema.json examples/data/receipts
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <llmdlq/llmdlq.hpp>

namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: check_receipts SCHEMA FOLDER\n");
    return 2;
  }
  llmdlq::compile_options options;
  options.format_assertion = true;
  const auto schema = llmdlq::schema::compile(read(argv[1]), options);
  if (!schema) {
    std::fprintf(stderr, "%s: %s\n", schema.error().location.c_str(), schema.error().message.c_str());
    return 2;
  }

  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(argv[2])) files.push_back(entry.path());
  std::sort(files.begin(), files.end());

  llmdlq::json_parser parser;
  int accepted = 0, rejected = 0;
  for (const auto& file : files) {
    const std::string response = read(file);
    const auto doc = parser.parse(response);
    const auto name = file.filename().string();
    if (!doc) {
      ++rejected;
      std::printf("%-36s reject: not JSON (%s at line %zu)\n", name.c_str(), doc.error().message.c_str(),
                  doc.error().line);
    } else if (schema->is_valid(*doc)) {
      ++accepted;
      std::printf("%-36s accept\n", name.c_str());
    } else {
      ++rejected;
      const auto errors = schema->validate(*doc, {1});
      std::printf("%-36s reject: %s %s\n", name.c_str(), errors[0].instance_path.c_str(),
                  errors[0].message.c_str());
    }
  }
  std::printf("%d accepted, %d rejected\n", accepted, rejected);
  return accepted > 0 && rejected > 0 ? 0 : 1;  // the sample holds both kinds
}
