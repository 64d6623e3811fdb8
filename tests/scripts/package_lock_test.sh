#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/lib/common.sh while another package installation holds the
# package manager's locks: apt_get waits for the lock to be let go, and
# install_packages gives up after LLMDLQ_PACKAGE_LOCK_TIMEOUT seconds,
# naming the process that held it. The locks are held as apt-get and dpkg
# hold them (fcntl locks: flock(1) would not stop apt-get); nothing is
# installed or removed.
set -euo pipefail
source "$1/scripts/lib/common.sh"

skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "as root only: the package manager's locks are root's"
command -v apt-get >/dev/null && [ -d /var/lib/dpkg ] || skip "no apt-get here"
command -v python3 >/dev/null || skip "python3 holds the locks"
[ -z "$(package_lock_holders)" ] || skip "another package installation is running: $(package_lock_holders)"

failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }
work=$(mktemp -d)
holder=""
stop_holder() {
  if [ -n "$holder" ]; then
    kill "$holder" 2>/dev/null || true
    wait "$holder" 2>/dev/null || true
    holder=""
  fi
}
trap 'stop_holder; rm -rf "$work"' EXIT

# hold LOCK...: a process that holds the locks until stop_holder (ten minutes at
# most, should this script be killed); returns once they are held. Another
# installation that started since holds them first: they are taken once it
# lets go (within ten minutes, or the holder dies). The holder says so
# through a pipe of its own, read until it speaks or dies: no polling, and
# no word left by the one before.
holds=0
hold() {
  holds=$((holds + 1))
  local said="$work/held.$holds" word=""
  mkfifo "$said"
  python3 - "$@" >"$said" <<'PY' &
import fcntl, os, signal, sys
signal.alarm(600)
for path in sys.argv[1:]:
    fcntl.lockf(os.open(path, os.O_RDWR | os.O_CREAT, 0o640), fcntl.LOCK_EX)
signal.alarm(0)
print("held", flush=True)
signal.alarm(600)  # until stop_holder, or ten minutes should this script be killed
signal.pause()
PY
  holder=$!
  read -r word <"$said" || true
  [ "$word" = held ] && return 0
  echo "FAILED: cannot hold $*" >&2
  exit 1
}

# 1. The dpkg lock held until apt_get says it waits for it: then let go, and
# the apt-get (one that changes nothing) goes on and succeeds.
hold /var/lib/dpkg/lock-frontend
held_by=$holder
# Its standard error is read line by line through a pipe until it says it
# waits, or ends (within its own 60 s): no polling. The rest is drained to
# the file, so that apt_get never writes to a closed pipe.
mkfifo "$work/waited.pipe"
LLMDLQ_PACKAGE_LOCK_TIMEOUT=60 apt_get install -y -q 2>"$work/waited.pipe" &
waiter=$!
exec 3<"$work/waited.pipe"
said_it_waits=0
while IFS= read -r line <&3; do
  printf '%s\n' "$line" >>"$work/waited"
  if [[ "$line" =~ ^apt-get\ install\ waits\ up\ to\ [0-9]+\ s\ for\ the\ package\ manager\'s\ lock:$ ]]; then
    said_it_waits=1
    break
  fi
done
cat <&3 >>"$work/waited" &
drain=$!
exec 3<&-
[ "$said_it_waits" -eq 1 ] || fail "apt_get did not say it waits: $(cat "$work/waited")"
kill -0 "$waiter" 2>/dev/null || fail "apt_get returned while the lock was still held"
stop_holder
wait "$waiter" || fail "apt_get did not go on once the lock was let go: $(cat "$work/waited")"
wait "$drain"
grep -q "^  $held_by (.*python3 .*) holds /var/lib/dpkg/lock-frontend$" "$work/waited" ||
  fail "apt_get did not say whom it waited for: $(cat "$work/waited")"

# 2. Held for longer than the timeout: install_packages gives up without an update, naming the holder.
hold /var/lib/dpkg/lock-frontend /var/lib/apt/lists/lock
status=0
LLMDLQ_PACKAGE_LOCK_TIMEOUT=2 install_packages llmdlq-no-such-package 2>"$work/install" || status=$?
[ "$status" -eq 75 ] || fail "install_packages exited $status, not 75"
grep -q "^error: apt-get install waited 2 s (LLMDLQ_PACKAGE_LOCK_TIMEOUT)" "$work/install" ||
  fail "no timeout message: $(cat "$work/install")"
grep -q "^  $holder (.*python3 .*) holds /var/lib/dpkg/lock-frontend$" "$work/install" ||
  fail "the holder is not named: $(cat "$work/install")"
grep -q "Unable to locate package" "$work/install" && fail "apt-get went on without the lock"

# 3. apt-get update, which apt-get itself does not let wait for its lock: tried again until the timeout.
status=0
LLMDLQ_PACKAGE_LOCK_TIMEOUT=3 apt_get update -q 2>"$work/update" || status=$?
[ "$status" -eq 75 ] || fail "apt_get update exited $status, not 75"
[ "$(grep -c "Could not get lock /var/lib/apt/lists/lock" "$work/update")" -ge 2 ] ||
  fail "apt_get update was not tried again: $(cat "$work/update")"
grep -q "^  $holder (.*python3 .*) holds /var/lib/apt/lists/lock$" "$work/update" ||
  fail "the holder is not named: $(cat "$work/update")"
stop_holder

# 4. Nobody holds it any more: nothing is named.
[ -z "$(package_lock_holders)" ] || fail "a lock let go is still named: $(package_lock_holders)"

if [ "$failures" -gt 0 ]; then
  echo "0 passed, $failures failed"
  exit 1
fi
echo "package lock: every check passed"
