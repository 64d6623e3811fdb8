#!/bin/sh
# The local model server in strict mode refuses, as OpenAI does, a schema
# OpenAI's strict mode refuses, and takes the same schema lowered for it.
#   check_strict_server.sh LOCAL_MODEL_SERVER LLMDLQ SCHEMA
set -eu
server=$1 llmdlq=$2 schema=$3
. "$(dirname "$0")/start_local_model_server.sh"
start_local_model_server "$server" --strict openai
body=$(mktemp) lowered=$(mktemp) reply=$(mktemp)
trap 'kill "$server_pid" 2>/dev/null; rm -rf "$server_dir" "$body" "$lowered" "$reply"' EXIT

# A chat request whose response_format holds the schema in FILE, strict.
ask() {
  printf '{"model": "m", "messages": [{"role": "user", "content": "answer verbatim:\\n{}"}], "response_format": {"type": "json_schema", "json_schema": {"name": "response", "strict": true, "schema": %s}}}' "$(cat "$1")" >"$body"
  curl -s -o "$reply" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$body" "$url/chat/completions"
}

status=$(ask "$schema")
[ "$status" = 400 ] || { echo "the schema as written was answered $status, not 400" >&2; exit 1; }
grep -q '"param":"response_format"' "$reply" || { echo "not OpenAI's error body: $(cat "$reply")" >&2; exit 1; }
grep -q "Invalid schema for response_format" "$reply" || { echo "not OpenAI's words: $(cat "$reply")" >&2; exit 1; }

"$llmdlq" provider-schema --provider openai --schema "$schema" | sed 's/.*"schema":\(.*\),"changes":.*/\1/' >"$lowered"
status=$(ask "$lowered")
[ "$status" = 200 ] || { echo "the lowered schema was answered $status: $(cat "$reply")" >&2; exit 1; }
echo "refused as written (400, OpenAI's body), taken lowered (200)"
