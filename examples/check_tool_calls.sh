#!/bin/sh
# The local model server answers with tool calls, whole and streamed, as
# OpenAI does, and refuses in strict mode the tools OpenAI's strict mode
# refuses; llmdlq lowers the tools for it and judges each call the model
# makes: a forced null read as absent, a wrong type dead-lettered.
#   check_tool_calls.sh LOCAL_MODEL_SERVER LLMDLQ TOOLS MESSAGE
set -eu
server=$1 llmdlq=$2 tools=$3 message=$4
. "$(dirname "$0")/start_local_model_server.sh"
start_local_model_server "$server" --strict openai
work=$(mktemp -d)
trap 'kill "$server_pid" 2>/dev/null; rm -rf "$server_dir" "$work"' EXIT

# A chat request offering the tools in FILE ($1), streamed or not ($2); the status.
ask() {
  printf '{"model": "m", "stream": %s, "messages": [{"role": "user", "content": %s}], "tools": %s}' \
    "$2" "$(cat "$message")" "$(cat "$1")" >"$work/body"
  curl -s -o "$work/reply" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$work/body" \
    "$url/chat/completions"
}
fail() { echo "$*" >&2; exit 1; }

status=$(ask "$tools" false)
[ "$status" = 400 ] || fail "the tools as written were answered $status, not 400"
grep -q "Invalid schema" "$work/reply" || fail "not OpenAI's words: $(cat "$work/reply")"

"$llmdlq" provider-schema --provider openai --tools "$tools" |
  sed 's/.*"tools":\(.*\),"lowered":.*/\1/' >"$work/lowered"
status=$(ask "$work/lowered" false)
[ "$status" = 200 ] || fail "the lowered tools were answered $status: $(cat "$work/reply")"
tr -d '\n' <"$work/reply" >"$work/replies.jsonl"
echo >>"$work/replies.jsonl"
"$llmdlq" process --tools "$tools" --provider openai --sink "jsonl:$work/dlq.jsonl" <"$work/replies.jsonl" \
  >"$work/whole" 2>/dev/null || true

status=$(ask "$work/lowered" true)
[ "$status" = 200 ] || fail "the streamed request was answered $status"
cp "$work/reply" "$work/capture.sse"
"$llmdlq" process --tools "$tools" --provider openai --stream sse "$work/capture.sse" >"$work/streamed" 2>/dev/null ||
  true

for verdicts in "$work/whole" "$work/streamed"; do
  grep -q '"call":0,"tool":"lookup_merchant","call_id":"call_0","status":"accepted","value":{"name":"Albert Heijn"},"repairs":\[{"code":"forced_null"' "$verdicts" ||
    fail "the first call was not accepted with its forced null read as absent: $(cat "$verdicts")"
  grep -q '"call":1,"tool":"record_receipt","call_id":"call_1","status":"dead_lettered".*"category":"schema".*"instance_path":"/total"' "$verdicts" ||
    fail "the second call was not dead-lettered for its total: $(cat "$verdicts")"
done
grep -q '"dead_call":1' "$work/streamed" || fail "the stream did not die in the second call: $(cat "$work/streamed")"
grep -q '"tool_call":{"name":"record_receipt","id":"call_1","index":1}' "$work/dlq.jsonl" ||
  fail "the dead letter does not name its call: $(cat "$work/dlq.jsonl")"
echo "tools refused as written (400), taken lowered; call 0 accepted, call 1 dead-lettered, whole and streamed"
