#!/usr/bin/env bash
# Prints, measured in one run, the figures of the fact API against their
# baselines:
#   1. bootstrap size of each function (linux/arm64, the flags of `make
#      build`) against bench/hello built the same way (information only:
#      no target);
#   2. cold start under the Lambda Runtime Interface Emulator, process start
#      to first response, against bench/hello (linux/amd64 here; target
#      ratio ≤ 1.15), median and minimum of RUNS starts (on a busy
#      machine the minimum, least touched by other work, is the steadier
#      figure); the extractor answers
#      events/extractor-not-due.json, an SQS batch whose one record is not
#      due (decoded and checked, no AWS call);
#   3. warm in-process latency of the get-facts handler against a bare
#      GetItem on the same moto_server (Go benchmarks; target ratio ≤ 1.2).
#   2b. start-up CPU time: each bootstrap run, without a runtime API, from
#      exec to the point where lambda.Start gives up (all package
#      initialisation and the function's wiring: settings, SDK
#      configuration, clients), user + system CPU time, median of STARTS
#      runs interleaved with bench/hello (information: the target is 2.'s,
#      whose process start and runtime handshake this leaves out). CPU time
#      hardly depends on what else the machine runs, unlike 2.; with
#      BASELINE_REV=<git revision> the functions built at that revision are
#      measured in the same run (in 2. too), and the CPU time each adds to
#      its build at that revision is printed;
# It runs under scripts/with-moto.sh when no moto_server is given.
# COLD_ONLY=1 measures the start-up (2. and 2b.) alone.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${USERMEMORY_AWS_ENDPOINT:-}" ]; then exec ./scripts/with-moto.sh "$0" "$@"; fi
RUNS=${RUNS:-7}
GO=${GO:-go}
FUNCS=(getfacts putfact deletefact clearfacts eraseuser)
COLD=("${FUNCS[@]}" extractor)
work=$(mktemp -d -t bench-api.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
flags=(-tags lambda.norpc -trimpath -ldflags "-s -w")
build() { # arch out pkg
  GOOS=linux GOARCH=$1 CGO_ENABLED=0 $GO build "${flags[@]}" -o "$2" "$3"
}
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
minimum() { tr ' ' '\n' | sort -n | awk 'NF {print; exit}'; }

if [ -z "${COLD_ONLY:-}" ]; then
echo "== 1. bootstrap size, linux/arm64, -tags lambda.norpc -trimpath -ldflags \"-s -w\""
build arm64 "$work/arm64/hello" ./bench/hello
hello=$(stat -c %s "$work/arm64/hello")
printf '%-12s %10d bytes\n' hello "$hello"
for f in "${FUNCS[@]}" extractor; do
  [ -d "functions/$f" ] || continue
  build arm64 "$work/arm64/$f" "./functions/$f"
  n=$(stat -c %s "$work/arm64/$f")
  printf '%-12s %10d bytes  ratio %s\n' "$f" "$n" "$(ratio "$n" "$hello")"
done
fi

echo "== 2. cold start under the runtime emulator, linux/amd64, median of $RUNS"
$GO build -o "$work/rie" github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie
table=bench-facts-$$
curl -fsS -o /dev/null "$USERMEMORY_AWS_ENDPOINT" -H 'Content-Type: application/x-amz-json-1.0' \
  -H 'X-Amz-Target: DynamoDB_20120810.CreateTable' \
  -H 'Authorization: AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0' \
  -d "{\"TableName\":\"$table\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}"
coldstart() { # binary event → milliseconds from process start to first response
  local p q t0 t1 code pid
  p=$(freeport); q=$(freeport)
  t0=$(date +%s%N)
  # Only what Lambda sets (and the endpoint): this machine's variables, such
  # as an AWS_CA_BUNDLE that the SDK's config loader would parse at every
  # start, are not Lambda's.
  env -i PATH="$PATH" HOME="$work" TABLE_NAME="$table" AWS_ENDPOINT_URL="$USERMEMORY_AWS_ENDPOINT" AWS_REGION=us-east-1 \
    AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
    "$work/rie" --runtime-interface-emulator-address "127.0.0.1:$p" --runtime-api-address "127.0.0.1:$q" "$1" \
    >"$work/rie.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  while :; do
    code=$(curl -s -o "$work/out.json" -w '%{http_code}' -X POST \
      "http://127.0.0.1:$p/2015-03-31/functions/function/invocations" --data-binary "@$2" 2>/dev/null || true)
    [ "$code" = 200 ] && break
    kill -0 "$pid" 2>/dev/null || { echo "error: the emulator exited; its log:" >&2; cat "$work/rie.log" >&2; exit 1; }
    sleep 0.002
  done
  t1=$(date +%s%N)
  if grep -q errorMessage "$work/out.json"; then echo "error: $1 answered $(cat "$work/out.json")" >&2; exit 1; fi
  if [ -n "${3:-}" ] && ! grep -qF "$3" "$work/out.json"; then echo "error: $1 answered $(cat "$work/out.json"), want $3" >&2; exit 1; fi
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  echo $(( (t1 - t0) / 1000000 ))
}
build amd64 "$work/amd64/hello" ./bench/hello
for f in "${COLD[@]}"; do build amd64 "$work/amd64/$f" "./functions/$f"; done
# ALL is COLD and, with BASELINE_REV, the same functions built at that
# revision (named function@revision), measured in the same runs.
ALL=("${COLD[@]}")
if [ -n "${BASELINE_REV:-}" ]; then
  mkdir -p "$work/base"
  git archive "$BASELINE_REV" | tar -x -C "$work/base"
  for f in "${COLD[@]}"; do
    (cd "$work/base" && build amd64 "$work/amd64/$f@$BASELINE_REV" "./functions/$f")
    ALL+=("$f@$BASELINE_REV")
  done
fi
declare -A ev=([getfacts]=getfacts-me.json [putfact]=putfact-me.json [deletefact]=deletefact-me.json
  [clearfacts]=clearfacts-me.json [eraseuser]=eraseuser-admin.json [extractor]=extractor-not-due.json)
# What a first response must hold besides no errorMessage: the extractor
# acknowledges its one record (a failed record would mean it was not the
# not-due path the figure is about).
declare -A expect=([extractor]='"batchItemFailures":[]')
# Interleaved runs, so that a busy moment of the machine hits both alike.
declare -A ms
for _ in $(seq "$RUNS"); do
  ms[hello]+="$(coldstart "$work/amd64/hello" events/getfacts-me.json) "
  for f in "${ALL[@]}"; do ms[$f]+="$(coldstart "$work/amd64/$f" "events/${ev[${f%@*}]}" "${expect[${f%@*}]:-}") "; done
done
h=$(echo "${ms[hello]}" | median)
hmin=$(echo "${ms[hello]}" | minimum)
printf '%-12s median %4d ms, min %4d ms   (runs: %s)\n' hello "$h" "$hmin" "${ms[hello]}"
for f in "${ALL[@]}"; do
  m=$(echo "${ms[$f]}" | median)
  mmin=$(echo "${ms[$f]}" | minimum)
  printf '%-12s median %4d ms, min %4d ms   ratio median %s, min %s (target ≤ 1.15)   (runs: %s)\n' \
    "$f" "$m" "$mmin" "$(ratio "$m" "$h")" "$(ratio "$mmin" "$hmin")" "${ms[$f]}"
done

echo "== 2b. start-up CPU time to lambda.Start, linux/amd64, user+system, median of ${STARTS:-200}"
startbins=("$work/amd64/hello")
for f in "${COLD[@]}"; do startbins+=("$work/amd64/$f"); done
for f in "${ALL[@]}"; do [ "$f" = "${f%@*}" ] || startbins+=("$work/amd64/$f"); done
python3 - "${STARTS:-200}" "$table" "${startbins[@]}" <<'EOF'
import os, resource, statistics, subprocess, sys
n, table, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
# Only what Lambda sets, as in 2.
env = {"PATH": os.environ.get("PATH", ""), "TABLE_NAME": table, "AWS_REGION": "us-east-1",
       "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "HOME": "/nonexistent"}
cpu = {b: [] for b in bins}
for _ in range(n):
    for b in bins:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([b], env=env, stdin=subprocess.DEVNULL, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # Without a runtime API, lambda.Start says so and exits: a function
        # that stopped before it (a wrong setting) would measure less.
        if b"AWS_LAMBDA_RUNTIME_API" not in r.stdout + r.stderr:
            sys.exit(f"error: {b} stopped before lambda.Start: {(r.stdout + r.stderr).decode()[-400:]}")
        cpu[b].append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
med = {b: statistics.median(v) for b, v in cpu.items()}
hello = med[bins[0]]
for b in bins:
    line = f"{os.path.basename(b):<24} {med[b]:6.2f} ms CPU   ratio to hello {med[b] / hello:.2f}"
    base = [x for x in bins if os.path.basename(x).startswith(os.path.basename(b) + "@")]
    if base:
        line += f"   {med[b] - med[base[0]]:+.2f} ms against {os.path.basename(base[0])}"
    print(line)
EOF
[ -n "${COLD_ONLY:-}" ] && exit 0

echo "== 3. warm in-process latency on moto_server: get-facts handler against a bare GetItem"
out=$($GO test -run '^$' -bench 'BenchmarkGetFactsHandler$|BenchmarkBareGetItem$' -benchtime "${BENCHTIME:-3s}" -count 1 ./functions/getfacts/)
echo "$out" | grep -E '^Benchmark'
handler=$(echo "$out" | awk '/^BenchmarkGetFactsHandler/ {print $3}')
bare=$(echo "$out" | awk '/^BenchmarkBareGetItem/ {print $3}')
echo "handler/GetItem ratio $(ratio "$handler" "$bare") (target ≤ 1.2)"
