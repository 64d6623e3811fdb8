# Starts the servers the transport tests talk to, on loopback ports in
# temporary directories, and stops them when the calling script exits.
# Source it after common.sh; then call start_test_servers.
#
# Exports, for the tests:
#   LLMDLQ_TEST_REDIS             host:port of a redis-server
#   LLMDLQ_TEST_REDIS_STOP        shell command that stops it (fault tests)
#   LLMDLQ_TEST_REDIS_START       shell command that starts it again
#   LLMDLQ_TEST_POSTGRES          libpq connection string of a PostgreSQL server
#   LLMDLQ_TEST_POSTGRES_RESTART  shell command that restarts it (fault tests)

LLMDLQ_SERVER_PACKAGES=(redis-server postgresql)
LLMDLQ_REDIS_PORT="${LLMDLQ_REDIS_PORT:-56379}"
LLMDLQ_POSTGRES_PORT="${LLMDLQ_POSTGRES_PORT:-55432}"

_llmdlq_server_dir=""
_llmdlq_as_db_user=()

# The PostgreSQL binaries of the installed major version.
_postgres_bin() {
  local dir
  dir=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1)
  [ -n "$dir" ] || { echo "error: no PostgreSQL binaries under /usr/lib/postgresql" >&2; return 1; }
  echo "$dir"
}

stop_test_servers() {
  [ -n "$_llmdlq_server_dir" ] || return 0
  if [ -f "$_llmdlq_server_dir/redis.pid" ]; then
    kill "$(cat "$_llmdlq_server_dir/redis.pid")" 2>/dev/null || true
  fi
  if [ -f "$_llmdlq_server_dir/pg/postmaster.pid" ]; then
    "${_llmdlq_as_db_user[@]}" "$(_postgres_bin)/pg_ctl" -D "$_llmdlq_server_dir/pg" -m immediate stop \
      >/dev/null 2>&1 || true
  fi
  rm -rf "$_llmdlq_server_dir"
  _llmdlq_server_dir=""
}

start_test_servers() {
  install_packages "${LLMDLQ_SERVER_PACKAGES[@]}"
  _llmdlq_server_dir=$(mktemp -d /tmp/llmdlq-servers.XXXXXX)
  chmod 755 "$_llmdlq_server_dir"
  trap stop_test_servers EXIT

  # Redis: no persistence to disk beyond the test; started in the background.
  local redis_args=(--port "$LLMDLQ_REDIS_PORT" --bind 127.0.0.1 --dir "$_llmdlq_server_dir"
    --daemonize yes --pidfile "$_llmdlq_server_dir/redis.pid" --logfile "$_llmdlq_server_dir/redis.log"
    --save "" --appendonly yes --appendfsync always)
  log "starting redis-server on 127.0.0.1:$LLMDLQ_REDIS_PORT"
  redis-server "${redis_args[@]}"
  local i
  for i in $(seq 50); do
    redis-cli -p "$LLMDLQ_REDIS_PORT" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  export LLMDLQ_TEST_REDIS="127.0.0.1:$LLMDLQ_REDIS_PORT"
  export LLMDLQ_TEST_REDIS_STOP="redis-cli -p $LLMDLQ_REDIS_PORT shutdown nosave >/dev/null 2>&1; sleep 0.2"
  LLMDLQ_TEST_REDIS_START="$(printf '%q ' redis-server "${redis_args[@]}")&& sleep 0.3"
  export LLMDLQ_TEST_REDIS_START

  # PostgreSQL refuses to run as root: as root, its cluster belongs to the
  # unprivileged user the Debian package creates.
  local bin pg=$_llmdlq_server_dir/pg
  bin=$(_postgres_bin)
  if [ "$(id -u)" -eq 0 ]; then
    _llmdlq_as_db_user=(runuser -u postgres --)
    mkdir -p "$pg" && chown postgres "$pg"
  fi
  # Tests kill clients and restart the server, never the machine: what a
  # commit wrote survives in the page cache, and fsync would only cost time
  # (the fault run commits every letter on its own).
  log "starting PostgreSQL on 127.0.0.1:$LLMDLQ_POSTGRES_PORT"
  "${_llmdlq_as_db_user[@]}" "$bin/initdb" -D "$pg" -A trust -U llmdlq -E UTF8 --no-locale >/dev/null
  "${_llmdlq_as_db_user[@]}" "$bin/pg_ctl" -D "$pg" -l "$pg/server.log" -w \
    -o "-p $LLMDLQ_POSTGRES_PORT -k $pg -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
  export LLMDLQ_TEST_POSTGRES="host=127.0.0.1 port=$LLMDLQ_POSTGRES_PORT user=llmdlq dbname=postgres connect_timeout=5"
  export LLMDLQ_TEST_POSTGRES_RESTART="${_llmdlq_as_db_user[*]} $bin/pg_ctl -D $pg -w -m fast restart >/dev/null"
}
