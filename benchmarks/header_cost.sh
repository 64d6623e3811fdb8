#!/usr/bin/env bash
# What including a header costs a host's TU: the CPU time (user + sys) of
# `-fsyntax-only` on a file that includes only that header, median of N
# runs, for the headers a custom sink, a worker and the umbrella include,
# beside simdjson.h and Boost.JSON's value.hpp as yardsticks. CPU time, not
# wall time, but still run it on an idle machine.
#
# usage: benchmarks/header_cost.sh [--runs=N] [--cxx=COMPILER] [HEADER...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs=5
cxx=${CXX:-g++}
headers=()
for arg in "$@"; do
  case $arg in
    --runs=*) runs=${arg#--runs=} ;;
    --cxx=*) cxx=${arg#--cxx=} ;;
    -h | --help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) headers+=("$arg") ;;
  esac
done
[ ${#headers[@]} -gt 0 ] || headers=(
  simdjson.h boost/json/value.hpp
  llmdlq/taxonomy.hpp llmdlq/envelope.hpp llmdlq/sink.hpp llmdlq/moderation.hpp
  llmdlq/sqlite/store.hpp llmdlq/kafka/sink.hpp llmdlq/process.hpp llmdlq/llmdlq.hpp)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-28s %s\n' header "CPU seconds (median of $runs)"
for header in "${headers[@]}"; do
  printf '#include <%s>\n' "$header" > "$work/tu.cpp"
  times=()
  for ((i = 0; i < runs; i++)); do
    times+=("$(TIMEFORMAT='%U %S'; { time "$cxx" -std=c++23 -fsyntax-only -I"$root/include" "$work/tu.cpp"; } 2>&1 |
               tail -1 | awk '{printf "%.2f", $1 + $2}')")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")
  printf '%-28s %s\n' "$header" "$median"
done
