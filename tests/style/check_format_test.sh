#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/check-format on a small repository made here: a line changed after
# the commit that added .clang-format fails when clang-format would write it
# otherwise, and passes once it is written so; lines from before that commit,
# deleted and renamed files, and files outside the checked folders are not
# checked.
# Usage: check_format_test.sh CHECK_FORMAT CLANG_FORMAT_FILE
set -u
check_format=$1
style=$2
command -v git >/dev/null || { echo "no git"; exit 77; }
command -v clang-format-14 >/dev/null || command -v clang-format >/dev/null || { echo "no clang-format"; exit 77; }

. "$(dirname "$0")/scratch_repo.sh"
run_check() { python3 "$check_format" "$repo"; }

g init -q
mkdir -p "$repo/src" "$repo/include/x" "$repo/docs"
printf 'int   before(){return 1;}\n' > "$repo/src/a.cpp"
printf 'int f() { return 1; }\n' > "$repo/src/b.cpp"
printf 'int g() { return 2; }\n' > "$repo/src/c.cpp"
g add src
g commit -q -m "code from before the rules"
expect 77 ".clang-format"

cp "$style" "$repo/.clang-format"
g add .clang-format
g commit -q -m "the rules"
expect 0

# A badly formatted line, in the work tree only, then committed.
printf 'int   after(){return 2;}\n' >> "$repo/src/a.cpp"
expect 1 "src/a.cpp"
g add src/a.cpp
g commit -q -m "a badly formatted line"
expect 1 "src/a.cpp"
# The line written as clang-format writes it; the line from before stays as it was.
printf 'int   before(){return 1;}\nint after() { return 2; }\n' > "$repo/src/a.cpp"
expect 0

# A new file, not yet added to git.
printf 'struct  s{int x;};\n' > "$repo/include/x/new.hpp"
expect 1 "include/x/new.hpp"
printf 'struct s {\n  int x;\n};\n' > "$repo/include/x/new.hpp"
expect 0

# Deleted and renamed files, and a file outside the checked folders.
g rm -q src/b.cpp
g mv src/c.cpp src/d.cpp
printf 'int   outside(){return 3;}\n' > "$repo/docs/e.cpp"
expect 0
printf 'int   renamed(){return 4;}\n' >> "$repo/src/d.cpp"
expect 1 "src/d.cpp"
echo "check-format: all cases passed"
