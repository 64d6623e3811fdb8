# Shared by scripts/test, scripts/demo and scripts/bench: installs missing
# Debian packages and knows the project's paths. Source it; do not run it.

LLMDLQ_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LLMDLQ_JOBS="${LLMDLQ_JOBS:-2}"

# Packages every build needs.
LLMDLQ_BUILD_PACKAGES=(
  g++ cmake make pkg-config
  libsimdjson-dev libboost-json1.81-dev libboost1.81-dev libfmt-dev libpcre2-dev libssl-dev
  libsqlite3-dev librdkafka-dev libhiredis-dev libpq-dev libcurl4-openssl-dev libcpp-httplib-dev libsodium-dev
)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# How long an apt-get waits for another package installation (apt,
# unattended-upgrades, a first boot's set-up) to let go of the package
# manager's locks before it gives up and says which process held them.
LLMDLQ_PACKAGE_LOCK_TIMEOUT="${LLMDLQ_PACKAGE_LOCK_TIMEOUT:-600}"

# The locks apt-get and dpkg take, each an fcntl lock on its file.
LLMDLQ_PACKAGE_LOCKS=(/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock
                      /var/cache/apt/archives/lock)

# package_lock_holders: "PID (COMMAND LINE) holds LOCK", one line for each
# process holding one of the package manager's locks, read from /proc/locks
# (no fuser or lsof needed); nothing when none is held.
package_lock_holders() {
  local lock inode line pid device command
  for lock in "${LLMDLQ_PACKAGE_LOCKS[@]}"; do
    inode=$(stat -c %i "$lock" 2>/dev/null) || continue
    while read -r line; do
      # "1: POSIX  ADVISORY  WRITE PID MAJOR:MINOR:INODE START END"; a waiter's line has "->" after the number.
      set -- $line
      [ $# -ge 6 ] || continue  # a line /proc/locks gave while it changed
      [ "$2" = "->" ] && continue
      pid=$5 device=$6
      [ "${device##*:}" = "$inode" ] && [ "$pid" -gt 0 ] 2>/dev/null || continue
      command=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || command=""
      echo "$pid (${command% }) holds $lock"
    done </proc/locks
  done
}

# apt_get ARGS...: apt-get ARGS, its output dropped but for its messages.
# While another process holds the package manager's lock it waits, up to
# LLMDLQ_PACKAGE_LOCK_TIMEOUT seconds: apt-get's own DPkg::Lock::Timeout for
# the dpkg lock, and for the lock `apt-get update` takes (which apt-get does
# not wait for) a try every few seconds. Then it fails with status 75 and
# says which process held the lock.
apt_get() {
  local deadline=$((SECONDS + LLMDLQ_PACKAGE_LOCK_TIMEOUT))
  local run=() errors left statuses status holders said=""
  [ "$(id -u)" -eq 0 ] || run=(sudo)
  errors=$(mktemp)
  while :; do
    left=$((deadline - SECONDS))
    [ "$left" -gt 0 ] || left=0
    holders=$(package_lock_holders)
    if [ -n "$holders" ] && [ -z "$said" ] && [ "$left" -gt 0 ]; then
      echo "apt-get $1 waits up to $left s for the package manager's lock:" >&2
      sed 's/^/  /' <<<"$holders" >&2
      said=yes
    fi
    # Its errors are shown as they come and kept for the test below.
    "${run[@]}" apt-get -o DPkg::Lock::Timeout="$left" "$@" 2>&1 >/dev/null | tee "$errors" >&2 &&
      statuses=("${PIPESTATUS[@]}") || statuses=("${PIPESTATUS[@]}")
    status=${statuses[0]}
    if [ "$status" -eq 0 ] || ! grep -q "Could not get lock\|Unable to acquire the dpkg frontend lock\|Unable to lock" "$errors"; then
      rm -f "$errors"
      return "$status"
    fi
    [ "$SECONDS" -lt "$deadline" ] || break
    sleep 2
  done
  rm -f "$errors"
  holders=$(package_lock_holders)
  echo "error: apt-get $1 waited ${LLMDLQ_PACKAGE_LOCK_TIMEOUT} s (LLMDLQ_PACKAGE_LOCK_TIMEOUT) for the package" \
       "manager's lock, which another package installation held:" >&2
  if [ -n "$holders" ]; then
    sed 's/^/  /' <<<"$holders" >&2
    echo "let it finish (or stop it), then run this again" >&2
  else
    echo "  it has let go since: run this again" >&2
  fi
  return 75
}

# install_packages PKG...: installs those that are missing with apt-get
# (as root, or through sudo), running apt-get update first only when needed.
# Another package installation running meanwhile is waited for (apt_get).
install_packages() {
  local missing=()
  local package
  for package in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null; then
    echo "error: missing packages (${missing[*]}) and not root: install them or run as root" >&2
    return 1
  fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local status=0
  apt_get install -y -q --no-install-recommends "${missing[@]}" || status=$?
  # Only a package list that may be out of date is worth an update; a lock still held is not.
  if [ "$status" -ne 0 ] && [ "$status" -ne 75 ]; then
    status=0
    apt_get update -q && apt_get install -y -q --no-install-recommends "${missing[@]}" || status=$?
  fi
  return "$status"
}
