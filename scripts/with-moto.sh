#!/usr/bin/env bash
# Runs a command with one moto_server (DynamoDB and SQS) started on a free
# 127.0.0.1 port for it, its endpoint in USERMEMORY_AWS_ENDPOINT, and stops
# the server afterwards, whatever the command's outcome.
set -euo pipefail
if ! command -v moto_server >/dev/null 2>&1; then
  echo "error: moto_server is not on PATH; install it with: python3 -m pip install 'moto[server]==5.2.1'" >&2
  exit 2
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
log=$(mktemp -t moto.XXXXXX.log)
moto_server -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
ready=
for _ in $(seq 1 300); do
  if python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "http://127.0.0.1:$port/moto-api/" >/dev/null 2>&1; then ready=1; break; fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "error: moto_server exited at start; its log:" >&2; cat "$log" >&2; exit 2; fi
  sleep 0.1
done
if [ -z "$ready" ]; then echo "error: moto_server did not answer on port $port within 30 s; its log:" >&2; cat "$log" >&2; exit 2; fi
export USERMEMORY_AWS_ENDPOINT="http://127.0.0.1:$port"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
"$@"
