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

# install_packages PKG...: installs those that are missing with apt-get
# (as root, or through sudo), running apt-get update first only when needed.
install_packages() {
  local missing=()
  local package
  for package in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then
      sudo=(sudo)
    else
      echo "error: missing packages (${missing[*]}) and not root: install them or run as root" >&2
      return 1
    fi
  fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; then
    "${sudo[@]}" apt-get update -q >/dev/null
    "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
}
