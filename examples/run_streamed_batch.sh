#!/bin/sh
# Runs streamed_batch against a local model server of its own, stopped after.
#   run_streamed_batch.sh LOCAL_MODEL_SERVER STREAMED_BATCH DATA_DIR DLQ_PATH
set -eu
. "$(dirname "$0")/start_local_model_server.sh"
server=$1 batch=$2 data=$3 dlq=$4
rm -f "$dlq" "$dlq-wal" "$dlq-shm"
start_local_model_server "$server"
"$batch" "$url" "$data/receipt.schema.json" "$data/responses.jsonl" "$dlq"
