#!/bin/sh
# Runs streamed_batch against a local model server of its own, stopped after.
#   run_streamed_batch.sh LOCAL_MODEL_SERVER STREAMED_BATCH DATA_DIR DLQ_PATH
set -eu
server=$1 batch=$2 data=$3 dlq=$4
rm -f "$dlq" "$dlq-wal" "$dlq-shm"
out=$(mktemp)
"$server" >"$out" &
pid=$!
trap 'kill "$pid" 2>/dev/null; rm -f "$out"' EXIT
url=""
for _ in $(seq 100); do
  url=$(sed -n 's/^listening on //p' "$out")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "the local model server did not start" >&2; exit 1; }
"$batch" "$url" "$data/receipt.schema.json" "$data/responses.jsonl" "$dlq"
