#!/usr/bin/env bash
# Runs a command with one moto_server (DynamoDB and SQS) started on a free
# 127.0.0.1 port for it, its endpoint in USERMEMORY_AWS_ENDPOINT, and stops
# the server afterwards, whatever the command's outcome.
set -euo pipefail
# moto_server is looked for where the local stack looks (internal/motoserver):
# USERMEMORY_MOTO_SERVER, then PATH, then the virtual environment of make setup.
venv="${XDG_DATA_HOME:-$HOME/.local/share}/usermemory/venv"
moto="${USERMEMORY_MOTO_SERVER:-}"
if [ -z "$moto" ]; then
  if command -v moto_server >/dev/null 2>&1; then moto=moto_server
  elif [ -x "$venv/bin/moto_server" ]; then moto="$venv/bin/moto_server"; fi
fi
if [ -z "$moto" ] || ! command -v "$moto" >/dev/null 2>&1; then
  echo "error: moto_server is not installed (not on PATH, not in $venv/bin, and USERMEMORY_MOTO_SERVER is not set): install it with \`make setup\`" >&2
  exit 2
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
log=$(mktemp -t moto.XXXXXX.log)
"$moto" -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
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
