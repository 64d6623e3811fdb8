#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs scripts/check-tests on one fixture and requires exactly the findings
its lines mark with `finds: RULE`, and its exit status: 1 with findings, 0
without. Usage: fixture_check.py CHECK_TESTS FIXTURE"""

import re
import subprocess
import sys

check_tests, fixture = sys.argv[1], sys.argv[2]
expected = set()
with open(fixture, encoding="utf-8") as f:
    for number, line in enumerate(f, start=1):
        for rule in re.findall(r"finds: ([a-z-]+)", line):
            expected.add(f"{number}: {rule}")

run = subprocess.run([sys.executable, check_tests, fixture], capture_output=True, text=True)
print(run.stdout, end="")
print(run.stderr, end="", file=sys.stderr)
found = set()
for line in run.stdout.splitlines():
    m = re.match(r".*?:(\d+: [a-z-]+): ", line)
    if m:
        found.add(m.group(1))

failed = False
for finding in sorted(expected - found):
    print(f"not found: {fixture}:{finding}")
    failed = True
for finding in sorted(found - expected):
    print(f"found, but not marked in the fixture: {fixture}:{finding}")
    failed = True
status = 1 if expected else 0
if run.returncode != status:
    print(f"check-tests exited {run.returncode}, not {status}")
    failed = True
if not failed:
    print(f"{fixture}: the {len(expected)} findings marked, and no other")
sys.exit(1 if failed else 0)
