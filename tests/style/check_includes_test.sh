#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/check-includes on a small tree made here: a stage that includes
# another stage's internals fails and names the file and line; one that
# includes the JSON text layer, its own folder and the top of detail/ passes;
# json/ including anything of the library but itself and config.hpp fails;
# a folder the layers do not name fails.
# Usage: check_includes_test.sh CHECK_INCLUDES
set -u
check_includes=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect() {
  out=$(python3 "$check_includes" "$tree" 2>&1)
  status=$?
  [ "$status" -eq "$1" ] || fail "exit $status, not $1: $out"
  [ -z "${2:-}" ] || printf '%s' "$out" | grep -qF -- "$2" || fail "the output does not name $2: $out"
}
detail=$tree/include/llmdlq/detail
mkdir -p "$detail/json" "$detail/repair" "$detail/redaction"
printf '#include "llmdlq/config.hpp"\n#include "llmdlq/detail/json/utf8.hpp"\n' > "$detail/json/escape.hpp"
printf '#include "llmdlq/detail/json/escape.hpp"\n' > "$detail/json/utf8.hpp"
printf '#include "llmdlq/detail/json/escape.hpp"\n#include "llmdlq/detail/bounded_read.hpp"\n' > "$detail/repair/engine.hpp"
printf '#include "llmdlq/detail/repair/engine.hpp"\n' > "$detail/repair/pass.hpp"
printf '#include <string>\n#include "llmdlq/detail/json/escape.hpp"\n' > "$detail/redaction/reading.hpp"
printf '#include "llmdlq/detail/json/utf8.hpp"\n' > "$detail/bounded_read.hpp"
expect 0

# A stage reaching into another's internals.
printf '#include <string>\n#include "llmdlq/detail/repair/engine.hpp"\n' > "$detail/redaction/reading.hpp"
expect 1 "include/llmdlq/detail/redaction/reading.hpp:2: llmdlq/detail/repair/engine.hpp: redaction/ may not include repair/"
printf '#include "llmdlq/detail/json/escape.hpp"\n' > "$detail/redaction/reading.hpp"
expect 0

# The text layer is the bottom: no stage, no public header.
printf '#include "llmdlq/detail/repair/engine.hpp"\n' > "$detail/json/escape.hpp"
expect 1 "json/escape.hpp:1"
printf '#include "llmdlq/schema.hpp"\n' > "$detail/json/escape.hpp"
expect 1 "json/ includes no header of the library but config.hpp"
printf '#include "llmdlq/config.hpp"\n' > "$detail/json/escape.hpp"
expect 0

# The top of detail/ reads only the text layer.
printf '#include "llmdlq/detail/redaction/reading.hpp"\n' > "$detail/bounded_read.hpp"
expect 1 "the top of detail/ includes only json/"
printf '#include "llmdlq/detail/json/utf8.hpp"\n' > "$detail/bounded_read.hpp"
expect 0

# A new folder must be given its layer.
mkdir -p "$detail/novel"
printf '#include "llmdlq/detail/json/utf8.hpp"\n' > "$detail/novel/thing.hpp"
expect 1 "detail/novel/ is not in LAYERS"
echo "check-includes: every planted break found, the clean tree passes"
