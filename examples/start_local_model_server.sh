# Sourced by the example scripts: start_local_model_server SERVER [ARGS...]
# starts the local model server on a free port, sets `url` to its base URL
# (once it says it listens) and `server_pid`, and stops it when the script
# exits.
start_local_model_server() {
  server_out=$(mktemp)
  "$@" >"$server_out" &
  server_pid=$!
  trap 'kill "$server_pid" 2>/dev/null; rm -f "$server_out"' EXIT
  url=""
  for _ in $(seq 100); do
    url=$(sed -n 's/^listening on //p' "$server_out")
    [ -n "$url" ] && return 0
    sleep 0.1
  done
  echo "the local model server did not start" >&2
  exit 1
}
