# Sourced by the example scripts: start_local_model_server SERVER [ARGS...]
# starts the local model server on a free port, sets `url` to its base URL
# once it says it listens, and `server_pid`, and stops it when the script
# exits. The line is read from a pipe: the read returns when the server
# writes it, or with nothing when the server ends first.
start_local_model_server() {
  server_dir=$(mktemp -d)
  mkfifo "$server_dir/out"
  "$@" >"$server_dir/out" &
  server_pid=$!
  trap 'kill "$server_pid" 2>/dev/null; rm -rf "$server_dir"' EXIT
  exec 3<"$server_dir/out"  # held open to the end: the server never writes to a closed pipe
  line=""
  read -r line <&3 || true
  url=${line#listening on }
  if [ -z "$line" ] || [ "$url" = "$line" ]; then
    echo "the local model server did not start" >&2
    exit 1
  fi
}
