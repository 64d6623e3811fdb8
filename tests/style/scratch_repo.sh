# SPDX-License-Identifier: MIT
# What the style checks' self-tests share, sourced by each: a repository in a
# temporary folder ($repo, removed on exit), git run in it (g), and
# expect STATUS [TEXT]: the test's run_check exits STATUS, and its output
# holds TEXT.
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
g() { git -C "$repo" -c user.name=test -c user.email=test@example.invalid -c commit.gpgsign=false "$@" >/dev/null; }
expect() {
  out=$(run_check 2>&1)
  status=$?
  [ "$status" -eq "$1" ] || fail "exit $status, not $1: $out"
  [ -z "${2:-}" ] || printf '%s' "$out" | grep -qF -- "$2" || fail "the output does not name $2: $out"
}
