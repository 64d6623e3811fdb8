#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/check-tidy, copied into a small repository made here: a source file
# changed after the commit that added .clang-tidy fails on a finding and
# names its file, and passes without one; a file from before that commit is
# not checked; no compile database is Skipped.
# Usage: check_tidy_test.sh CHECK_TIDY
set -u
check_tidy=$1
command -v git >/dev/null || { echo "no git"; exit 77; }
command -v clang-tidy-19 >/dev/null || { echo "no clang-tidy-19"; exit 77; }

. "$(dirname "$0")/scratch_repo.sh"
run_check() { python3 "$repo/scripts/check-tidy" "$repo/build"; }

copying='#include <string>
#include <vector>
std::size_t total(const std::vector<std::string>& v) {
  std::size_t n = 0;
  for (auto s : v) n += s.size();
  return n;
}'
referring=$(printf '%s\n' "$copying" | sed 's/auto s/const auto\& s/')

g init -q
mkdir -p "$repo/scripts" "$repo/src" "$repo/tools" "$repo/build"
cp "$check_tidy" "$repo/scripts/check-tidy"
printf '%s\n' "$copying" > "$repo/src/a.cpp"
printf '%s\n' "$referring" > "$repo/tools/b.cpp"
printf '[\n  {"directory": "%s", "file": "src/a.cpp", "arguments": ["clang++", "-std=c++20", "-c", "src/a.cpp"]},\n  {"directory": "%s", "file": "tools/b.cpp", "arguments": ["clang++", "-std=c++20", "-c", "tools/b.cpp"]}\n]\n' \
  "$repo" "$repo" > "$repo/build/compile_commands.json"
g add scripts src tools
g commit -q -m "code from before the rules"
expect 77 ".clang-tidy"

printf "Checks: '-*,performance-for-range-copy'\n" > "$repo/.clang-tidy"
g add .clang-tidy
g commit -q -m "the rules"
expect 0

printf '%s\n' "$copying" | sed 's/total/sum/' > "$repo/tools/b.cpp"
expect 1 "tools/b.cpp:5:13: error: loop variable is copied"
printf '%s\n' "$referring" | sed 's/total/sum/' > "$repo/tools/b.cpp"
expect 0
printf '%s\n' "$copying" > "$repo/tools/c.cpp"
expect 0 "tools/c.cpp is not in"

rm "$repo/build/compile_commands.json"
expect 77 "compile database"
echo "check-tidy: all cases passed"
